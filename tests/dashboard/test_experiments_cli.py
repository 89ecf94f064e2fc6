import csv
import re

import pytest

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


@pytest.mark.slow
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


@pytest.mark.slow
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
