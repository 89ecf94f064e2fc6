"""The app's text panes: Markdown that the browser never typesets as maths.

Panel's ``Markdown`` (and ``Alert``, built on it) takes ``disable_math`` but never sends it to the
browser (Panel 1.9.4 and 1.10.0 map it to no model property), so its model keeps Bokeh's default
``disable_math=False`` and MathJax typesets ``\\(...\\)``, ``\\[...\\]`` and ``$$...$$`` in the rendered
text: text from outside (an address key, a file name), escaped for HTML and Markdown, could still carry
MathJax's ``\\href{javascript:...}{...}`` as a live link. These subclasses send it; formulas have their
own LaTeX panes. Related upstream: holoviz/panel#2847 (which added the option); no issue found for the
mapping.
"""

from __future__ import annotations

from typing import ClassVar

import panel as pn

__all__ = ["Text", "TextAlert"]

_SEND_DISABLE_MATH: dict[str, str | None] = {"disable_math": "disable_math"}


# text in select and number boxes follows the page's type size (the browser's own 13.3 px for form controls
# ignored Large type): 13.3 px at Bokeh's 12 px, 16.7 px at Large type's 15 px
CONTROL_TEXT_CSS = "select, input { font-size: calc(var(--bokeh-font-size, 12px) * 1.111); }"


class Text(pn.pane.Markdown):
    """Markdown whose ``disable_math`` (True here) reaches the browser."""

    _rename: ClassVar[dict[str, str | None]] = _SEND_DISABLE_MATH

    def __init__(self, object=None, **params):
        params.setdefault("disable_math", True)
        super().__init__(object, **params)


class TextAlert(pn.pane.Alert):
    """An alert (Markdown in a coloured box) whose ``disable_math`` (True here) reaches the browser."""

    _rename: ClassVar[dict[str, str | None]] = _SEND_DISABLE_MATH

    def __init__(self, object=None, **params):
        params.setdefault("disable_math", True)
        super().__init__(object, **params)
