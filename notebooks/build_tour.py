"""Regenerate tour.ipynb (kept as a script so the notebook's source is reviewable).

Each step is a lecture step: a question, a figure (HoloViews for the static ones, a live Panel view for
the interactive ones), what to notice, and an exercise with its answer folded in a <details> block.
Numbers are computed in the cells from the records, never written into the prose.
"""

from pathlib import Path

import nbformat as nbf

md = nbf.v4.new_markdown_cell
code = nbf.v4.new_code_cell


def answer(text: str) -> str:
    return f"<details><summary><b>Answer</b></summary>\n\n{text}\n\n</details>"


cells = [
    md(
        "# A tour of noiselab\n\n"
        "Five lecture steps on two ideas in differential privacy: **Brownian noise reduction** (release "
        "f(x) + B(T) at decreasing noise, pay for the last release only) and **noise in the low-privacy "
        "regime** (Laplace, Staircase and Arete noise at the same epsilon).\n\n"
        "Each step asks a question, shows a figure, says what to notice and ends with an exercise (answer "
        "folded underneath). Static figures are HoloViews objects built from the story records "
        "(`dashboard.notebook`): compose them with `+` and `*`, restyle them with `.opts`, save them with "
        "`save_html`. Live views are the app's own Panel views, each driven by a `Settings` object: change it in "
        "code or with the slider beside the view. Run the cells in order."
    ),
    code(
        "import holoviews as hv\n"
        "import numpy as np\n"
        "import panel as pn\n\n"
        "from dashboard import scenarios as sc\n"
        "from dashboard.app import NoiseLab\n"
        "from dashboard.models import Settings\n"
        "from dashboard.notebook import (\n"
        "    boundary_plot, crossing_plot, experiment_plot, frontier_plot, loss_profile_plot, noise_plot,\n"
        "    inline_style_sheets, rat_run_plot, rat_study_plot, rewind_plot,\n"
        ")\n"
        "from dashboard.views import BoundaryView, NoiseView, RatView, RewindView\n"
        "from dashboard.widgets import LogSlider\n"
        "from noisecore import experiments, frontier\n\n"
        "# every resource inline: the saved notebook renders with no internet\n"
        'hv.extension("bokeh", inline=True, logo=False)\n'
        'pn.extension("katex", inline=True)\n'
        "inline_style_sheets()  # HoloViews output too\n"
        "settings = Settings(seed=0)"
    ),
    # --- step 1 ---------------------------------------------------------------------------------------
    md(
        "## Step 1. Rewinding one noisy release\n\n"
        "**Question.** We release f(x) + B(T₁) with a lot of noise, then f(x) + B(T₂) with less, and so on, "
        "every release a point of *one* Brownian path B. The analyst stops once the answer looks good enough. "
        "What has been paid for, in privacy?"
    ),
    code("rewind = sc.rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, rng=0)\nrewind_plot(rewind)"),
    md(
        "**What to notice.**\n\n"
        "- The releases (dots) lie on the walk: a later release refines an earlier one, it does not add fresh "
        "noise.\n"
        "- psi(T_n) is the ex-post epsilon of stopping after release n when the stop reads the releases. The "
        "grey curve: releases 1..n as independent Gaussian releases, composed exactly at the same delta "
        "(`frame_composition`; their privacy losses add). Hover either curve to read it.\n"
        "- The default stop reads the releases: the analyst asks whether f(x) is below a public cut-off and "
        "stops at the first release whose interval (wide enough to hold at all 120 releases at once, 90%) "
        "leaves the cut-off out. Because it reads the releases, it pays psi(T_N); had the release been fixed "
        "in advance, one Gaussian release at T_N (`frame_single`) would be its whole price."
    ),
    code(
        "n = rewind.stop_frame\n"
        'print(f"stop after release {n + 1} of {rewind.frame_times.size}: f(x) is {rewind.stop_decision} the "\n'
        '      f"cut-off {rewind.cutoff:g}")\n'
        'print(f"psi(T_N) = {rewind.stop_epsilon:.3g}; one release fixed in advance = {rewind.frame_single[n]:.3g}; "\n'
        '      f"exact composition = {rewind.frame_composition[n]:.3g}")\n'
        "print(sc.rewind_headline(rewind).text)"
    ),
    md(
        "Now live: drag **epsilon** (or use the buttons to play the rewind). The view recomputes in the kernel. "
        "Each live view in this tour has its own `Settings` (Panel 1.9 fails to update views of one settings "
        "object shown in several notebook outputs); the whole lab at the end drives all views from one."
    ),
    code('live_rewind = RewindView(settings)\npn.Column(LogSlider(settings, "epsilon", "epsilon"), live_rewind)'),
    md(
        "**Exercise.** Does the default stop depend on the seed? And the stop fixed in advance "
        '(`stop_rule="confidence"`)? What does each cost?\n\n'
        + answer(
            "The default rule reads the releases, so its stop moves with the path; the rule fixed in advance "
            "compares the 90% quantile of ||B(T_n)|| with the target, reads T_n only, and stops at the same "
            "release for every seed, where it costs one Gaussian release (`frame_single`), not psi(T_N). Check "
            "it:\n\n"
            "```python\n"
            "decide = [sc.rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, rng=s) for s in range(200)]\n"
            'fixed = [sc.rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, stop_rule="confidence", '
            "rng=s) for s in range(200)]\n"
            "print(np.percentile([r.stop_frame for r in decide], [5, 50, 95]), {r.stop_frame for r in fixed})\n"
            "print(fixed[0].stop_epsilon, fixed[0].frame_epsilon[fixed[0].stop_frame])\n"
            "```"
        )
    ),
    # --- step 2 ---------------------------------------------------------------------------------------
    md(
        "## Step 2. Why a boundary?\n\n"
        "**Question.** When the stop depends on what was released, the privacy loss at the stop is random. "
        "Which curve bounds the realized loss at *all* times at once, and what does that uniformity cost in "
        "noise?"
    ),
    code("curves = sc.boundary_curves(epsilon=1.0, delta=1e-6, rho=1.0)\nboundary_plot(curves)"),
    md(
        "**What to notice.**\n\n"
        "- psi_M (mixture, parameter rho) and psi_L (linear, tuned at epsilon) fall with the noise variance t.\n"
        "- Lower panel: the variance each target epsilon needs, next to one Gaussian release with plain DP and "
        "with the same probabilistic guarantee (pDP). The gaps are two separate prices: pDP over DP, and "
        "time-uniformity over pDP."
    ),
    code('for name, ratio in curves.gaps.items():\n    print(f"{name:18} variance ratio {ratio:.3g}")'),
    md(
        "Simulated losses against one fixed neighbour, under psi_M with a loose delta = 0.05 so that "
        "crossings can be seen:"
    ),
    code(
        "loose = sc.mixture_boundary(delta=0.05, rho=1.0)\n"
        "study = sc.crossing_study(loose, t=np.geomspace(1, 1e4, 200), paths=2000, rng=0)\n"
        "crossing_plot(study)"
    ),
    code("BoundaryView(Settings(seed=0))"),
    md(
        "**Exercise.** The theorem says a path crosses psi_M *ever* with probability at most delta. Is the "
        "simulated crossing frequency consistent with delta = 0.05?\n\n"
        + answer(
            "It must be at most 0.05 up to Monte Carlo error (about ±0.01 at 2,000 paths). The simulation "
            "looks at a finite window of times only, which can only lower the frequency. Check it:\n\n"
            "```python\n"
            "print(study.frequency, np.sqrt(0.05 * 0.95 / study.paths))\n"
            "```"
        )
    ),
    # --- step 3 ---------------------------------------------------------------------------------------
    md(
        "## Step 3. Noise when epsilon is large\n\n"
        "**Question.** At the *same* epsilon, how much error do Laplace, Staircase and Arete noise add, and "
        "which of them can be split among users who each add a share?"
    ),
    code(
        "table = frontier.load()\n"
        "noise6 = sc.noise_comparison(epsilon=6.0)  # the Arete calibrated at epsilon = 6, here and now\n"
        "(noise_plot(noise6) + loss_profile_plot(noise6)).cols(1)  # one column: fits a notebook's width"
    ),
    md(
        "**What to notice.**\n\n"
        "- On the log scale the Staircase's steps and the Arete's peak at zero show; the linear scale hides "
        "them.\n"
        "- The loss profile: the worst-case privacy loss at each output distance. All three stay at or below "
        "epsilon at the sensitivity (distance 1): the comparison is at the same epsilon.\n"
        "- The numbers below are computed from the record; `share_std` is None for a noise that cannot be "
        "split into independent shares."
    ),
    code(
        "print(noise6.arete_note)\n"
        'for name in ("Laplace", "Staircase", "Arete"):\n'
        "    share = noise6.share_std[name]\n"
        '    split = f"{share:.3g}" if share is not None else "cannot be split"\n'
        '    print(f"{name:9} E|Z| {noise6.mean_abs[name]:.4g}  worst-case epsilon {noise6.certified[name]:.5g}  "\n'
        '          f"share std for {noise6.users} users: {split}")'
    ),
    md(
        "The frontier: E|Z| against epsilon over the shipped table. Where curves cross depends on epsilon: "
        "read it off the plot rather than from a slogan."
    ),
    code("frontier_plot(table)"),
    md(
        "The authors' local-search set for epsilon = 6 (paper B, Fig. 4) is a fixed (alpha, theta, lambda). "
        "Its worst-case epsilon is a numerical supremum over all outputs:"
    ),
    code(
        'local = sc.arete_for(epsilon=6.0, source="local-search")\n'
        'print(f"worst-case epsilon {local.privacy_loss(1.0):.5f}, E|Z| {local.mean_abs():.4g}")'
    ),
    code(
        'noise_settings = Settings(seed=0, epsilon=6.0, arete_source="calibrated")\n'
        'pn.Column(LogSlider(noise_settings, "epsilon", "epsilon"), NoiseView(noise_settings))'
    ),
    md(
        "**Exercise.** Using the table, find the smallest tabulated epsilon at which the calibrated Arete's E|Z| "
        "is below Laplace's.\n\n"
        + answer(
            "The column `arete_over_laplace_abs` holds the ratio; below the crossover the calibrated Arete does "
            "not improve on Laplace (the app then shows Laplace itself, the Arete family's limit). Compute:\n\n"
            "```python\n"
            'ratio = table["arete_over_laplace_abs"]\n'
            'print(table["epsilon"][np.isfinite(ratio) & (ratio < 1)].min())\n'
            "```"
        )
    ),
    # --- step 4 ---------------------------------------------------------------------------------------
    md(
        "## Step 4. Stopping on a private check\n\n"
        "**Question.** A logistic regression is released at increasing epsilon, and we stop once its accuracy "
        "on the *private* records is good enough. The check reads private data: what does the stop cost, and "
        "how often does a noisy check stop too early (a false halt)?"
    ),
    code(
        "run = sc.rat_run(epsilon=1.0, delta=1e-6, rho=1.0, rng=0)\n"
        "study_rat = sc.rat_study(epsilon=1.0, delta=1e-6, rho=1.0, runs=500, rng=0)\n"
        "(rat_run_plot(run) + rat_study_plot(study_rat)).cols(1)"
    ),
    md(
        "**What to notice.**\n\n"
        "- One run: the noisy accuracy against the noisy threshold; the halt is the first round where the first "
        "passes the second.\n"
        "- Over many runs, per rule: the stopping round, the ex-post epsilon (hold-out checks public data: "
        "psi(T_N); AboveThreshold: psi(T_N) plus its own fixed epsilon; RAT: 2 psi(T_N)) and the true error at "
        "the halt against the target."
    ),
    code(
        "for rule, (cost, stopped, within, error) in study_rat.summary().items():\n"
        '    print(f"{rule:15} median ex-post epsilon {cost:.3g}, stopped {stopped:.0%}, "\n'
        '          f"halts within the target {within:.0%}, median error at the halt {error:.3f}")'
    ),
    code("RatView(Settings(seed=0))"),
    md(
        "**Exercise.** Which rule has the largest share of false halts here, and why can a false halt happen "
        "at all?\n\n"
        + answer(
            "A false halt is a halt with the true error above the target: 1 minus the third number above. It "
            "happens because the check compares *noisy* accuracy with a *noisy* threshold. Compute:\n\n"
            "```python\n"
            "print({rule: 1 - s[2] for rule, s in study_rat.summary().items()})\n"
            "```"
        )
    ),
    # --- step 5 ---------------------------------------------------------------------------------------
    md(
        "## Step 5. Paper A's experiments\n\n"
        "**Question.** On a task, how does the loss of Brownian-mechanism releases compare with Laplace noise "
        "reduction across epsilon, and what ex-post epsilon does each stopping rule pay to reach a target loss?"
    ),
    code(
        'task = experiments.default_task("logistic", n=2000, rng=0)\n'
        "target = experiments.public_target(task, trials=100, rng=1)\n"
        "result = experiments.run_experiment(\n"
        "    task, epsilons=experiments.default_epsilons(20), target=target, trials=100, rng=2\n"
        ")\n"
        "experiment_plot(result)"
    ),
    md(
        "**What to notice.** The bands are pointwise 95% confidence bands of the mean loss, not the spread of "
        "single trials. The boxes show the middle half of the trials; whiskers reach 1.5 times the box's width "
        "beyond it (points beyond are drawn one by one). The target comes from "
        "the public hold-out rows only (`experiments.public_target`), so choosing it costs no privacy."
    ),
    code(
        "within = result.stopping.within_fraction()  # halted with the checked loss within the target\n"
        "for (mechanism, rule), (median, halted) in result.stopping.summary().items():\n"
        '    print(f"{mechanism:8} {rule:15} median ex-post epsilon {median:.3g}, halted {halted:.0%}, "\n'
        '          f"within the target {within[(mechanism, rule)]:.0%}")'
    ),
    md(
        "**Exercise.** How much narrower do the bands get with four times as many trials?\n\n"
        + answer(
            "About half as wide: the half-width is 1.96 standard deviations over the square root of the number "
            "of trials. Compare:\n\n"
            "```python\n"
            "more = experiments.tradeoff_experiment(task, epsilons=experiments.default_epsilons(20), trials=400,"
            " rng=2)\n"
            "print(np.median((more.bm_high - more.bm_low) / (result.tradeoff.bm_high - result.tradeoff.bm_low)))\n"
            "```"
        )
    ),
    # --- the whole lab --------------------------------------------------------------------------------
    md("## The whole lab\n\nAll views with the global controls, as in the served app (`python -m dashboard.serve`)."),
    code("NoiseLab(Settings())"),
]
nb = nbf.v4.new_notebook(
    cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
)
Path(__file__).with_name("tour.ipynb").write_text(nbf.writes(nb))
