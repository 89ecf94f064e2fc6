"""Command line: rerun paper A's experiments, write CSV files and a self-contained HTML figure.

    python -m dashboard.experiments_cli --task logistic --trials 1000 --out results/

Trials run in chunks with one child seed each, so ``--workers N`` (processes on this machine) or
``--dask-scheduler ADDRESS`` / ``--dask-local N`` (a Dask cluster; progress is then not shown) give
the same numbers as one process. Bad input (a missing or malformed data file, a bad option, an
``--out`` folder that cannot be written, checked before computing) ends with a one-line message and
exit status 2.

The output files are written all or nothing: each to a temporary name in the output folder, and
renamed over the old ones only when all are complete, so a failed run (a full disk) leaves the old
set whole. Ctrl+C (SIGINT) or SIGTERM stops the worker processes and ends with one line, exit
status 128 + the signal's number.
"""

from __future__ import annotations

if __name__ == "__main__":  # the command, not an import: its start-up steps before the heavy imports
    from dashboard.launch import start_command

    start_command(serving=False)

import argparse
import contextlib
import csv
import io
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from bokeh.embed import file_html
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, FactorRange
from bokeh.models.annotations import Band, Whisker
from bokeh.models.widgets import Div
from bokeh.plotting import figure
from bokeh.resources import INLINE

from dashboard.compute import ComputePool, pool_mapper, process_mapper
from dashboard.palette import PALETTE
from noisecore.experiments import (
    DEFAULT_TARGETS,
    default_epsilons,
    default_task,
    public_target,
    run_experiment,
)
from noisecore.tasks import LogisticRegressionTask, RidgeRegressionTask, load_kddcup, load_twitter_buzz, split

COLORS = {key: PALETTE[key] for key in ("bm", "lnr", "doubling")}  # the app's colours
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class ProgressBar:
    """A one-line text progress bar on stderr."""

    def __init__(self, label, stream=sys.stderr, width=30):
        self.label, self.stream, self.width = label, stream, width
        self.start = time.perf_counter()

    def __call__(self, fraction):
        filled = round(self.width * fraction)
        elapsed = time.perf_counter() - self.start
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label:<12} [{bar}] {100 * fraction:5.1f}%  {elapsed:6.1f} s")
        if fraction >= 1:
            self.stream.write("\n")
        self.stream.flush()


def build_task(name, *, data=None, n=10_000, lam=0.05, rng=None):
    if data is None:
        return default_task(name, n=n, lam=lam, rng=rng)
    loader = {"logistic": load_kddcup, "ridge": load_twitter_buzz}.get(name)
    if loader is None:
        raise ValueError("--data is supported for the logistic (KDD Cup 99) and ridge (Twitter buzz) tasks")
    if not Path(data).is_file():
        raise ValueError(f"--data {data}: no such file")
    X, y = loader(data)
    if len(y) < 4:
        raise ValueError(f"--data {data}: {len(y)} rows; at least 4 are needed (half train, half hold-out)")
    order = np.random.default_rng(rng).permutation(len(y))[: 2 * n]
    X, y = X[order], y[order]
    (Xt, yt), hold = split(X, y, n_train=len(y) // 2)
    cls = LogisticRegressionTask if name == "logistic" else RidgeRegressionTask
    return cls(Xt, yt, lam=lam, holdout=hold)


def csv_text(header, rows):
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def check_out(out):
    """Raise OSError unless ``out`` is a writable folder or can be created as one (nothing is created)."""
    existing = out
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        what = "is not a folder" if existing == out else f"cannot be created: {existing} is not a folder"
        raise OSError(f"--out {out} {what}")
    try:  # a real probe: os.access says yes to root on a read-only mount
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise OSError(f"--out {out}: cannot write in {existing} ({exc.strerror or exc})") from None


def write_temp(folder, name, text):
    """Write ``text`` to a new temporary file beside ``name`` in ``folder``; return its path."""
    handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        os.unlink(temp)
        raise
    return temp


def write_all(folder, files, *, replaced=None):
    """Write ``files`` ({name: text}) into ``folder`` all or nothing: every file to a temporary name
    first, then each renamed over its old version (``os.replace``, atomic per file). A failure while
    writing removes the temporary files and leaves the old set whole. SIGINT and SIGTERM wait
    while the files are renamed, so the set is never left half replaced; ``replaced`` (a list), if
    given, gets True appended before they are taken."""
    folder.mkdir(parents=True, exist_ok=True)
    temps = {}
    try:
        for name, text in files.items():
            temps[name] = write_temp(folder, name, text)
        with _signals_held():
            for name, temp in temps.items():
                os.replace(temp, folder / name)
            temps.clear()
            if replaced is not None:
                replaced.append(True)
    finally:
        for temp in temps.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM wait until the block ends, then are raised as usual. (Masking them in
    this thread would not do: another thread may take the signal, and Python still runs the
    handler here.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if held:
            signal.raise_signal(held[0])


def tradeoff_figure(result):
    fig = figure(
        title=f"{result.task}: loss against privacy ({result.trials} trials, 95% bands)",
        x_axis_type="log",
        x_axis_label=f"ex-post epsilon (BM: delta = {result.delta:g})",
        y_axis_label="regularized loss",
        width=640,
        height=380,
    )
    for mech, label in (("bm", "Brownian mechanism"), ("lnr", "Laplace noise reduction")):
        mean, low, high = (getattr(result, f"{mech}_{k}") for k in ("mean", "low", "high"))
        src = ColumnDataSource({"x": result.epsilons, "y": mean, "lo": low, "hi": high})
        fig.add_layout(Band(base="x", lower="lo", upper="hi", source=src, fill_color=COLORS[mech], fill_alpha=0.2))
        fig.line("x", "y", source=src, color=COLORS[mech], line_width=2, legend_label=label)
    fig.line(
        result.epsilons,
        np.full(result.epsilons.size, result.optimal_loss),
        color="black",
        line_dash="dashed",
        legend_label="non-private optimum",
    )
    fig.legend.location = "top_right"
    return fig


def stopping_figure(result):
    keys = list(result.ex_post)
    labels = [f"{m} / {r}" for m, r in keys]
    fig = figure(
        title=f"{result.task}: ex-post epsilon when stopping at loss <= {result.target:g}",
        y_range=FactorRange(factors=labels[::-1]),
        x_axis_type="log",
        x_axis_label="ex-post epsilon",
        width=640,
        height=380,
    )
    for label, key in zip(labels, keys, strict=True):
        values = result.ex_post[key]
        values = values[np.isfinite(values)]
        if values.size == 0:
            continue
        q = np.percentile(values, [5, 25, 50, 75, 95])
        color = COLORS[key[0]]
        src = ColumnDataSource({"y": [label], "lo": [q[0]], "hi": [q[4]]})
        fig.add_layout(Whisker(base="y", lower="lo", upper="hi", source=src, dimension="width", line_color=color))
        fig.hbar(y=[label], left=[q[1]], right=[q[3]], height=0.5, color=color, alpha=0.5)
        fig.scatter([q[2]], [label], size=9, color="black")
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=["logistic", "ridge", "mean"], default="logistic")
    parser.add_argument("--data", help="KDD Cup 99 file (logistic) or Twitter buzz file (ridge); default synthetic")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--levels", type=int, default=60, help="number of privacy levels")
    parser.add_argument("--target", type=float, help="target loss for the stopping experiment")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results", help="output folder")
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes on this machine (results do not depend on N)",
    )
    group.add_argument("--dask-scheduler", metavar="ADDRESS", help="run the trials on this Dask scheduler")
    group.add_argument(
        "--dask-local", type=int, metavar="N", help="run the trials on a local Dask cluster of N workers"
    )
    args = parser.parse_args(argv)
    for name in ("trials", "levels", "workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    if args.target is not None and not args.target > 0:
        parser.error(f"--target must be a loss > 0, got {args.target}")
    stopped = []  # the signal that stopped the run

    def on_signal(signum, frame):
        stopped.append(signum)
        # the run is abandoned: joblib's executor threads may fail as it shuts down; say nothing
        threading.excepthook = lambda hook_args: None
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    written: list[str] = []  # set once the new outputs replaced the old ones
    try:
        run(args, written=written)
    except (ValueError, TypeError, OSError) as exc:  # user errors: a plain message, no traceback
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    except KeyboardInterrupt:
        for sig in previous:  # a second Ctrl+C does not interrupt the clean-up
            signal.signal(sig, signal.SIG_IGN)
        stop_children()
        signum = stopped[0] if stopped else signal.SIGINT
        outcome = "the new outputs were written" if written else "the output folder is unchanged"
        parser.exit(128 + signum, f"\n{parser.prog}: stopped by {signal.Signals(signum).name}; {outcome}\n")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _children(pid):
    """Process ids whose parent is ``pid`` (from /proc; empty where there is no /proc)."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        out += children
        todo += children
    return out


def stop_children(grace=2.0):
    """Stop this process's worker processes, should joblib's own shutdown miss any: wait ``grace``
    seconds, then SIGTERM, then SIGKILL. Resource trackers are left alone: they clean up and exit
    when this process exits (killing one makes loky relaunch it and print tracebacks)."""
    left = [pid for pid in _descendants(os.getpid()) if not _tracker(pid)]
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            for pid in left:  # reap our own children; others are reaped by their parent
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            left = [pid for pid in left if not _zombie(pid)]
        if not left:
            return


def _tracker(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"resource_tracker" in handle.read()
    except OSError:
        return False


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def run(args, *, written=None):
    out = Path(args.out)
    check_out(out)  # before any computing
    pool = None
    if args.dask_scheduler is not None or args.dask_local is not None:
        pool = ComputePool(scheduler=args.dask_scheduler, local_workers=args.dask_local)
    task = build_task(args.task, data=args.data, rng=args.seed)
    eps = default_epsilons(args.levels)
    target = args.target if args.target is not None else DEFAULT_TARGETS[args.task]
    if args.data is not None and args.target is None:
        target = public_target(task, rng=args.seed)
    try:
        if pool is None:
            mapper, progress = process_mapper(args.workers), ProgressBar("trials")
        else:
            print(f"running the trials on {pool.describe()}", file=sys.stderr)
            mapper, progress = pool_mapper(pool), None
        result = run_experiment(
            task, epsilons=eps, target=target, trials=args.trials, rng=args.seed, mapper=mapper, progress=progress
        )
    finally:
        if pool is not None:
            pool.close()
    trade, stop = result.tradeoff, result.stopping
    if stop is None:  # run_experiment fills it whenever a target is given
        raise RuntimeError("run_experiment returned no stopping table although a target was given")
    lines = ["mechanism,rule,median_ex_post_epsilon,fraction_stopped"]
    for (mech, rule), (median, frac) in stop.summary().items():
        lines.append(f"{mech},{rule},{median:.4f},{frac:.3f}")
    at_tuned = int(np.argmin(np.abs(trade.epsilons - trade.tuned_epsilon)))
    note = (
        f"<p>Task <b>{args.task}</b>, n = {task.n}, lambda = {task.lam}, {args.trials} trials, seed {args.seed}. "
        f"At epsilon = {trade.epsilons[at_tuned]:.3f}: BM mean loss {trade.bm_mean[at_tuned]:.5f}, "
        f"LNR {trade.lnr_mean[at_tuned]:.5f} (optimum {trade.optimal_loss:.5f}).</p>"
    )
    page = column(Div(text=note, width=1280), row(tradeoff_figure(trade), stopping_figure(stop)))
    files = {
        f"{args.task}_tradeoff.csv": csv_text(*trade.rows()),
        f"{args.task}_stopping.csv": csv_text(*stop.rows()),
        f"{args.task}_summary.csv": "\n".join(lines) + "\n",
        f"{args.task}_figure.html": file_html(page, INLINE, f"noiselab: {args.task} experiments"),
    }
    write_all(out, files, replaced=written)
    print("\n".join(lines))
    print(f"wrote {out}/{args.task}_tradeoff.csv, _stopping.csv, _summary.csv, _figure.html")


if __name__ == "__main__":
    main()
