import csv
import re

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
