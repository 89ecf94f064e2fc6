"""Links reproduce the demo (issue 22): the page's own state in the address, values in their
shortest exact form, defaults left out; the rewind's legend and the RAT legend stay truthful."""

import pytest

from dashboard.app import VIEW_KEYS, NoiseLab, address_value, link_values, split_link_values
from dashboard.models import Settings
from dashboard.tabs import tab_index
from dashboard.widgets import LogSlider


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (50.0, "50"),
        (49.99999999999999, "50"),
        (0.30000000000000004, "0.3"),
        (1e-06, "1e-06"),
        (2, "2"),
        (True, "true"),
        ("rat", "rat"),
        ((0.16, 5.0), "[0.16,5]"),
        (None, "null"),
    ],
)
def test_address_values_are_short_and_exact(value, text):
    assert address_value(value) == text


def test_slider_end_gives_a_short_value():
    settings = Settings()
    slider = LogSlider(settings, "epsilon", "epsilon")
    slider.slider.value = slider.slider.end
    assert settings.epsilon == 50 and address_value(settings.epsilon) == "50"
    slider.slider.value = 0.3  # 10**0.3 = 1.995...: the label's three digits
    assert settings.epsilon == 2.0


def test_a_value_set_elsewhere_stays_exact():
    settings = Settings()
    LogSlider(settings, "epsilon", "epsilon")
    settings.epsilon = 1.2345
    assert settings.epsilon == 1.2345


def test_the_page_state_round_trips_through_a_link():
    lab = NoiseLab()
    assert lab.link_state() == {}  # defaults: nothing to write
    lab.tabs.active = 3
    lab.rewind.show_frame(41)
    lab.experiment_config.param.update(task="mean", trials=250, levels=(0.3, 8.0), count=20, target=0.5)
    state = lab.link_state()
    assert state == {
        "tab": 3,
        "release": 42,
        "experiments.task": "mean",
        "experiments.trials": 250,
        "experiments.levels": (0.3, 8.0),
        "experiments.count": 20,
        "experiments.target": 0.5,
    }
    arguments = {VIEW_KEYS[n]: [address_value(v).encode()] for n, v in state.items()}
    values, refused = link_values(arguments)
    assert refused == {}
    settings_values, own = split_link_values(values)
    assert settings_values == {}
    other = NoiseLab()
    assert other.apply_link_state(own) == {}
    assert other.link_state() == state
    assert other.rewind.frame.value == 41
    # a bare address restores every default
    assert other.apply_link_state({}, complete=True) == {}
    assert other.link_state() == {}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tab", 7),
        ("tab", True),
        ("release", 0),
        ("release", 500),
        ("experiments.task", "x"),
        ("experiments.trials", 3),
        ("experiments.levels", [9, 1]),
        ("experiments.source", "upload"),
        ("experiments.unrun", 2),
    ],
)
def test_bad_page_values_are_named(name, value):
    lab = NoiseLab()
    refused = lab.apply_link_state({name: value})
    assert set(refused) == {VIEW_KEYS[name]} and refused[VIEW_KEYS[name]].startswith("must be")
    assert lab.link_state() == {}


def test_the_rewind_marker_is_drawn_with_the_legend():
    """A renderer on Bokeh's overlay level repainted alone and wiped the legend's symbols."""
    lab = NoiseLab()
    view = lab.rewind
    for fig in (view.fig_line, view.fig_plane):
        assert all(getattr(r, "level", "glyph") != "overlay" for r in fig.renderers)


def test_the_rat_legend_lists_only_the_drawn_halt():
    lab = NoiseLab()
    view = lab.rat
    view.update_run()
    items = {item.label.value: item for item in view.fig_rounds.legend[0].items}
    false_halt = bool(view.run.false_halt)
    assert items["false halt"].visible == false_halt
    assert items["halt within target"].visible == (not false_halt and bool(view.run.stop_round))


def test_every_export_opens_with_the_version_and_the_settings():
    lab = NoiseLab()
    lab.settings.epsilon = 2.5
    for view in (lab.rewind, lab.noise, lab.rat):
        view.set_active(True, now=True)
        text = view._csv_file().read()
        lines = text.splitlines()
        assert lines[0].startswith("# noiselab ") and view.title in lines[0]
        assert lines[1].startswith("# settings: ") and "epsilon=2.5" in lines[1]
        data = [line for line in lines if not line.startswith("#")]
        assert data[0] == view.csv_text().splitlines()[0]  # then the table, as before
    assert "# table: noise,mean_abs,variance" in lab.noise._csv_file().read()


def test_the_rat_export_holds_the_whole_study():
    lab = NoiseLab()
    view = lab.rat
    view.set_active(True, now=True)
    view.update_study()
    from dashboard.views.rat import cached_study

    s = lab.settings
    view.study = cached_study(epsilon=s.epsilon, delta=s.delta, rho=s.rho, rng=s.seed)
    lines = [line for line in view._study_csv().read().splitlines() if not line.startswith("#")]
    header = lines[0].split(",")
    assert header[0] == "run" and len(header) == 10
    assert len(lines) - 1 == len(view.study.stop_rounds["RAT"]) >= 1000


def test_save_is_on_every_toolbar_without_the_overflow_menu():
    """Bokeh shows four tools and folds the rest into a menu, where save was hidden."""
    from dashboard.views.base import save_tools

    lab = NoiseLab()
    for view in lab.views:
        for fig in view.figures:
            assert len(fig.toolbar.tools) <= 4 and len(save_tools(fig)) == 1, fig


@pytest.mark.parametrize(
    ("query", "expected"),
    [({"big": [b"1"]}, True), ({"big": [b"true"]}, True), ({"big": [b"0"]}, False), ({"present": [b"1"]}, True)],
)
def test_the_switches_take_one_and_zero_as_a_person_types_them(query, expected):
    """``?big=1`` was refused as "not a boolean" while ``?present=1`` worked."""
    values, refused = link_values(query)
    assert refused == {} and list(values.values()) == [expected]
    assert all(isinstance(value, bool) for value in values.values())
    assert Settings().apply_values(values) == {}


def test_an_experiments_link_names_a_run_that_was_made_or_opens_without_running():
    """An Experiments link carried settings that were never run, so the receiver auto-ran something else
    than the sender's plots (issue 43): settings changed since the run shown (its own, the data, or the
    sidebar's delta and seed) add ``notrun=1``; such a link opens the tab without running, saying so."""
    lab = NoiseLab()
    lab.tabs.active = tab_index("experiments")
    view = lab.experiments
    view.start()  # without a server the run ends at once
    assert view.result is not None and "experiments.unrun" not in lab.link_state()
    for change in ({"trials": 250}, {"seed": 7}, {"delta": 1e-3}):
        model = lab.settings if "trials" not in change else lab.experiment_config
        before = {name: getattr(model, name) for name in change}
        model.param.update(change)
        state = lab.link_state()
        assert state["experiments.unrun"] is True, change
        assert "Press Run" in view.status.object
        model.param.update(before)  # back to the run shown: nothing to say
        assert "experiments.unrun" not in lab.link_state(), change
    lab.experiment_config.trials = 250
    view.start()
    assert "experiments.unrun" not in lab.link_state() and lab.link_state()["experiments.trials"] == 250

    lab.experiment_config.count = 20
    arguments = {VIEW_KEYS[n]: [address_value(v).encode()] for n, v in lab.link_state().items()}
    for written in (b"true", b"1"):  # the address writes 1; a hand-typed true means the same
        values, refused = link_values({**arguments, "notrun": [written]})
        assert refused == {} and values["experiments.unrun"] is True
    receiver = NoiseLab()
    assert receiver.apply_link_state(split_link_values(values)[1]) == {}
    opened = receiver.experiments
    assert opened.result is None
    assert "came from a link" in opened.status.object and "Press Run" in opened.status.object
    assert receiver.link_state() == lab.link_state()  # the receiver's own link says the same
    opened.start()
    assert opened.result is not None and "experiments.unrun" not in receiver.link_state()
    assert receiver.experiment_config.count == 20 and receiver.experiment_config.trials == 250


def test_a_link_from_a_page_with_an_uploaded_file_runs_nothing():
    """The file cannot travel in a link: the receiver would have run the synthetic data instead."""
    lab = NoiseLab()
    lab.tabs.active = tab_index("experiments")
    lab.experiments.accept_upload(b"a,b,label\n1,2,0\n3,4,1\n", "mine.csv", ["a", "b", "label"])
    state = lab.link_state()
    assert state.get("experiments.unrun") is True and "experiments.source" not in state
