"""Dashboard latency: server-side time per slider change and per animation frame, and in the
browser the time from a slider change to the redrawn plot and to the first ready page.

Server side (in-process): each view's update on 60 random settings; the rewind's frame update
on 240 frames. Browser: the served app (README command) in headless Chromium; 25 key presses
on the epsilon slider, each timed until the boundary curve's data changes in the page.

Run: python benchmarks/bench_dashboard.py [--no-browser]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dashboard.app import NoiseLab  # noqa: E402


def stats(samples):
    arr = np.asarray(samples) * 1e3
    return f"median {np.median(arr):7.2f} ms   p95 {np.percentile(arr, 95):7.2f} ms   (n = {arr.size})"


def timed(func, *args):
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def server_side():
    lab = NoiseLab()
    for view in lab.views:
        view.set_active(True)  # time every view as if on screen
    s = lab.settings
    rng = np.random.default_rng(0)
    cases = {
        "rewind (live)": lab.rewind.recompute,
        "boundaries: curves (live)": lab.boundaries.update_curves,
        "boundaries: simulated paths (on release)": lab.boundaries.update_study,
        "noise: densities + certificate (on release)": lab.noise.update,
        "RAT: one run (live)": lab.rat.update_run,
        "RAT: 1,000-run study (on release)": lab.rat.update_study,
    }
    results = {name: [] for name in cases}
    for _ in range(60):
        s.param.update(
            epsilon=float(10 ** rng.uniform(-1, 1.3)),
            delta=float(10 ** rng.uniform(-9, -2)),
            rho=float(10 ** rng.uniform(-2, 2)),
            target=float(10 ** rng.uniform(-0.5, 1)),
        )
        for name, func in cases.items():
            results[name].append(timed(func))
    print("server side, per settings change:")
    for name, samples in results.items():
        print(f"  {name:<45} {stats(samples)}")
    frames = [timed(lab.rewind.show_frame, k % 120) for k in range(240)]
    print(f"  {'rewind animation frame':<45} {stats(frames)}")


def browser():
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.ui.conftest import _free_port, _wait_http, bokeh_value, show_tab, wait_for_app

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_http(url)
        with sync_playwright() as p:
            chrome = p.chromium.launch(
                executable_path=shutil.which("chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
            )
            page = chrome.new_page(viewport={"width": 1400, "height": 1000})
            loads = []
            for _ in range(5):
                start = time.perf_counter()
                page.goto(url)
                wait_for_app(page)
                loads.append(time.perf_counter() - start)
            show_tab(page, "Privacy boundaries")
            handle = page.locator(".noUi-handle").first
            box = handle.bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            page.mouse.move(x, y)
            page.mouse.down()
            drags = []
            for i in range(25):  # a held drag: only the live value changes
                before = bokeh_value(page, "boundary-psi", "linear", 0)
                x += 4 if i < 12 else -4
                start = time.perf_counter()
                page.mouse.move(x, y)
                page.wait_for_function(
                    f"() => Number(Bokeh.documents[0].get_model_by_name('boundary-psi').data.linear[0]) !== {before}",
                    polling="raf",
                    timeout=10_000,
                )
                drags.append(time.perf_counter() - start)
                page.wait_for_timeout(100)
            page.mouse.up()
            page.wait_for_timeout(1000)
            handle.focus()
            redraws = []
            for i in range(25):
                before = bokeh_value(page, "boundary-psi", "linear", 0)
                start = time.perf_counter()
                handle.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
                page.wait_for_function(
                    f"() => Number(Bokeh.documents[0].get_model_by_name('boundary-psi').data.linear[0]) !== {before}",
                    polling="raf",
                    timeout=10_000,
                )
                redraws.append(time.perf_counter() - start)
                page.wait_for_timeout(600)  # let the on-release work finish before the next change
            chrome.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print("browser (headless Chromium, served app):")
    print(f"  {'first page ready':<45} {stats(loads)}")
    print(f"  {'drag step to redrawn boundary curve':<45} {stats(drags)}")
    print(f"  {'key press (change + release) to redraw':<45} {stats(redraws)}")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    server_side()
    if not args.no_browser:
        browser()


if __name__ == "__main__":
    main()
