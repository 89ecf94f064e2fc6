"""Regenerate tour.ipynb (kept as a script so the notebook's source is reviewable)."""

from pathlib import Path

import nbformat as nbf

cells = [
    nbf.v4.new_markdown_cell(
        "# A tour of noiselab\n\n"
        "Every view of the app works inline. They share one `Settings` object: change it in code or with "
        "the widgets and all views follow. Run the cells in order."
    ),
    nbf.v4.new_code_cell(
        "import panel as pn\n\n"
        "from dashboard.app import NoiseLab\n"
        "from dashboard.models import Settings\n"
        "from dashboard.views import BoundaryView, NoiseView, RatView, RewindView\n\n"
        'pn.extension("katex")\n'
        "settings = Settings(epsilon=1.0, target=2.0, seed=0)"
    ),
    nbf.v4.new_markdown_cell(
        "## 1. Brownian rewind\n"
        "The released value walks back along one Brownian path towards f(x) = 0. Press Play. "
        "Only the last release is paid for: its ex-post epsilon is the boundary psi at that time."
    ),
    nbf.v4.new_code_cell("rewind = RewindView(settings)\nrewind"),
    nbf.v4.new_markdown_cell(
        "Switch to the plane (d = 2) and watch the estimate close in on the truth; the dotted circle is the "
        "target error."
    ),
    nbf.v4.new_code_cell("settings.dim = 2\nprint(rewind.readout.object)"),
    nbf.v4.new_markdown_cell(
        "## 2. Privacy boundaries\n"
        "psi_M (mixture, parameter rho) and psi_L (linear, tuned at epsilon) bound the realized privacy loss "
        "at all times at once. Their inverses give the noise variance each target epsilon needs; the one-shot "
        "Gaussian shows the price of time-uniformity."
    ),
    nbf.v4.new_code_cell("BoundaryView(settings)"),
    nbf.v4.new_markdown_cell(
        "## 3. Noise in the low-privacy regime\n"
        "Laplace, Staircase and Arete at the same epsilon. Choose the authors' local-search Arete at "
        "epsilon = 6: its certified epsilon is 5.99966."
    ),
    nbf.v4.new_code_cell(
        'settings.param.update(epsilon=6.0, arete_source="local-search")\nnoise = NoiseView(settings)\nnoise'
    ),
    nbf.v4.new_code_cell("print(noise.table.object)"),
    nbf.v4.new_markdown_cell(
        "## 4. ReducedAboveThreshold\n"
        "Checking accuracy on the private data: RAT halts at round N for 2 psi(T_N), AboveThreshold pays a "
        "fixed epsilon on top."
    ),
    nbf.v4.new_code_cell("settings.param.update(epsilon=1.0, dim=1)\nRatView(settings)"),
    nbf.v4.new_markdown_cell("## The whole lab\nAll views with the global controls, as in the served app."),
    nbf.v4.new_code_cell("NoiseLab(Settings())"),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})
Path(__file__).with_name("tour.ipynb").write_text(nbf.writes(nb))
