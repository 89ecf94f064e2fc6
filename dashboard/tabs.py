"""The lab's tabs in order, by name: adding a view is one entry in ``REGISTRY``.

UI-free (the tour and presets name their tab from here): a view class is named by its import path
and imported by the app (``view_class``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["REGISTRY", "Tab", "tab_index", "view_class"]


@dataclass(frozen=True, slots=True)
class Tab:
    """One tab: its name (used in code), its label (on screen) and its view, ``"module:Class"``."""

    name: str
    label: str
    view: str
    uses: frozenset = frozenset()  # the sidebar's settings that change this tab


REGISTRY = (
    Tab(
        "rewind",
        "Brownian rewind",
        "dashboard.views.rewind:RewindView",
        frozenset({"epsilon", "delta", "rho", "target", "sensitivity", "dim", "seed", "example"}),
    ),
    Tab(
        "boundaries",
        "Privacy boundaries",
        "dashboard.views.boundaries:BoundaryView",
        frozenset({"epsilon", "delta", "rho", "sensitivity", "seed"}),
    ),
    Tab("noise", "Low-privacy noise", "dashboard.views.noise:NoiseView", frozenset({"epsilon", "sensitivity"})),
    Tab("rat", "RAT stopping", "dashboard.views.rat:RatView", frozenset({"epsilon", "delta", "rho", "seed"})),
    Tab("experiments", "Experiments", "dashboard.views.experiments:ExperimentsView", frozenset({"delta", "seed"})),
)


def tab_index(name: str) -> int:
    """The position of the tab called ``name``."""
    for index, tab in enumerate(REGISTRY):
        if tab.name == name:
            return index
    raise KeyError(f"no tab is called {name!r}; the tabs are {', '.join(t.name for t in REGISTRY)}")


def view_class(tab: Tab) -> type:
    """The view class of ``tab`` (imports its module: the views need Panel)."""
    module, _, name = tab.view.partition(":")
    cls: type = getattr(importlib.import_module(module), name)
    return cls
