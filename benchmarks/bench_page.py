"""Opening pages, the lab beside a floor: a minimal Panel app (``benchmarks/floor_app.py``) served the same
way. Every server is started side by side and measured in turn in one run, so a busy machine slows them
alike: read the ratios, not the seconds.

A page load is a real client: the HTML fetched over HTTP, then the websocket opened and the document
pulled (the PULL-DOC-REPLY received), as a browser does (``bench_load.Student``). Reported per server:
  * server CPU per page (user + system time of its processes over sequential page loads), HTML bytes
    and the number of Bokeh models in the document;
  * bursts of simultaneous page loads: the first, median and last page ready, and the worst reply time
    of one open session moving a slider meanwhile;
  * (the lab) the first show of each other tab and each preset, in a warm process: from the change sent
    to the last message of its answer (the server quiet for ``QUIET`` s);
  * memory (resident size) after 20 and after ``--cycles`` page open/close cycles;
  * in headless Chromium (Debian's ``chromium``), ``--chromium N`` pages opened at once (server CPU per page
    until idle, the last page showing its first plot's data), and a key press on a slider until the plot's
    data has changed in the page (the lab's epsilon on its Privacy boundaries tab; the floor's first slider).

Two floors by default: the minimal app served plainly, and served the same way as the lab ("floor, lab
settings": Bokeh validation and diagnostics off, the lab's shortcuts, its garbage-collector tuning and the C
allocator); ``--shortcuts-off`` adds the lab served with Panel and Bokeh as they ship, and ``--leave-out NAME``
the lab without one of its replacements (``benchmarks/bench_shortcuts.py`` measures each in process), and
``--inventory`` the lab's first-screen inventory of Panel objects and figures with Panel's defaults and no
logic (``floor_app.py --inventory``), on the lab's settings and plainly: what the lab's content costs (and
on the lab's settings attached in one pass as the lab attaches its page: what the lab's own work adds);
``--reuse-sessions`` that inventory with Panel's ``reuse_sessions`` on (every page opens the bare link).

Run: python benchmarks/bench_page.py [--quick] [--procs 1 2] [--bursts 20 50] [--no-browser] [--lab NAME=DIR ...]
    [--shortcuts-off] [--leave-out NAME ...] [--no-floor-lab-settings] [--inventory]
    [--reuse-sessions]
``--lab before=/tmp/old`` adds another checkout (e.g. ``git archive`` of an older commit) to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_load
from bench_load import Student, _fetch, free_port, rss_mb

ROOT = Path(__file__).resolve().parents[1]
QUIET = 1.5
TICK = os.sysconf("SC_CLK_TCK")
bench_load.CHANGE_TIMEOUT = 900.0  # a reply during a long burst is measured, not cut off


def cpu_seconds(pid) -> float:
    """User + system CPU time of a process and its children (the web processes of ``--num-procs``)."""
    total = 0.0
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    for p in [pid, *(int(x) for x in out.stdout.split())]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
        except OSError:
            pass
    return total


class Client(Student):
    """A page that also notes when the server last sent it anything."""

    refused = None  # the content of an ERROR reply: a change the server refused

    async def _read_message(self):
        header, content = await super()._read_message()
        self.last_message = time.perf_counter()
        if header["msgtype"] == "ERROR":  # its time would mean nothing
            self.refused = content
        return header, content

    async def quiet_after(self, model_id, attrs) -> float:
        """Send a change; seconds until the last message of its answer (the first one awaited)."""
        start = self.last_message = time.perf_counter()
        events = [{"kind": "ModelChanged", "model": {"id": model_id}, "attr": k, "new": v} for k, v in attrs.items()]
        await self._send("PATCH-DOC", {"events": events})
        while self.last_message == start and time.perf_counter() - start < 60:
            await asyncio.sleep(0.02)
        while time.perf_counter() - self.last_message < QUIET:
            await asyncio.sleep(0.02)
        if self.refused is not None:
            raise RuntimeError(f"the server refused the change: {self.refused}")
        return self.last_message - start


class Server:
    def __init__(self, name, root, procs, floor=False, extra=(), env=None):
        self.name, self.root, self.procs, self.floor = name, root, procs, floor
        self.extra, self.env = list(extra), dict(env or {})
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # the slider a watcher moves, and two positions it alternates between
        self.slider, self.values = ("p0", (1.0, 2.0)) if floor else ("epsilon", (0.2, 0.4))

    def start(self):
        if self.floor:
            args = [sys.executable, str(ROOT / "benchmarks" / "floor_app.py"), "--port", str(self.port)]
        else:
            args = [sys.executable, "-m", "dashboard.serve", "--port", str(self.port)]
        args += ["--num-procs", str(self.procs), *self.extra]
        env = {**os.environ, "PYTHONPATH": str(self.root), **self.env}
        self.proc = subprocess.Popen(args, cwd=self.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait(self):
        deadline = time.monotonic() + 900  # a loaded machine starts many servers slowly
        while time.monotonic() < deadline:
            try:
                _fetch(self.base + "/")
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"{self.name} did not start")

    def stop(self):
        # the floor's forked web processes outlive their parent (the lab's end with it): stop them too
        workers = bench_load._children(self.proc.pid)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for pid in workers:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    async def open(self) -> Client:
        return await Client(self.base).open()

    async def move(self, client, k) -> float:
        slider = client.find("Slider", title=self.slider)
        value = self.values[k % 2]
        return await client.change(slider, {"value": value, "value_throttled": value})


async def settle(server, window=3.0, limit=900.0) -> float:
    """Wait until ``server`` uses under 2% of a core over ``window`` seconds; returns the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        before = cpu_seconds(server.proc.pid)
        await asyncio.sleep(window)
        if cpu_seconds(server.proc.pid) - before < 0.02 * window:
            break
    return time.monotonic() - started


async def page_cost(servers, pages):
    """Sequential page loads, the servers in turn: CPU seconds per page, HTML bytes, models."""
    cpu = {s.name: 0.0 for s in servers}
    facts = {}
    for _ in range(pages):
        for server in servers:
            before = cpu_seconds(server.proc.pid)
            client = await server.open()
            await asyncio.sleep(0.3)  # the after-attach updates
            cpu[server.name] += cpu_seconds(server.proc.pid) - before
            client.close()
    for server in servers:
        html = await asyncio.to_thread(_fetch, server.base + "/")
        client = await server.open()
        facts[server.name] = (cpu[server.name] / pages, len(html.encode()), len(client.models))
        client.close()
    return facts


async def burst(server, n):
    """n page loads at once while one open page moves a slider: ready times, the worst reply."""
    watcher = await server.open()
    stop = asyncio.Event()
    replies = []

    async def keep_moving():
        k = 1  # values[0] may be the slider's start: a change to it is no change
        while not stop.is_set():
            try:
                replies.append(await server.move(watcher, k))
            except TimeoutError:
                replies.append(float("inf"))
            k += 1
            await asyncio.sleep(0.2)

    mover = asyncio.get_running_loop().create_task(keep_moving())
    start = time.perf_counter()
    pages = await asyncio.gather(*(server.open() for _ in range(n)))
    stop.set()
    await mover
    ready = sorted(p.ready_at for p in pages)
    del start
    for page in [*pages, watcher]:
        page.close()
    return ready[0], float(np.median(ready)), ready[-1], max(replies, default=float("nan"))


# the model whose data a slider press changes, and the value to watch (the floor's line is 0 at x = 0)
REDRAWN = {"floor": ("floor-line", "y", 10), "lab": ("boundary-psi", "linear", 0)}


# a page is ready when this source of its first plot has data (the lab's walk; the floors' line)
READY = {"floor": ("floor-line", "y"), "lab": ("rewind-path", "t")}


async def open_in_chromium(context, url, ready, start) -> float:
    """Open ``url`` in a new page of ``context``: seconds from ``start`` until ``ready`` holds there."""
    page = await context.new_page()
    await page.goto(url, timeout=600_000)
    await page.wait_for_function(ready, timeout=600_000)
    return time.perf_counter() - start


async def chromium_pages(servers, n=10, rounds=2):
    """``n`` headless Chromium pages opened at once on each server in turn (``rounds`` times): server CPU
    per page until the server is idle again, and seconds until the last page shows its first plot's data."""
    import shutil

    from playwright.async_api import async_playwright

    cpu = {s.name: [] for s in servers}
    last = {s.name: [] for s in servers}
    async with async_playwright() as play:
        chrome = await play.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-gpu"]
        )
        for _ in range(rounds):
            for server in servers:
                name, column = READY["floor" if server.floor else "lab"]
                ready = (
                    "() => { const d = window.Bokeh && Bokeh.documents[0];"
                    f" const m = d && d.get_model_by_name('{name}'); return !!(m && m.data.{column}.length > 0); }}"
                )
                context = await chrome.new_context(viewport={"width": 1400, "height": 1000})
                before = cpu_seconds(server.proc.pid)
                start = time.perf_counter()
                pages = (open_in_chromium(context, server.base + "/", ready, start) for _ in range(n))
                times = await asyncio.gather(*pages)
                await settle(server)
                cpu[server.name].append((cpu_seconds(server.proc.pid) - before) / n)
                last[server.name].append(max(times))
                await context.close()
                await asyncio.sleep(2)
        await chrome.close()
    return {name: (float(np.median(cpu[name])), float(np.median(last[name]))) for name in cpu}


async def slider_redraws(servers, rounds=5, presses=5):
    """In headless Chromium: a key press on the first slider until the plot's data has changed in the
    page, the servers in turn (``rounds`` x ``presses`` each); the lab on its Privacy boundaries tab."""
    import shutil

    from playwright.async_api import async_playwright

    times = {s.name: [] for s in servers}
    async with async_playwright() as play:
        chrome = await play.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-gpu"]
        )
        pages = {}
        for server in servers:
            page = await chrome.new_page(viewport={"width": 1400, "height": 1000})
            await page.goto(server.base + "/")
            name, column, index = REDRAWN["floor" if server.floor else "lab"]
            value = f"Number(Bokeh.documents[0].get_model_by_name('{name}').data.{column}[{index}])"
            await page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=300_000)
            if not server.floor:
                await page.get_by_text("Privacy boundaries", exact=True).first.click()
            await page.wait_for_function(
                f"() => {{ const m = Bokeh.documents[0].get_model_by_name('{name}'); "
                f"return m && m.data.{column}.length > 0; }}",
                timeout=300_000,
            )
            await page.wait_for_timeout(2000)
            handle = page.locator(".noUi-handle").first
            await handle.focus()
            pages[server.name] = (page, handle, value)
        for _ in range(rounds):
            for server in servers:
                page, handle, value = pages[server.name]
                for k in range(presses):
                    before = await page.evaluate(f"() => {value}")
                    start = time.perf_counter()
                    await handle.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
                    await page.wait_for_function(f"() => {value} !== {before}", polling="raf", timeout=60_000)
                    times[server.name].append(time.perf_counter() - start)
                    await page.wait_for_timeout(600)  # the on-release work ends before the next press
        await chrome.close()
    return times


async def tabs_and_presets(server):
    """The first show of tabs 2-5 and each preset, in one fresh page of a warm process."""
    from dashboard.tour import PRESETS, TABS

    client = await server.open()
    await asyncio.sleep(QUIET)
    tabs = client.find("Tabs")
    select = client.find("CustomSelect", title="Presets")  # Panel's own Select model
    if tabs is None or select is None:
        raise RuntimeError("the lab's Tabs or its Presets box is not in the document")
    shows = {TABS[i]: await client.quiet_after(tabs, {"active": i}) for i in range(1, len(TABS))}
    await client.quiet_after(tabs, {"active": 0})
    presets = {name: await client.quiet_after(select, {"value": name}) for name in PRESETS}
    client.close()
    return shows, presets


async def cycles(servers, count):
    """Open and close pages, the servers in turn; resident size after 20 and after ``count``."""
    marks = {s.name: {} for s in servers}
    for k in range(1, count + 1):
        for server in servers:
            (await server.open()).close()
        if k in (20, count):
            # Bokeh discards a closed session 15 s after, checking every 17 s; the lab gives freed memory
            # back every 30 s: after 75 s both have happened
            await asyncio.sleep(75)
            for server in servers:
                marks[server.name][k] = rss_mb(server.proc.pid)
    return marks


def row(label, cells):
    return f"| {label} | " + " | ".join(cells) + " |"


async def run(labs, procs, args):
    servers = [Server(name, root, procs) for name, root in labs]
    if args.shortcuts_off:  # the lab with Panel and Bokeh as they ship
        servers.append(Server("lab, shortcuts off", ROOT, procs, env={"NOISELAB_SHORTCUTS": "off"}))
    for name in args.leave_out:  # what one replacement saves, served
        servers.append(Server(f"lab without {name}", ROOT, procs, env={"NOISELAB_SHORTCUTS": f"-{name}"}))
    servers.append(Server("floor", ROOT, procs, floor=True))
    if args.floor_lab_settings:  # the floor served the same way as the lab (its settings and allocator)
        servers.append(
            Server(
                "floor, lab settings", ROOT, procs, floor=True, extra=["--lab-settings"], env={"PYTHONMALLOC": "malloc"}
            )
        )

    def inventory(name, *flags):  # the lab's first-screen inventory (floor_app.py --inventory), served so
        env = {"PYTHONMALLOC": "malloc"} if "--lab-settings" in flags else {}
        return Server(name, ROOT, procs, floor=True, extra=["--inventory", *flags], env=env)

    if args.inventory:  # with Panel's defaults: what its content costs; in one pass: what the lab's work adds
        servers.append(inventory("inventory, lab settings", "--lab-settings"))
        servers.append(inventory("inventory"))
        servers.append(inventory("inventory, lab settings, one pass", "--lab-settings", "--one-pass"))
    if args.reuse_sessions:  # Panel's own page-open switch, on the inventory (the lab's content)
        servers.append(inventory("inventory, lab settings, reuse_sessions", "--lab-settings", "--reuse-sessions"))
    for server in servers:
        server.start()
    try:
        for server in servers:
            server.wait()
        for server in servers:  # a first page each: imports and caches warm
            (await server.open()).close()
        await asyncio.sleep(5)
        # the lab's compute pool warms up at start (minutes of CPU on 2 cores): not a page's cost
        settled = {server.name: await settle(server) for server in servers}
        print("idle after start: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in settled.items()))
        names = [s.name for s in servers]
        print(f"\n### {procs} process(es)\n")
        print(row("", names))
        print(row("---", ["---"] * len(names)))
        facts = await page_cost(servers, args.pages)
        floor = facts["floor"][0]
        print(row("server CPU per page", [f"{facts[n][0]:.3f} s ({facts[n][0] / floor:.1f}x)" for n in names]))
        if "floor, lab settings" in facts:
            same = facts["floor, lab settings"][0]
            print(row("... against the floor on the lab's settings", [f"{facts[n][0] / same:.2f}x" for n in names]))
        if "inventory, lab settings" in facts:
            same = facts["inventory, lab settings"][0]
            print(row("... against the inventory on the lab's settings", [f"{facts[n][0] / same:.2f}x" for n in names]))
            plain = facts["inventory"][0]
            print(row("... against the inventory served plainly", [f"{facts[n][0] / plain:.2f}x" for n in names]))
        print(row("HTML bytes", [f"{facts[n][1]:,}" for n in names]))
        print(row("models", [str(facts[n][2]) for n in names]))
        for n in args.bursts:
            results = {}
            for server in servers:
                results[server.name] = await burst(server, n)
                await asyncio.sleep(3)
            fl = results["floor"]
            print(
                row(
                    f"{n} loads: first / median / all ready",
                    [
                        f"{r[0]:.1f} / {r[1]:.1f} / {r[2]:.1f} s ({r[0] / fl[0]:.1f}x / {r[2] / fl[2]:.1f}x)"
                        for r in (results[x] for x in names)
                    ],
                )
            )
            print(
                row(
                    f"{n} loads: open page's worst reply",
                    [f"{results[x][3]:.2f} s ({results[x][3] / fl[3]:.1f}x)" for x in names],
                )
            )
        if args.chromium:
            shown = await chromium_pages(servers, args.chromium)
            same = shown.get("floor, lab settings", shown["floor"])[0]
            print(
                row(
                    f"{args.chromium} Chromium pages at once: server CPU per page / last ready",
                    [f"{shown[x][0]:.3f} s ({shown[x][0] / same:.2f}x) / {shown[x][1]:.1f} s" for x in names],
                )
            )
            if "inventory, lab settings" in shown:
                inventory = shown["inventory, lab settings"][0]
                print(
                    row(
                        "... CPU against the inventory on the lab's settings",
                        [f"{shown[x][0] / inventory:.2f}x" for x in names],
                    )
                )
        if procs == 1 and args.browser:
            times = await slider_redraws(servers)
            floor_median = np.median(times["floor"])
            print(
                row(
                    "slider press to redraw in Chromium: median / p95",
                    [
                        f"{1e3 * np.median(times[x]):.0f} / {1e3 * np.percentile(times[x], 95):.0f} ms "
                        f"({np.median(times[x]) / floor_median:.1f}x)"
                        for x in names
                    ],
                )
            )
        if procs == 1 and args.tabs:
            for server in (s for s in servers if not s.floor):
                shows, presets = await tabs_and_presets(server)
                print(row(f"{server.name}: first show of tabs", [", ".join(f"{v:.2f}" for v in shows.values()) + " s"]))
                print(row(f"{server.name}: presets", [", ".join(f"{v:.2f}" for v in presets.values()) + " s"]))
        if procs == 1 and args.cycles:
            marks = await cycles(servers, args.cycles)
            print(
                row(
                    f"memory after 20 / {args.cycles} cycles",
                    [
                        f"{m[20]:.0f} / {m[args.cycles]:.0f} MB ({100 * (m[args.cycles] / m[20] - 1):+.1f}%)"
                        for m in (marks[x] for x in names)
                    ],
                )
            )
    finally:
        for server in servers:
            server.stop()


def main(argv=None):
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--bursts", type=int, nargs="*", default=[20, 50])
    parser.add_argument("--pages", type=int, default=10, help="sequential pages for the CPU figure")
    parser.add_argument("--cycles", type=int, default=200, help="open/close cycles for memory (0: skip)")
    parser.add_argument("--no-tabs", dest="tabs", action="store_false", help="skip the tabs and presets")
    parser.add_argument("--no-browser", dest="browser", action="store_false", help="skip the Chromium redraws")
    parser.add_argument(
        "--lab", action="append", default=[], metavar="NAME=DIR", help="another checkout to serve (repeatable)"
    )
    parser.add_argument(
        "--chromium",
        type=int,
        default=10,
        metavar="N",
        help="N headless Chromium pages opened at once on each server, twice: server CPU per page until idle "
        "and the last page ready (0: skip; ratios against the floor on the lab's settings)",
    )
    parser.add_argument("--quick", action="store_true", help="1 process, a burst of 20, 5 pages, 60 cycles")
    parser.add_argument(
        "--no-floor-lab-settings",
        dest="floor_lab_settings",
        action="store_false",
        help="skip the second floor (the minimal app on the lab's server settings and allocator)",
    )
    parser.add_argument(
        "--inventory",
        action="store_true",
        help="also serve the lab's first-screen inventory with Panel's defaults (floor_app.py --inventory), "
        "on the lab's settings and plainly",
    )
    parser.add_argument(
        "--reuse-sessions",
        action="store_true",
        help="also serve the inventory on the lab's settings with Panel's reuse_sessions (bare links share a render)",
    )
    parser.add_argument("--shortcuts-off", action="store_true", help="also serve the lab with NOISELAB_SHORTCUTS=off")
    parser.add_argument(
        "--leave-out",
        nargs="+",
        default=[],
        metavar="NAME",
        help="also serve the lab without this one replacement (NOISELAB_SHORTCUTS=-NAME), for each NAME",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.procs, args.bursts, args.pages, args.cycles = [1], [20], 5, 60
    if max(args.bursts, default=0) > 50 or args.cycles > 500 or (args.cycles and args.cycles < 20):
        parser.error("bounded: at most 50 loads at once; 20 to 500 cycles")
    labs = [("lab", ROOT)] + [tuple(item.split("=", 1)) for item in args.lab]
    labs = [(name, Path(root).resolve()) for name, root in labs]
    print(f"{os.cpu_count()} cores; servers: {', '.join(n for n, _ in labs)}, floor")
    for procs in args.procs:
        asyncio.run(run(labs, procs, args))


if __name__ == "__main__":
    main()
