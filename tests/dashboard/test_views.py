"""Tier 2: models and views in plain pytest, asserted on the Bokeh data sources."""

import itertools
import math
import weakref
from types import SimpleNamespace

import numpy as np
import panel as pn
import param
import pytest
from bokeh.document import Document
from bokeh.events import DocumentReady
from bokeh.models import ColumnDataSource

from dashboard.app import NoiseLab, create_app
from dashboard.models import DEFAULTS, Settings
from dashboard.widgets import CheckedInput, LogSlider, allowed_range


@pytest.fixture(scope="module")
def lab():
    return NoiseLab()


def sources(view):
    return [v for v in vars(view).values() if isinstance(v, ColumnDataSource)] + [
        s for v in vars(view).values() if isinstance(v, dict) for s in v.values() if isinstance(s, ColumnDataSource)
    ]


def assert_clean(view):
    assert not view.alert.visible, view.alert.object
    filled = 0
    for src in sources(view):
        for column, values in src.data.items():
            if len(values) and not isinstance(values[0], (list, np.ndarray, str)):
                arr = np.asarray(values, dtype=float)
                assert np.all(np.isfinite(arr)), (view.title, column)
                filled += 1
    assert filled >= 3, view.title


def show(lab, view):
    lab.tabs.active = lab.views.index(view)


@pytest.mark.sweep
def test_all_views_render_clean(lab):
    for view in lab.views:
        show(lab, view)
        assert_clean(view)
        texts = [view.headline.object]
        texts.append(
            view.table.object
            if view in (lab.noise, lab.experiments)
            else view.stop_readout.object
            if view is lab.rewind
            else view.readout.object
        )
        for text in texts:
            assert text and "nan" not in text.lower()


def test_epsilon_moves_the_boundary_curves():
    lab = NoiseLab()
    show(lab, lab.boundaries)
    before = np.array(lab.boundaries.src_psi.data["linear"])
    lab.settings.epsilon = 3.0
    after = np.array(lab.boundaries.src_psi.data["linear"])
    assert not np.allclose(before, after)
    marks = lab.boundaries.src_marks.data
    assert marks["eps"] == [3.0, 3.0]


def test_rewind_follows_settings_and_frames():
    lab = NoiseLab()
    view = lab.rewind
    path_before = np.array(view.src_path.data["x"])
    lab.settings.seed = 7
    assert not np.allclose(path_before, view.src_path.data["x"])
    first = dict(view.src_now.data)
    view.show_frame(60)
    assert view.frame.value == 60
    assert view.src_now.data["t"][0] < first["t"][0]
    assert view.src_now.data["t"][0] == pytest.approx(view.scenario.frame_times[60])

    def plane_shown():  # the plane is on the page only while d = 2 (hidden, Bokeh warns about its ranges)
        # placed as its block: the description, the figure, the table toggle and the table
        return any(
            getattr(block[1], "object", None) is view._fig_plane
            for block in view.walk_pane.objects
            if isinstance(block, pn.Column)
        )

    assert view.fig_line.visible and view._fig_plane is None  # built when d = 2 is first chosen
    lab.settings.dim = 2
    assert plane_shown() and not view.fig_line.visible
    assert np.any(np.array(view.src_path.data["y"]) != 0)
    lab.settings.dim = 1
    assert view.fig_line.visible and not plane_shown()
    lab.settings.dim = 2
    assert plane_shown() and len(view.walk_pane.objects) == 2


def test_the_peek_counter_example_is_drawn_when_first_chosen_where_it_always_was():
    """A page that never peeks carries none of the counter-example's models; the first peek draws it
    once, under the stop star and the current release and in the legend's order it had when drawn with
    the figure; another rule hides its legend entries and a second peek adds nothing."""
    lab = NoiseLab()
    view = lab.rewind
    fig = view.fig_line
    doc = Document()
    doc.add_root(fig)
    before = len(doc.models)
    assert view.src_neighbour_truth not in doc.models and view.src_neighbour not in doc.models
    lab.settings.stop_rule = "peek"
    labels = [item.label.value for item in fig.legend[0].items]
    truth, stop = view._neighbour_items
    assert labels.index(truth) < labels.index("stop") < labels.index(stop) < labels.index("current release")
    order = [getattr(r, "data_source", None) for r in fig.renderers]
    assert order.index(view.src_neighbour_truth) < order.index(view.src_stop) < order.index(view.src_neighbour)
    assert order.index(view.src_neighbour) < order.index(view.src_now)
    assert len(view.src_neighbour_truth.data["t"]) == 2 and len(doc.models) - before >= 14
    renderers = len(fig.renderers)
    assert not {item.label.value: item.visible for item in fig.legend[0].items}["public cut-off"]  # not drawn
    lab.settings.stop_rule = "decide"
    shown = {item.label.value: item.visible for item in fig.legend[0].items}
    assert not shown[truth] and not shown[stop] and shown["stop"] and shown["public cut-off"]
    lab.settings.stop_rule = "peek"
    assert len(fig.renderers) == renderers
    assert all(item.visible for item in fig.legend[0].items if item.label.value in (truth, stop))


@pytest.mark.sweep
def test_heavy_views_refresh_on_commit_only():
    lab = NoiseLab()
    show(lab, lab.rat)
    study_before, run_before = lab.rat.study, lab.rat.run
    lab.settings.epsilon = 2.0  # a drag: the run follows, the study waits
    assert lab.rat.run is not run_before
    assert lab.rat.study is study_before
    lab.settings.param.trigger("committed")
    assert lab.rat.study is not study_before
    assert lab.rat.study.epsilons[-1] == pytest.approx(2.0)
    lab.settings.epsilon = 1.0
    lab.settings.param.trigger("committed")
    assert lab.rat.study is study_before  # deterministic results are cached, keyed by their inputs


@pytest.mark.sweep
def test_noise_view_arete_sources():
    lab = NoiseLab()
    show(lab, lab.noise)
    s = lab.settings
    s.param.update(epsilon=6.0)
    s.arete_source = "local-search"
    assert lab.noise.comparison.certified["Arete"] == pytest.approx(5.99966, abs=5e-6)
    assert "worst-case epsilon" in lab.noise.table.object
    s.arete_source = "manual"
    assert lab.noise.manual.visible
    s.alpha = 0.5
    assert lab.noise.comparison.arete.alpha == 0.5
    profile = lab.noise.src_profile["Staircase"].data["loss"]
    assert profile[4] == pytest.approx(6.0)  # distance 1: exactly epsilon


def test_log_slider_two_way():
    settings = Settings()
    slider = LogSlider(settings, "rho", "rho")
    commits = []
    settings.param.watch(lambda e: commits.append(e), "committed")
    slider.slider._process_events({"value": 2.0})  # as the browser does while dragging
    assert settings.rho == pytest.approx(100.0)
    assert not commits
    with param.edit_constant(slider.slider):  # as the browser does on release
        slider.slider.value_throttled = 2.0
    assert len(commits) == 1
    settings.rho = 0.01
    assert slider.slider.value == pytest.approx(-2.0)
    assert len(commits) == 1  # following the model is no release (Panel 1.10 syncs value_throttled)


@pytest.mark.parametrize(
    ("name", "typed", "message"),
    [
        ("alpha", 5.0, "alpha must be between 0.0001 and 1; still using 0.0756"),
        ("seed", -5, "seed must be between 0 and 2,147,483,647; still using 0"),
        ("users", 1, "users must be between 2 and 100,000; still using 100"),
        ("seed", None, "seed must be between 0 and 2,147,483,647; still using 0"),
    ],
)
def test_an_invalid_number_is_flagged_at_its_box_with_the_allowed_range(name, typed, message):
    """Issue 22: alpha = 5 or seed = -5 stayed in its box and was silently ignored."""
    settings = Settings()
    before = getattr(settings, name)
    box = CheckedInput(settings, name, label=name)
    box.input._process_events({"value": typed})  # as the browser sends a typed value
    assert getattr(settings, name) == before  # not used
    assert box.invalid and box.input.css_classes == ["noiselab-invalid"]
    assert box.flag.object == message
    assert box.input.value == typed  # what was typed stays, flagged
    good = {"alpha": 0.5, "seed": 7, "users": 50}[name]
    box.input._process_events({"value": good})
    assert getattr(settings, name) == good and not box.invalid and box.input.css_classes == []
    box.input._process_events({"value": typed})
    settings.reset()  # Reset (or a preset, or a link) clears the flag and shows the value in use
    assert not box.invalid and box.input.value == DEFAULTS[name] == getattr(settings, name)


def test_allowed_range_spells_every_kind_of_bound():
    class Bounds(param.Parameterized):
        both = param.Number(0.5, bounds=(0.0, 1.0))
        half_open = param.Number(0.5, bounds=(0.0, 1.0), inclusive_bounds=(False, True))
        open_ends = param.Number(0.5, bounds=(0.0, 1.0), inclusive_bounds=(False, False))
        open_low = param.Number(1.0, bounds=(0.0, None), inclusive_bounds=(False, True))
        closed_low = param.Integer(3, bounds=(2, None))
        high = param.Number(0.0, bounds=(None, 4.5), inclusive_bounds=(True, False))
        free = param.Number(0.0)

    names = ("both", "half_open", "open_ends", "open_low", "closed_low", "high", "free")
    got = {name: allowed_range(Bounds.param[name]) for name in names}
    assert got == {
        "both": "between 0 and 1",
        "half_open": "between 0 and 1 (0 excluded)",
        "open_ends": "between 0 and 1 (0 and 1 excluded)",
        "open_low": "above 0",
        "closed_low": "at least 2",
        "high": "below 4.5",
        "free": "any number",
    }


def test_the_views_number_boxes_flag_invalid_values():
    lab = NoiseLab()
    show(lab, lab.noise)
    lab.settings.arete_source = "manual"
    alpha = lab.noise.arete_inputs["alpha"]
    alpha.input._process_events({"value": 5.0})
    assert alpha.invalid and "between 0.0001 and 1" in alpha.flag.object
    assert lab.noise.comparison.arete.alpha == DEFAULTS["alpha"]
    target = lab.experiments.target_input
    target.input._process_events({"value": -1.0})
    assert target.invalid and target.flag.object.startswith("Target loss (empty: from public data) must be above 0")
    target.input._process_events({"value": None})  # empty: the target from public data
    assert not target.invalid and lab.experiment_config.target is None


def test_reset_restores_defaults():
    lab = NoiseLab()
    lab.settings.param.update(epsilon=10.0, seed=3, dim=2)
    lab.settings.reset()
    assert lab.settings.as_query() == DEFAULTS


def test_the_reset_button_gives_a_bare_link_on_the_first_tab():
    """Reset left the rewind's release (and the experiments settings) in the address (a newcomer pass:
    ``?release=33`` after Play, Pause, Reset)."""
    lab = NoiseLab()
    lab.settings.param.update(epsilon=10.0, seed=3)
    lab.rewind.show_frame(32)
    lab.experiment_config.param.update(task="ridge", trials=1000)
    assert set(lab.link_state()) == {"release", "experiments.task", "experiments.trials"}
    reset = next(b for b in lab.controls.select(pn.widgets.Button) if b.name == "Reset")
    reset.clicks += 1
    assert lab.settings.as_query() == DEFAULTS and lab.link_state() == {}
    assert lab.rewind.frame.value == 0
    lab.tabs.active = 2  # the open tab stays: Reset restores settings, it does not navigate
    reset.clicks += 1
    assert lab.link_state() == {"tab": 2}


@pytest.mark.sweep
def test_csv_exports():
    lab = NoiseLab()
    for view in lab.views:
        show(lab, view)
        text = view.csv_text()
        lines = text.strip().splitlines()
        assert len(lines) > 5
        width = len(lines[0].split(","))
        assert all(len(line.split(",")) == width for line in lines)
        assert "nan" not in text.lower()


@pytest.mark.sweep
def test_two_sessions_are_independent():
    first, second = NoiseLab(), NoiseLab()
    apps = [create_app(lab) for lab in (first, second)]
    assert apps[0] is not apps[1]
    for lab in (first, second):
        show(lab, lab.boundaries)
    assert first.settings is not second.settings
    first.settings.epsilon = 7.0
    first.settings.param.trigger("committed")
    assert second.settings.epsilon == DEFAULTS["epsilon"]
    assert not np.allclose(first.boundaries.src_psi.data["linear"], second.boundaries.src_psi.data["linear"])


CORNERS = {
    "epsilon": (0.05, 50.0),
    "delta": (1e-12, 0.5),
    "rho": (1e-4, 1e4),
    "target": (0.01, 100.0),
    "sensitivity": (0.1, 10.0),
}


def test_cancel_says_the_previous_result_is_kept_only_while_it_is(monkeypatch):
    """A CI run showed "Cancelled; the previous result is kept." over the cancelled run's own plots: the
    status makes that claim only while the result shown is the one from before the run."""
    lab = NoiseLab()
    show(lab, lab.experiments)
    view = lab.experiments
    view.start()  # without a server the run ends at once
    assert view.result is not None
    monkeypatch.setattr(view, "cancel", lambda name: name == "experiment")  # as if a run were waited for
    view._result_before_run = view.result  # nothing new on the page since Run
    view.stop()
    assert view.status.object.startswith("Cancelled; the previous result is kept. The plots show: ")
    assert view._shown_status and view.status.object.endswith(view._shown_status)  # which run the plots show
    view.status.object = "the run's own status"
    view._result_before_run = None  # the run's result reached the page before the press
    view.stop()
    assert view.status.object == "the run's own status"


@pytest.mark.sweep
def test_slider_corner_sweep():
    """Every combination of extreme slider positions renders every view without error or NaN."""
    lab = NoiseLab()
    for values in itertools.product(*CORNERS.values()):
        lab.settings.param.update(dict(zip(CORNERS, values, strict=True)))
        lab.settings.dim = 2 if math.prod(values) > 1 else 1
        lab.settings.param.trigger("committed")
        for view in lab.views:
            show(lab, view)
            assert_clean(view)


def test_hidden_views_catch_up_when_shown():
    lab = NoiseLab()
    assert len(lab.boundaries.src_psi.data["linear"]) == 0  # hidden tabs compute when first shown
    show(lab, lab.boundaries)
    before = np.array(lab.boundaries.src_psi.data["linear"])
    show(lab, lab.rewind)
    lab.settings.epsilon = 4.0
    np.testing.assert_array_equal(lab.boundaries.src_psi.data["linear"], before)  # hidden: deferred
    show(lab, lab.boundaries)
    assert not np.allclose(lab.boundaries.src_psi.data["linear"], before)
    assert lab.boundaries.src_marks.data["eps"] == [4.0, 4.0]


@pytest.mark.sweep
def test_noise_view_calibrated_arete_and_frontier():
    """The view calibrates the Arete at the slider's own epsilon (without a server the pool's call runs at
    once, so no placeholder stays on screen) and compares it with Laplace at that epsilon."""
    lab = NoiseLab()
    show(lab, lab.noise)
    s = lab.settings
    assert s.arete_source == "calibrated"
    s.epsilon = 6.5
    s.param.trigger("committed")
    view = lab.noise
    assert not view.comparison.placeholder and "calibrated at this epsilon" in view.table.object
    assert 6.5 * (1 - 1e-6) <= view.comparison.certified["Arete"] <= 6.5
    assert view.comparison.mean_abs["Arete"] < 0.124460  # better than the eps = 6 local-search set
    assert "being computed" not in view.claim.text and "x Laplace's" in view.claim.text
    assert len(view.src_drop["Arete"].data["present"]) >= 4  # the dropout curves followed, unasked
    frontier = view.src_error["Arete"].data
    assert len(frontier["eps"]) > 30 and np.all(np.diff(frontier["err"]) < 0)


@pytest.mark.sweep
def test_noise_view_dropout_curves():
    lab = NoiseLab()
    show(lab, lab.noise)
    lab.settings.param.update(epsilon=6.0, arete_source="local-search", users=20)
    lab.settings.param.trigger("committed")
    assert lab.noise.dropout_plots.objects  # drawn with the comparison, no button to press
    data = lab.noise.src_drop["Arete"].data
    assert len(data["present"]) >= 4
    assert data["epsilon"][0] == pytest.approx(5.99966, abs=5e-6)
    assert np.all(np.diff(data["epsilon"]) > 0)
    assert "users" in lab.noise.dropout_note.object
    assert "coincide" not in lab.noise.dropout_note.object


def test_dropout_curves_of_other_settings_are_not_kept():
    """Curves computed at epsilon 6 stayed on screen, in the note and in the CSV after the settings changed
    (to an Arete they cannot be computed for, and back): now a change of the noise's settings clears them,
    the note says what holds for the new settings, and the CSV carries no stale curves."""
    lab = NoiseLab()
    show(lab, lab.noise)
    noise = lab.noise
    lab.settings.param.update(epsilon=6.0, arete_source="local-search", users=20)
    lab.settings.param.trigger("committed")
    assert len(noise.src_drop["Arete"].data["present"]) >= 4 and "grows from" in noise.dropout_note.object
    lab.settings.param.update(epsilon=30.0, arete_source="calibrated")
    lab.settings.param.trigger("committed")
    assert "not available" in noise.dropout_note.object
    assert all(len(src.data["present"]) == 0 for src in noise.src_drop.values())
    assert not noise.dropout_plots.objects and "dropout curves" not in noise.csv_preamble()
    lab.settings.param.update(epsilon=6.0, arete_source="local-search")
    lab.settings.param.trigger("committed")
    assert noise.dropout_plots.objects and "grows from" in noise.dropout_note.object  # recomputed, unasked


def test_noise_view_says_when_the_dropout_curves_coincide():
    """Below the crossover the 'Arete' is its Laplace limit: both curves are the same line, so the
    Laplace one is dashed over it and the note says why only one line seems drawn."""
    lab = NoiseLab()
    show(lab, lab.noise)
    lab.settings.param.update(epsilon=1.0, users=20)
    lab.settings.param.trigger("committed")
    assert lab.noise.comparison.laplace_limit
    arete, laplace = (lab.noise.src_drop[name].data for name in ("Arete", "Laplace"))
    assert len(arete["present"]) >= 4
    np.testing.assert_allclose(arete["epsilon"], laplace["epsilon"], rtol=1e-9)
    assert "coincide (Laplace dashed)" in lab.noise.dropout_note.object


def test_app_builds_a_server_document():
    """What the server does for each session, without a browser: the template renders into a document."""
    from bokeh.document import Document

    doc = create_app(NoiseLab()).server_doc(Document())
    assert doc.roots


def test_a_closed_session_releases_its_browser_callbacks():
    """Panel keeps every jscallback in a class-level registry whose entries refer to their own source;
    the app drops its entries when a session ends, or every session stayed in memory (about 1.7 MB
    each; a served process kept all 5 of 5 closed sessions' labs before, 0 after)."""
    from panel.links import Callback

    lab = NoiseLab()
    widgets = [*lab.controls.select(pn.widgets.Widget), *lab.rewind.layout.select(pn.widgets.Widget)]
    registered = [w for w in widgets if w in Callback.registry]
    assert len(registered) >= 2  # the large-type toggle and the rewind's slider and buttons
    lab.release_browser_callbacks()
    assert not any(w in Callback.registry for w in widgets)


class _SessionStandIn:
    """Stands for a server session context: the view sees a served document."""

    request = SimpleNamespace(arguments={})


def test_noise_view_placeholder_waits_until_the_page_is_shown():
    """A placeholder drawn after the browser fetched the document but before it reported ready was lost
    (Panel drops changes held while a session is unconnected), and a later change referred to its
    models: "reference isn't known" in a clean-clone run. The placeholder waits for 'document ready'."""
    lab = NoiseLab()
    show(lab, lab.noise)
    view = lab.noise
    view.calibrate = lambda: None  # a calibration still running on the pool
    doc, session = Document(), _SessionStandIn()
    doc._session_context = weakref.ref(session)
    try:
        with pn.io.server.set_curdoc(doc):
            lab.settings.epsilon = 7.25
            view.update()
            (timeout,) = doc.session_callbacks
            timeout.callback()  # the placeholder delay has passed; the page is not yet shown
            assert not view.comparison.placeholder and view.comparison.epsilon == 1.0  # nothing drawn yet
            pn.state._loaded[doc] = True
            doc.callbacks.trigger_event(DocumentReady())
        assert view.comparison.placeholder and "being computed" in view.headline.object
        assert view.comparison.epsilon == 7.25
        assert not view.dropout_plots.objects  # no curves for a placeholder: they wait for the calibration
    finally:
        pn.state._loaded.pop(doc, None)


def test_a_refused_upload_leaves_no_earlier_file_named():
    """After a refused upload the status still named the earlier file as if it were in use (issue 43)."""
    lab = NoiseLab()
    show(lab, lab.experiments)
    view = lab.experiments
    view.accept_upload(b"a,b,label\n1,2,0\n", "earlier.csv", ["a", "b", "label"])
    assert "earlier" in view.status.object
    view.file_input.param.update(value=b"", filename="empty.csv", mime_type="text/csv")
    assert "earlier" not in view.status.object and "No file in use" in view.status.object
    assert view.alert.visible and "empty" in view.alert.object


def test_every_axis_label_fits_a_phone():
    """On a 390 px phone, x-axis labels of 45 characters or more were cut at the plot's edge (issue 43:
    the Experiments tab's two): every line of every axis label has at most 40 characters (the longest
    shown whole in a 390 px screenshot was 47 beside a narrow y-axis)."""
    from bokeh.models import Plot

    lab = NoiseLab()
    labels = [
        axis.axis_label
        for view in lab.views
        for value in vars(view).values()
        if isinstance(value, Plot)
        for axis in value.xaxis + value.yaxis
        if axis.axis_label
    ]
    assert len(labels) > 30
    assert [label for label in labels if max(len(line) for line in label.splitlines()) > 40] == []


@pytest.mark.parametrize("target", [0.01, DEFAULTS["target"], 100.0])
def test_the_error_plot_names_the_target_it_draws(target):
    """The error plot's dashed target line is a legend entry, "target error (your setting)", drawn at the
    setting over every release (at the defaults and both ends of its slider), and follows the slider."""
    lab = NoiseLab()
    view = lab.rewind
    lab.settings.target = target
    data = view.src_series.data
    assert len(data["n"]) == 120 and np.all(np.asarray(data["target"]) == target)
    labels = [getattr(item.label, "value", item.label) for item in view.fig_error.legend[0].items]
    assert "target error (your setting)" in labels
    lab.settings.target = 5.0 if target != 5.0 else 6.0
    assert np.all(np.asarray(view.src_series.data["target"]) == lab.settings.target)
