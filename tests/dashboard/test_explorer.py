"""The experiments explorer: its story (UI-free) and its view on small data sets."""

import html
import re

import numpy as np
import pytest

from dashboard.compute import ComputePool, pool_mapper, process_mapper
from dashboard.escape import plain
from dashboard.explorer import (
    ExperimentSpec,
    chunk_calls,
    inspect_table,
    level_grid,
    prepare,
)
from dashboard.models import Settings
from dashboard.scenarios import experiments_headline
from dashboard.uploads import MAX_UPLOAD_BYTES, TOO_LARGE_TYPE
from dashboard.views import ExperimentsView
from noisecore.experiments import STOPPING_RULES, combine_chunks, default_task, run_experiment


def small_csv(rows=120, seed=0) -> bytes:
    """Two noisy classes in three features, with a header and a 0/1 target column."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, rows)
    X = rng.normal(size=(rows, 3)) * 0.4 + (2 * label[:, None] - 1) * np.array([1.0, 0.5, -0.5])
    lines = ["x1,x2,x3,label"] + [f"{a:.4f},{b:.4f},{c:.4f},{t}" for (a, b, c), t in zip(X, label, strict=True)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.subprocess
def test_worker_processes_give_the_same_numbers():
    task = default_task("logistic", n=600, rng=0)
    eps = level_grid(0.2, 3.0, count=6)
    one = run_experiment(task, epsilons=eps, target=0.55, trials=75, rng=4, mapper=process_mapper(1))
    two = run_experiment(task, epsilons=eps, target=0.55, trials=75, rng=4, mapper=process_mapper(2))
    pool = ComputePool(threads=2)
    try:
        pooled = run_experiment(task, epsilons=eps, target=0.55, trials=75, rng=4, mapper=pool_mapper(pool))
    finally:
        pool.close()
    for other in (two, pooled):
        np.testing.assert_allclose(other.tradeoff.bm_mean, one.tradeoff.bm_mean, rtol=1e-8)
        np.testing.assert_allclose(other.tradeoff.lnr_low, one.tradeoff.lnr_low, rtol=1e-8)
        for key in STOPPING_RULES:
            np.testing.assert_array_equal(other.stopping.ex_post[key], one.stopping.ex_post[key])


def test_view_calls_match_the_one_call_run():
    spec = ExperimentSpec(task="logistic", source="upload", content=small_csv(), target_column="label")
    prepared = prepare(spec)
    eps = level_grid(0.2, 5.0, count=8)
    chunks = [
        call() for call in chunk_calls(prepared.task, levels=eps, trials=60, rng=0, target=prepared.suggested_target)
    ]
    joined = combine_chunks(prepared.task, epsilons=np.asarray(eps), chunks=chunks, target=prepared.suggested_target)
    direct = run_experiment(prepared.task, epsilons=eps, target=prepared.suggested_target, trials=60, rng=0)
    np.testing.assert_allclose(joined.tradeoff.bm_mean, direct.tradeoff.bm_mean, rtol=1e-8)
    assert prepared.task.n == 60 and prepared.task.d == 3


@pytest.mark.sweep
def test_uploaded_table_runs_in_the_view():
    view = ExperimentsView(Settings(), active=True)
    first = view.result
    assert first is not None and view.src_curve["bm"].data["x"].size == 30  # the default run on first show
    view.accept_upload(small_csv(), "two_classes.csv", inspect_table(small_csv()))
    assert view.config.source == "upload" and view.config.target_column == "label"
    view.config.count = 10
    view.start()
    assert view.alert.visible is False
    assert view.result is not first and view.result.tradeoff.epsilons.size == 10
    assert len(view.src_box.data["y"]) >= 6 and "BM / RAT" in view.src_box.data["y"]
    assert plain("two_classes.csv") in view.status.object and "median ex-post epsilon" in view.claim.text
    assert view.table.object.count("\n| ") == 7
    header = view.csv_text().splitlines()[0]
    assert header.startswith("epsilon,bm_mean") and len(view.csv_text().splitlines()) == 11
    assert view._stopping_csv().read().count("\n") == 101
    assert not view.run_button.disabled and view.cancel_button.disabled


def shown(pane) -> str:
    """The text a Markdown pane shows in the browser (tags dropped, entities decoded)."""
    rendered = html.unescape(pane._transform_object(pane.object)["object"])  # the innerHTML
    return html.unescape(re.sub(r"<[^>]*>", "", rendered))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "bad.csv is empty: choose a CSV file"),
        (b"a,b,label\n1,2,0\n3,oops,1\n", "line 3, column 'b': 'oops' is not a number"),
        (b"a,label\n1,nan\n", "not a finite number"),
        ("a,label\n\xe9,1\n".encode("latin-1"), "not UTF-8"),
        (b"a,b\n1,2\n3\n", "line 3: 1 fields"),
        (b"a,b\r1,2\r", "carriage return alone"),
        (b"a,b\n1," + b"2" * 131_073 + b"\n", "line 2: a cell longer than 131,072 characters"),
        (b"1" * (MAX_UPLOAD_BYTES + 1), "bad.csv is 15.0 MB; files up to 15.0 MB are accepted"),
    ],
)
@pytest.mark.sweep
def test_bad_uploads_are_named_and_replace_the_last_file(content, message):
    """Each refusal is named (an empty file was once ignored silently, and Run then used the file
    before it); the settings and the last result stay."""
    view = ExperimentsView(Settings(), active=True)
    before = view.result
    good = small_csv()
    view.file_input.param.update(value=good, filename="good.csv")
    assert view._upload is not None and view.column_select.options
    view.config.trials = 250
    view.file_input.param.update(value=content, filename="bad.csv")
    assert view.alert.visible and message in shown(view.alert)
    assert view._upload is None and view.column_select.disabled  # Run never uses the older file
    assert view.result is before and view.config.trials == 250


@pytest.mark.sweep
def test_a_file_the_browser_kept_back_is_named():
    view = ExperimentsView(Settings(), active=True)
    view.file_input.param.update(value=None, filename="big.csv", mime_type=f"{TOO_LARGE_TYPE};size=31457280")
    assert "big.csv is 31.5 MB; files up to 15.0 MB are accepted. It was not sent." in shown(view.alert)


@pytest.mark.sweep
def test_markup_in_a_file_is_shown_as_text():
    """A file name, a column name or a cell carrying markup reaches the status and the alerts as text."""
    payload = '<img src=x onerror="window.__xss=1">'
    view = ExperimentsView(Settings(), active=True)
    content = small_csv().replace(b"x1", payload.encode().replace(b",", b";"))
    view.file_input.param.update(value=content, filename=payload + ".csv")
    assert not view.alert.visible, view.alert.object
    for pane in (view.status, view.alert):
        assert "<img" not in html.unescape(pane._transform_object(pane.object)["object"])
    assert payload + ".csv" in shown(view.status)
    view.file_input.param.update(value=b"a,b\n1," + payload.encode() + b"\n", filename=payload)
    assert "<img" not in html.unescape(view.alert._transform_object(view.alert.object)["object"])
    assert f"column 'b': '{payload[:30]}' is not a number" in shown(view.alert)


@pytest.mark.sweep
def test_a_refused_run_resets_its_status():
    view = ExperimentsView(Settings(), active=True)
    view.config.source = "upload"  # no file: prepare refuses
    view.start()
    assert "upload a CSV file first" in shown(view.alert)
    assert "Preparing" not in view.status.object and "Not run" in shown(view.status)
    assert not view.run_button.disabled


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_column": "x1", "task": "logistic"}, "exactly two classes"),
        ({"target_column": "label", "task": "logistic", "rows": 30}, "too few rows"),
        ({"target_column": "label", "task": "logistic", "target": 1e-9}, "unreachable"),
    ],
)
@pytest.mark.sweep
def test_unusable_data_or_target_is_named(change, message):
    view = ExperimentsView(Settings(), active=True)
    before = view.result
    content = small_csv(rows=change.get("rows", 120))
    view.accept_upload(content, "data.csv", inspect_table(content))
    view.column_select.value = change["target_column"]
    view.config.task = change["task"]
    view.config.target = change.get("target")
    view.config.count = 10
    view.start()
    assert view.alert.visible and message in shown(view.alert)
    assert view.result is before and not view.run_button.disabled


def test_headline_states_the_medians_and_the_comparison():
    task = default_task("mean", n=500, rng=0)
    result = run_experiment(task, epsilons=level_grid(0.2, 5.0, count=10), target=0.19, trials=50, rng=0)
    text = experiments_headline(result, delta=1e-6).text
    bm = np.median(result.stopping.ex_post[("bm", "holdout")])
    assert f"{bm:.3g}" in text and "all but one time in a million, delta 1e-06" in text
    # as the other captions print it
    assert "one time in a million, delta 9.5e-07" in experiments_headline(result, delta=9.54993e-07).text


def test_headline_says_when_a_mechanism_stops_at_the_grids_lowest_level():
    """A median at the grid's first level says nothing about how low the mechanism could go: the
    headline says so (the QA pass found "1.3x lower for LNR" on the mean task, an artefact of the grid)."""
    task = default_task("mean", n=500, rng=0)
    low = run_experiment(task, epsilons=level_grid(2.0, 5.0, count=10), target=0.19, trials=50, rng=0)
    stop = low.stopping
    assert np.median(stop.ex_post[("lnr", "holdout")]) == stop.epsilons[0]  # LNR meets the target at once
    assert "lowest level 2," in experiments_headline(low, delta=1e-6).text
    wide = run_experiment(task, epsilons=level_grid(0.16, 5.0, count=30), target=0.19, trials=50, rng=0)
    wide_stop = wide.stopping
    if all(np.median(wide_stop.ex_post[(m, "holdout")]) > wide_stop.epsilons[0] for m in ("bm", "lnr")):
        assert "lowest level" not in experiments_headline(wide, delta=1e-6).text


@pytest.mark.sweep
def test_default_screen_tells_the_story_over_seeds():
    """At the first screen's settings (logistic, synthetic, 100 trials, 30 levels from 0.16 to 5): BM
    reaches the target at a lower median ex-post epsilon than LNR, and RAT's median is below
    AboveThreshold's, for every one of 10 seeds (measured: 10/10 for both)."""
    prepared = prepare(ExperimentSpec())
    eps = level_grid(0.16, 5.0, count=30)
    wins_bm = wins_rat = 0
    for seed in range(10):
        stop = run_experiment(
            prepared.task, epsilons=eps, target=prepared.suggested_target, trials=100, rng=seed
        ).stopping
        med = {k: np.nanmedian(v) for k, v in stop.ex_post.items()}
        wins_bm += med[("bm", "holdout")] < med[("lnr", "holdout")]
        wins_rat += med[("bm", "RAT")] < med[("bm", "AboveThreshold")]
    assert wins_bm == 10 and wins_rat == 10


@pytest.mark.sweep
@pytest.mark.parametrize(("levels", "count"), [((0.16, 20.0), 10), ((0.16, 20.0), 60), ((0.16, 0.5), 10)])
def test_headline_words_follow_the_numbers_at_the_slider_ends(levels, count):
    """At the grid's extremes the comparison can go either way (on 10 levels up to 20 both
    mechanisms often stop at the same level): the headline's words always match the medians."""
    prepared = prepare(ExperimentSpec())
    eps = level_grid(*levels, count=count)
    for seed in range(5):
        result = run_experiment(prepared.task, epsilons=eps, target=prepared.suggested_target, trials=100, rng=seed)
        med = {k: np.nanmedian(v) for k, v in result.stopping.ex_post.items()}
        text = experiments_headline(result, delta=1e-6).text
        bm, lnr = med[("bm", "holdout")], med[("lnr", "holdout")]
        if not (np.isfinite(bm) and np.isfinite(lnr)):
            assert "never reaches it" in text
        elif bm < lnr:
            assert "lower for BM" in text
        elif bm > lnr:
            assert "lower for LNR" in text
        else:
            assert "the same for both" in text
        rat, at = med[("bm", "RAT")], med[("bm", "AboveThreshold")]
        if np.isfinite(rat) and np.isfinite(at):
            assert ("less than" if rat < at else "more than" if rat > at else "the same as") in text


def test_the_papers_files_are_offered_when_the_server_has_them(tmp_path, monkeypatch):
    from dashboard.explorer import available_sources

    assert "kddcup" not in available_sources(tmp_path)
    rng = np.random.default_rng(0)
    lines = []
    for i in range(80):
        label = "normal." if i % 2 else "smurf."
        numbers = [f"{v:.3f}" for v in rng.uniform(0, 1, 37) + (i % 2)]
        lines.append(",".join([str(i % 5), "tcp", "http", "SF", *numbers, label]))
    (tmp_path / "kddcup.data_10_percent").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("NOISELAB_DATA_DIR", str(tmp_path))
    assert "kddcup" in available_sources() and "twitter" not in available_sources()
    prepared = prepare(ExperimentSpec(task="logistic", source="kddcup"))
    assert prepared.task.n == 40 and prepared.task.d == 38 and "KDD Cup 99" in prepared.description
    with pytest.raises(ValueError, match="for the logistic task"):
        prepare(ExperimentSpec(task="ridge", source="kddcup"))
    with pytest.raises(ValueError, match="not on this server"):
        prepare(ExperimentSpec(task="ridge", source="twitter"))


@pytest.mark.sweep  # over 2 s serially
def test_log_axes_label_one_two_five_of_each_decade():
    """Bokeh's log ticker labelled only decades (on 0.16-5 only 1, on 0.2-1.5 only 0.5 and 1); both
    epsilon axes now carry 1, 2 and 5 of every decade, each figure with its own ticker model."""
    view = ExperimentsView(Settings())
    tickers = [fig.xaxis[0].ticker for fig in (view.fig_trade, view.fig_stop)]
    assert tickers[0] is not tickers[1]
    for ticker in tickers:
        shown = [t for t in ticker.ticks if 0.16 <= t <= 5]
        assert shown == pytest.approx([0.2, 0.5, 1, 2, 5])
    view.cancel_all()


@pytest.mark.sweep  # over 2 s serially
def test_changing_a_run_setting_says_press_run_until_the_plots_match():
    """Clicking "ridge" changed nothing on screen: the logistic plots stayed under a ridge label. The
    status now names the change and says the plots show the last run; going back restores it, and
    a Run shows the new task's result."""
    view = ExperimentsView(Settings(), active=True)
    shown = view.status.object
    assert "Press Run" not in shown and view.result.tradeoff.task == "logistic"
    view.config.task = "mean"
    assert "Changed: task mean. Press Run" in view.status.object and shown in view.status.object
    view.config.task = "logistic"
    assert view.status.object == shown
    view.config.param.update(task="mean", count=10)
    assert "task mean, count 10" in view.status.object
    view.start()
    assert "Press Run" not in view.status.object and view.result.tradeoff.task == "mean"
    view.cancel_all()
