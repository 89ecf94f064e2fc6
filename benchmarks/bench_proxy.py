"""A class through Debian's nginx against direct serving, on 2 web processes each, in one run.

* **proxy**: nginx (``python -m dashboard.deploy nginx``, HTTPS, cookie-sticky) in front of two
  ``dashboard.serve`` backends, one process each (``benchmarks/proxy_rig.py``);
* **direct**: one ``dashboard.serve --num-procs 2`` (the kernel spreads connections over its two
  processes; a websocket that reaches the other process than its page builds the session again).

Each burst opens N pages at once (a Bokeh protocol client per page: the HTML, the websocket, the document
pulled; ``bench_load.Student``) and reports the first, median and last page ready, the server CPU per page
(user + system of the server's processes over the burst, divided by N; nginx's own beside it) and, for the
proxy, the sessions
built beyond one per page (each backend's ``/healthz``). The two set-ups alternate, burst by burst, so a
change in the machine's load hits both; read the ratios.

Run: python benchmarks/bench_proxy.py [--bursts 50 200] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import Student, free_port
from bench_page import cpu_seconds
from proxy_rig import Backend, Proxy, answers, wait_until


async def burst(base, count, ca=None):
    students = [Student(base, ca_certs=ca) for _ in range(count)]
    start = time.perf_counter()
    await asyncio.gather(*(s.open() for s in students))
    ready = np.sort([s.ready_at for s in students])
    for s in students:
        s.reader.cancel()
        s.ws.close()
    await asyncio.sleep(0)
    return ready, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--bursts", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-proxy-"))
    public = free_port()
    backends = [Backend(folder, public).start(), Backend(folder, public).start()]
    proxy = Proxy(folder, public, backends).start()
    direct_port = free_port()
    log = open(folder / "direct.log", "w")
    direct = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--port", str(direct_port), "--num-procs", "2"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    direct_base = f"http://127.0.0.1:{direct_port}"
    wait_until(lambda: answers(direct_base + "/healthz"))
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {os.cpu_count()} cores")
    print(
        f"{'set-up':<8} {'pages':>5}  {'first s':>7} {'median s':>8} {'last s':>7}  {'CPU s/page':>10}"
        f"  {'nginx CPU s/page':>16}  extra builds"
    )
    results: dict = {}
    try:
        asyncio.run(burst(proxy.base, 4, proxy.ca))  # warm both
        asyncio.run(burst(direct_base, 4))
        for _ in range(args.rounds):
            for count in args.bursts:
                for name in ("proxy", "direct"):
                    if name == "proxy":
                        cpu0 = sum(b.cpu() for b in backends)
                        built0 = sum(b.built() for b in backends)
                        nginx0 = cpu_seconds(proxy.proc.pid)
                        ready, _ = asyncio.run(burst(proxy.base, count, proxy.ca))
                        cpu = sum(b.cpu() for b in backends) - cpu0
                        nginx = f"{(cpu_seconds(proxy.proc.pid) - nginx0) / count:16.4f}"
                        extra = str(sum(b.built() for b in backends) - built0 - count)
                    else:
                        cpu0 = cpu_seconds(direct.pid)
                        ready, _ = asyncio.run(burst(direct_base, count))
                        cpu = cpu_seconds(direct.pid) - cpu0
                        extra, nginx = "n/a", f"{'-':>16}"
                    results.setdefault((name, count), []).append((ready, cpu / count))
                    print(
                        f"{name:<8} {count:>5}  {ready[0]:7.2f} {np.median(ready):8.2f} {ready[-1]:7.2f}"
                        f"  {cpu / count:10.3f}  {nginx}  {extra}",
                        flush=True,
                    )
        print("medians over the rounds (proxy / direct):")
        for count in args.bursts:
            p = results[("proxy", count)]
            d = results[("direct", count)]
            last = np.median([r[-1] for r, _ in p]) / np.median([r[-1] for r, _ in d])
            cpu = np.median([c for _, c in p]) / np.median([c for _, c in d])
            print(f"  {count} pages: last page ready {last:.2f}x, server CPU per page {cpu:.2f}x")
        statuses = proxy.statuses()
        print(f"proxy: {len(statuses)} requests, {sum(s >= 500 for s in statuses)} answered 5xx")
    finally:
        proxy.stop()
        for b in backends:
            b.stop()
        direct.terminate()
        direct.wait(timeout=15)
        log.close()


if __name__ == "__main__":
    main()
