"""What each of the server's replacements of Bokeh internals (``dashboard.shortcuts``) saves of a page's
build: the lab's first page built and serialised as the server sends it (``create_app().server_doc`` then
``Document.to_json``), in fresh processes, one per configuration: all replacements, none, and all but one
for each. The configurations run in turn, round after round, so a busy machine slows them alike; each
process warms up (two pages) and then times ``--pages`` pages (process CPU time, median).

This is the page build alone, in process: the served figure (HTTP, websocket, the after-attach updates) is
``bench_page.py``'s, whose ``--leave-out NAME`` serves the lab without one replacement.

Run: python benchmarks/bench_shortcuts.py [--rounds 5] [--pages 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
from bokeh.document import Document
from panel.io.state import set_curdoc
from dashboard.app import create_app
from dashboard.serve import tune_garbage_collection
from dashboard.shortcuts import take_shortcuts

taken = take_shortcuts(sys.argv[1])
tune_garbage_collection()

def page():
    doc = Document()
    start = time.process_time()
    with set_curdoc(doc):
        create_app().server_doc(doc)
    doc.to_json()
    return time.process_time() - start, len(doc.models)

for _ in range(2):
    page()
times = [page() for _ in range(int(sys.argv[2]))]
print(json.dumps({"times": [t for t, _ in times], "models": times[0][1], "taken": taken}))
"""


def run(setting: str, pages: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, setting, str(pages)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONMALLOC": "malloc"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pages", type=int, default=8)
    args = parser.parse_args(argv)
    if not (1 <= args.rounds <= 50 and 1 <= args.pages <= 100):
        parser.error("--rounds 1 to 50, --pages 1 to 100")
    sys.path.insert(0, str(ROOT))
    from dashboard.shortcuts import SHORTCUTS

    names = [f.__name__ for f in SHORTCUTS]
    configs = {"all": "", "none": "off", **{f"without {n}": f"-{n}" for n in names}}
    times: dict[str, list[float]] = {c: [] for c in configs}
    facts = {}
    for k in range(args.rounds):
        order = list(configs)[k % len(configs) :] + list(configs)[: k % len(configs)]  # rotated
        for config in order:
            result = run(configs[config], args.pages)
            times[config].append(statistics.median(result["times"]))
            facts[config] = result
        print(f"round {k + 1} of {args.rounds} done", file=sys.stderr)
    import bokeh
    import panel

    every = statistics.median(times["all"])
    versions = f"Panel {panel.__version__}, Bokeh {bokeh.__version__}"
    print(f"{os.cpu_count()} cores; {versions}; {facts['all']['models']} models on the first page")
    print(f"medians over {args.rounds} rounds of {args.pages} pages\n")
    print("| configuration | CPU per page build | against all | taken |")
    print("| --- | --- | --- | --- |")
    for config in configs:
        median = statistics.median(times[config])
        taken = [n for n, t in facts[config]["taken"].items() if t]
        print(f"| {config} | {1e3 * median:.0f} ms | {median / every:.2f}x | {len(taken)} |")
    print("\n| replacement | taken here | saving of a page build (without it -> with all) | spread over rounds |")
    print("| --- | --- | --- | --- |")
    for name in names:
        without = times[f"without {name}"]
        savings = [1 - a / w for a, w in zip(times["all"], without, strict=True)]
        print(
            f"| {name} | {facts['all']['taken'][name]} | {100 * (1 - every / statistics.median(without)):+.1f}% "
            f"| {100 * min(savings):+.1f}% to {100 * max(savings):+.1f}% |"
        )
    none = statistics.median(times["none"])
    print(f"\nall {len(names)} against none: {every / none:.2f}x ({100 * (1 - every / none):.0f}% saved)")


if __name__ == "__main__":
    main()
