"""The tour notebook executes headlessly and every view renders inline."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_tour_notebook_executes():
    nb = nbformat.read(ROOT / "notebooks" / "tour.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.output_type == "error"]
    rendered = [
        out
        for out in outputs
        if out.output_type in ("display_data", "execute_result")
        and "application/vnd.holoviews_exec.v0+json" in out.get("data", {})
    ]
    assert len(rendered) >= 5  # four views and the whole lab render as live Panel objects
    text = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert "5.99966" in text
