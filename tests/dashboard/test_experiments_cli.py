import csv
import errno
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from dashboard import experiments_cli as cli
from dashboard.experiments_cli import main


def test_cli_writes_csv_and_html(tmp_path, capsys):
    main(["--task", "mean", "--trials", "20", "--levels", "6", "--out", str(tmp_path), "--seed", "3"])
    rows = list(csv.reader((tmp_path / "mean_tradeoff.csv").read_text().splitlines()))
    assert rows[0][:3] == ["epsilon", "bm_mean", "bm_low"]
    assert len(rows) == 7
    summary = (tmp_path / "mean_summary.csv").read_text().splitlines()
    assert summary[0].startswith("mechanism,rule")
    assert any(line.startswith("bm,RAT") for line in summary)
    html = (tmp_path / "mean_figure.html").read_text()
    assert "<html" in html.lower() and "Bokeh" in html
    assert not re.search(r"<(script|link)[^>]+(src|href)=\"https?://", html)  # self-contained
    assert "wrote" in capsys.readouterr().out


@pytest.mark.subprocess
def test_cli_sweeps_on_dask_give_the_same_files(tmp_path):
    """--dask-scheduler runs both sweeps on the cluster: same seeds, so the same numbers as here."""
    import pytest

    distributed = pytest.importorskip("distributed")
    args = ["--task", "mean", "--trials", "20", "--levels", "6", "--seed", "3"]
    main([*args, "--out", str(tmp_path / "local")])
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        main([*args, "--out", str(tmp_path / "dask"), "--dask-scheduler", cluster.scheduler_address])
    for name in ("mean_tradeoff.csv", "mean_stopping.csv", "mean_summary.csv"):
        assert (tmp_path / "dask" / name).read_text() == (tmp_path / "local" / name).read_text()


@pytest.mark.subprocess
def test_cli_worker_processes_give_the_same_files(tmp_path):
    args = ["--task", "mean", "--trials", "60", "--levels", "6", "--seed", "5"]
    main([*args, "--out", str(tmp_path / "one")])
    main([*args, "--out", str(tmp_path / "two"), "--workers", "2"])
    for name in ("mean_tradeoff.csv", "mean_stopping.csv", "mean_summary.csv"):
        assert (tmp_path / "two" / name).read_text() == (tmp_path / "one" / name).read_text()


def test_cli_user_errors_are_one_line_messages(tmp_path, capsys):
    import pytest

    bad = tmp_path / "kdd.txt"
    bad.write_text(",".join(["0", "tcp", "http", "SF", *["1"] * 37, "mystery."]) + "\n")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"\xff\xfe,1\n")
    cases = [
        (["--task", "logistic", "--data", str(bad)], "unknown label 'mystery.'"),
        (["--task", "ridge", "--data", str(latin)], "not UTF-8 text"),
        (["--task", "logistic", "--data", str(tmp_path / "missing.txt")], "no such file"),
        (["--task", "mean", "--data", str(bad)], "--data is supported for the logistic"),
        (["--trials", "0"], "--trials must be at least 1"),
        (["--task", "mean", "--trials", "5", "--levels", "4", "--target", "1e-9"], "unreachable"),
    ]
    for argv, message in cases:
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--out", str(tmp_path / "out")])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err


ARGS = ["--task", "mean", "--trials", "20", "--levels", "6"]


def _never_called(*args, **kwargs):
    raise AssertionError("the experiment ran before --out was checked")


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_cli_checks_out_before_computing(tmp_path, capsys, monkeypatch, where):
    monkeypatch.setattr(cli, "run_experiment", _never_called)
    blocker = tmp_path / "taken"
    blocker.write_text("not a folder")
    out = blocker if where == "a file" else blocker / "results"
    with pytest.raises(SystemExit) as stop:
        main([*ARGS, "--out", str(out)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not a folder" in err and "Traceback" not in err, err
    assert blocker.read_text() == "not a folder"


def test_cli_creates_a_missing_out_folder(tmp_path):
    main([*ARGS, "--out", str(tmp_path / "new" / "results")])
    assert sorted(p.name for p in (tmp_path / "new" / "results").iterdir()) == [
        "mean_figure.html",
        "mean_stopping.csv",
        "mean_summary.csv",
        "mean_tradeoff.csv",
    ]


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_cli_replaces_the_whole_set_and_leaves_no_temporary_files(tmp_path):
    main([*ARGS, "--seed", "1", "--out", str(tmp_path)])
    old = _snapshot(tmp_path)
    main([*ARGS, "--seed", "2", "--out", str(tmp_path)])
    new = _snapshot(tmp_path)
    assert sorted(new) == sorted(old)  # no temporary file left
    assert new["mean_tradeoff.csv"] != old["mean_tradeoff.csv"] and new["mean_summary.csv"] != old["mean_summary.csv"]


@pytest.mark.sweep  # over 2 s serially
@pytest.mark.parametrize("fail_at", [1, 3, 4])
def test_cli_disk_full_leaves_the_old_outputs_whole(tmp_path, capsys, monkeypatch, fail_at):
    """A full disk while writing the new set (ENOSPC when the n-th file is flushed to disk, its
    text already in the temporary file) ends with one line; the old files stay byte for byte, and
    no temporary file is left."""
    main([*ARGS, "--seed", "1", "--out", str(tmp_path)])
    old = _snapshot(tmp_path)
    capsys.readouterr()
    real, calls = os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == fail_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(SystemExit) as stop:
        main([*ARGS, "--seed", "2", "--out", str(tmp_path)])
    assert stop.value.code == 2 and len(calls) == fail_at
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert _snapshot(tmp_path) == old


def _session(sid):
    """Live processes of session ``sid`` (from /proc): the CLI and everything it started."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _workers(sid):
    """How many joblib (loky) worker processes session ``sid`` holds."""
    count = 0
    for pid in _session(sid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                count += b"LokyProcess" in handle.read()
        except OSError:
            continue
    return count


def _wait_for(condition, seconds):
    """Poll ``condition`` until it holds or ``seconds`` pass; return its last value."""
    deadline = time.monotonic() + seconds
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


@pytest.mark.subprocess
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the run's processes in /proc")
@pytest.mark.parametrize(
    ("signum", "to_group"), [(signal.SIGTERM, False), (signal.SIGINT, True), (signal.SIGINT, False)]
)
def test_cli_signal_stops_the_workers(tmp_path, signum, to_group):
    """SIGTERM (kill) or SIGINT (Ctrl+C: the whole process group) during a --workers 2 run: within
    10 s no process of the run is left, stderr holds one line and no traceback, the old outputs
    are whole."""
    main([*ARGS, "--seed", "1", "--out", str(tmp_path)])
    old = _snapshot(tmp_path)
    argv = [sys.executable, "-m", "dashboard.experiments_cli", "--task", "mean", "--trials", "200000"]
    proc = subprocess.Popen(
        [*argv, "--workers", "2", "--out", str(tmp_path)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    err = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1), b"")), daemon=True)
    reader.start()

    def progress():  # the progress bar is past 0%
        shown = re.findall(rb"(\d+\.\d)%", b"".join(err))
        return bool(shown) and float(shown[-1]) > 0

    try:
        # both workers exist and have finished a chunk: a Ctrl+C that hits a worker still importing
        # its modules makes that interpreter print a traceback of its own
        assert _wait_for(lambda: _workers(proc.pid) >= 2 and progress(), 120), "the workers never started"
        (os.killpg if to_group else os.kill)(proc.pid, signum)
        left = _wait_for(lambda: not _session(proc.pid), 10) or _session(proc.pid)
        assert left is True, f"still running 10 s after {signum.name}: {left}"
        proc.wait()
        reader.join()
    finally:
        for pid in _session(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    err = b"".join(err).decode()
    assert proc.returncode == 128 + signum, err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip() and "[" not in line]
    assert lines == [f"experiments_cli.py: stopped by {signum.name}; the output folder is unchanged"], err
    assert _snapshot(tmp_path) == old


@pytest.mark.sweep  # over 2 s serially
def test_a_signal_during_the_renames_waits_until_the_set_is_replaced(tmp_path, capsys, monkeypatch):
    """SIGTERM at the first rename: all four files are still replaced, then the run stops."""
    main([*ARGS, "--seed", "1", "--out", str(tmp_path)])
    old = _snapshot(tmp_path)
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGTERM)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(SystemExit) as stop:
        main([*ARGS, "--seed", "2", "--out", str(tmp_path)])
    assert stop.value.code == 128 + signal.SIGTERM and len(calls) == 4
    assert "stopped by SIGTERM; the new outputs were written" in capsys.readouterr().err
    new = _snapshot(tmp_path)
    assert sorted(new) == sorted(old) and all(new[name] != old[name] for name in new if name.endswith(".csv"))
