"""Text from outside (page addresses, file names, CSV headers and cells, error messages quoting them)
made safe for the app's Markdown panes: shown as the characters it holds, never rendered as markup."""

from __future__ import annotations

import html
import re

__all__ = ["plain"]

# ASCII punctuation Markdown may act on; < > & " ' are left to html.escape
_MARKDOWN = re.compile(r"([\\`*_\[\]()!|~#$+\-{}.:=^])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def plain(value, *, limit: int | None = None) -> str:
    """``value`` as text for a Markdown pane: control characters and line breaks become one space,
    Markdown punctuation is backslash-escaped and HTML is escaped, so a Markdown or HTML pane shows
    exactly these characters. With ``limit``, text longer than ``limit`` characters is cut and ends
    in "...".

    Parameters
    ----------
    value : object
        Anything; ``str(value)`` is shown (bytes are decoded as UTF-8, bad bytes replaced).
    limit : int, optional
        Characters kept at most, at least 1 (default: all).

    Returns
    -------
    str
        Markdown source that renders as the text.

    Raises
    ------
    ValueError
        If ``limit`` is not a positive whole number.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be None or a positive whole number, got {limit!r}")
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
    else:
        text = str(value)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "..."
    text = _CONTROL.sub(" ", text)
    return html.escape(_MARKDOWN.sub(r"\\\1", text), quote=True)
