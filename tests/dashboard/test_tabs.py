"""The tab registry: one entry per view, and everything that names a tab follows it."""

import pytest

from dashboard.app import NoiseLab
from dashboard.tabs import REGISTRY, tab_index, view_class
from dashboard.tour import PRESET_NOTES, PRESETS, TABS, TOUR
from dashboard.views.base import BaseView


def test_one_entry_per_view_in_tab_order():
    names = [tab.name for tab in REGISTRY]
    assert len(set(names)) == len(names)
    assert TABS == tuple(tab.label for tab in REGISTRY)
    assert [tab_index(name) for name in names] == list(range(len(REGISTRY)))
    classes = [view_class(tab) for tab in REGISTRY]
    assert all(issubclass(cls, BaseView) for cls in classes)
    assert NoiseLab.VIEW_CLASSES == tuple(classes)
    with pytest.raises(KeyError, match="no tab is called"):
        tab_index("nowhere")


def test_tour_and_presets_name_existing_tabs():
    assert {step.tab for step in TOUR} <= set(range(len(REGISTRY)))
    assert {tab for tab, _ in PRESETS.values()} <= set(range(len(REGISTRY)))
    assert TABS[TOUR[4].tab] == "Low-privacy noise" and TABS[PRESETS["RAT at a low epsilon"][0]] == "RAT stopping"
    assert list(PRESET_NOTES) == list(PRESETS)  # every preset's note, in the box's order
