"""A lecture hall on one URL: N concurrent sessions moving the epsilon slider, measured at the
websocket (loopback only; counts and durations are bounded by the options).

Latency is the time from sending a change to the first plot data or headline the server sends back
for it (the visible answer; the loading spinner, which comes first, does not count).

Each simulated student is a real Bokeh session: the page is fetched over HTTP, its websocket opened
and the document pulled, exactly as a browser does; then the student sends a slider change (a drag
end: ``value`` and ``value_throttled``) every ``--think`` seconds.

Reported, for each server (1 and 2 processes) and each N (1, 10, 25, 50 by default):
  * p50/p95 latency, idle and while one more session runs the heaviest action (dropout curves at
    epsilon 10 for a fresh number of users, about 4 s of compute on both cores);
  * memory: the server's resident size per open session, and after 20 and after 200 open/close cycles;
  * 20 page loads at once: the time until each page's document is ready, and the p95 latency of five
    other sessions meanwhile.

Run: python benchmarks/bench_load.py [--quick] [--sessions 1 10 25 50] [--procs 1 2] [--root DIR]
``--root`` serves another checkout (e.g. a ``git worktree`` of an older commit) for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
CHANGE_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def walk_objects(node, found):
    """Every Bokeh model object ({"type": "object", "id": ...}) inside a JSON message."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "id" in node:
            found.setdefault(node["id"], node)
        for value in node.values():
            walk_objects(value, found)
    elif isinstance(node, list):
        for value in node:
            walk_objects(value, found)


def carries_data(events, marker="&lt;h5&gt;") -> bool:
    """A change to plot data or to a text holding ``marker`` (by default a view's headline): the
    answer to a slider change."""
    for event in events:
        if event.get("kind") == "ModelChanged" and event.get("attr") == "text" and marker in str(event.get("new")):
            return True
        if event.get("kind") in ("ColumnDataChanged", "ColumnsStreamed", "ColumnsPatched"):
            return True
        if event.get("kind") == "ModelChanged" and event.get("attr") == "data":
            return True
    return False


DOCUMENT_READY = {
    "kind": "MessageSent",
    "msg_type": "bokeh_event",
    "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map", "entries": []}},
}


class Student:
    """One browser session, spoken to in Bokeh's websocket protocol."""

    def __init__(self, base, ca_certs=None):
        self.base = base
        self.ca_certs = ca_certs  # a CA file for https (a proxy's own certificate)
        self.cookie = None  # what the page's answer set (a proxy's sticky-session cookie), sent back
        self.models = {}
        self.pending = None  # (sent_at, future) of the change awaiting its data
        self.marker = "&lt;h5&gt;"
        self.ready_at = None

    async def open(self, query=""):
        start = time.perf_counter()
        # threads of their own: in asyncio's default executor (6 threads here) queued fetches held up the
        # websocket's address lookup, so no page was ready before every page's HTML had come
        html, self.cookie = await asyncio.get_running_loop().run_in_executor(
            FETCH_THREADS, fetch_page, self.base + "/" + query, self.ca_certs
        )
        token = re.search(r'"token":\s*"([^"]+)"', html).group(1)
        ws_url = self.base.replace("https://", "wss://").replace("http://", "ws://") + "/ws"
        headers = {"Origin": self.base, **({"Cookie": self.cookie} if self.cookie else {})}
        request = HTTPRequest(  # a queue of page loads is slow
            ws_url, connect_timeout=600, request_timeout=600, headers=headers, ca_certs=self.ca_certs
        )
        self.ws = await websocket_connect(request, subprotocols=["bokeh", token], max_message_size=200 * 2**20)
        self.frames = []
        await self._read_message()  # ACK
        await self._send("PULL-DOC-REQ", {})
        while True:
            header, content = await self._read_message()
            if header["msgtype"] == "PULL-DOC-REPLY":
                walk_objects(content, self.models)
                break
        self.ready_at = time.perf_counter() - start
        # what a browser sends once it has rendered the page: Panel applies later changes (and runs its
        # onload callbacks) only after it, so a client without it never sees a hidden tab's first show
        await self._send("PATCH-DOC", {"events": [DOCUMENT_READY]})
        self.reader = asyncio.get_running_loop().create_task(self._listen())
        return self

    def find(self, name, **attributes):
        for obj in self.models.values():
            attrs = obj.get("attributes", {})
            kind = obj.get("name") or ""
            if (kind == name or kind.endswith("." + name)) and all(attrs.get(k) == v for k, v in attributes.items()):
                return obj["id"]
        return None

    async def _send(self, msgtype, content):
        header = {"msgid": uuid.uuid4().hex, "msgtype": msgtype}
        for part in (header, {}, content):
            await self.ws.write_message(json.dumps(part))

    async def _read_message(self):
        parts = []
        while len(parts) < 3:
            fragment = await self.ws.read_message()
            if fragment is None:
                raise ConnectionError("websocket closed")
            if isinstance(fragment, bytes):
                continue
            parts.append(json.loads(fragment))
        header = parts[0]
        for _ in range(2 * header.get("num_buffers", 0)):
            await self.ws.read_message()
        return header, parts[2]

    async def _listen(self):
        try:
            while True:
                header, content = await self._read_message()
                if header["msgtype"] != "PATCH-DOC":
                    continue
                events = content.get("events", [])
                walk_objects(content, self.models)
                if self.pending is not None and carries_data(events, self.marker):
                    sent, future = self.pending
                    self.pending = None
                    if not future.done():
                        future.set_result(time.perf_counter() - sent)
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception:
            pass

    async def change(self, model_id, attrs: dict) -> float:
        future = asyncio.get_running_loop().create_future()
        self.pending = (time.perf_counter(), future)
        events = [
            {"kind": "ModelChanged", "model": {"id": model_id}, "attr": attr, "new": value}
            for attr, value in attrs.items()
        ]
        await self._send("PATCH-DOC", {"events": events})
        return await asyncio.wait_for(future, CHANGE_TIMEOUT)

    async def click(self, model_id):
        event = {
            "kind": "MessageSent",
            "msg_type": "bokeh_event",
            "msg_data": {
                "type": "event",
                "name": "button_click",
                "values": {"type": "map", "entries": [["model", {"id": model_id}]]},
            },
        }
        await self._send("PATCH-DOC", {"events": [event]})

    async def move_epsilon(self, epsilon) -> float:
        slider = self.find("Slider", title="epsilon")
        position = math.log10(epsilon)
        return await self.change(slider, {"value": position, "value_throttled": position})

    def close(self):
        self.reader.cancel()
        self.ws.close()


FETCH_THREADS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="page-fetch")


def _fetch(url):
    with urllib.request.urlopen(url, timeout=120) as resp:
        return resp.read().decode()


def fetch_page(url, ca_certs=None):
    """(HTML, the cookie it set as 'name=value' or None), over https with ``ca_certs`` as the CA."""
    context = ssl.create_default_context(cafile=ca_certs) if url.startswith("https://") else None
    with urllib.request.urlopen(url, timeout=120, context=context) as resp:
        cookie = resp.headers.get("Set-Cookie")
        return resp.read().decode(), cookie.split(";")[0] if cookie else None


async def heavy_action(student, stop: asyncio.Event, record: list, seed: int):
    """One session (already open on the noise tab, epsilon 10) that keeps asking for dropout curves for
    a fresh number of users (never asked before in the run, so never answered from the shared store):
    a new number of users brings new curves, unasked."""
    rng = np.random.default_rng([seed, 99])
    users = student.find("Spinner", title="users n")
    while not stop.is_set():
        started = time.perf_counter()
        future = asyncio.get_running_loop().create_future()
        student.marker = "users, the Arete"  # the finished curves come back with their sentence
        student.pending = (started, future)
        await student._send(
            "PATCH-DOC",
            {
                "events": [
                    {
                        "kind": "ModelChanged",
                        "model": {"id": users},
                        "attr": "value",
                        "new": int(rng.integers(200, 100_000)),
                    }
                ]
            },
        )
        try:
            record.append(await asyncio.wait_for(future, 60))
        except TimeoutError:
            record.append(float("nan"))
        student.marker = "&lt;h5&gt;"


async def students_moving(base, n, changes, think, rng_seed=0, students=None):
    rng = np.random.default_rng(rng_seed)
    students = students or [await Student(base).open() for _ in range(n)]
    latencies = []

    async def run(student, k):
        local = np.random.default_rng([rng_seed, k])
        await asyncio.sleep(float(local.uniform(0, think)))
        for _ in range(changes):
            epsilon = float(10 ** local.uniform(-0.5, 0.9))
            try:
                latencies.append(await student.move_epsilon(epsilon))
            except TimeoutError:
                latencies.append(float("nan"))
            await asyncio.sleep(float(local.uniform(0.5, 1.5) * think))

    del rng
    await asyncio.gather(*(run(s, k) for k, s in enumerate(students)))
    return students, latencies


def summary(latencies):
    arr = np.asarray(latencies, dtype=float) * 1e3
    lost = int(np.isnan(arr).sum())
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return "no replies"
    text = f"p50 {np.median(arr):7.0f} ms  p95 {np.percentile(arr, 95):7.0f} ms  (n = {arr.size}"
    return text + (f", {lost} timed out)" if lost else ")")


def rss_mb(pid) -> float:
    total = 0.0
    pids = [pid, *_children(pid)]
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += float(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def _children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def start_server(root, procs):
    port = free_port()
    args = [sys.executable, "-m", "dashboard.serve", "--port", str(port)]
    if procs > 1:
        args += ["--num-procs", str(procs)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            _fetch(base + "/")
            return proc, base
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("server did not start")


async def measure(root, procs, sessions, changes, think, cycles, burst):
    """One server: the latency table, the memory figures and the burst of page loads."""
    proc, base = start_server(root, procs)
    print(f"\n== {procs} process(es), serving {root}")
    try:
        await (await Student(base).open()).move_epsilon(2.0)  # warm caches
        base_rss = rss_mb(proc.pid)
        for n in sessions:
            students, idle = await students_moving(base, n, changes, think, rng_seed=n)
            rss = rss_mb(proc.pid)
            heavy_student = await Student(base).open("?tour=5")  # the tour's noise step, at epsilon 10
            await asyncio.sleep(2.0)
            stop, record = asyncio.Event(), []
            heavy = asyncio.get_running_loop().create_task(heavy_action(heavy_student, stop, record, n))
            _, busy = await students_moving(base, n, changes, think, rng_seed=1000 + n, students=students)
            stop.set()
            await heavy
            for s in [*students, heavy_student]:
                s.close()
            heavy_s = [x for x in record if np.isfinite(x)]
            print(f"N = {n:3d}  idle: {summary(idle)}")
            print(
                f"         with a heavy action: {summary(busy)};  dropout curves took "
                f"{', '.join(f'{x:.1f}' for x in heavy_s) or 'n/a'} s"
            )
            print(f"         memory {rss:7.0f} MB ({(rss - base_rss) / n:5.1f} MB per open session)")
            await asyncio.sleep(1.0)
        if burst:
            others, _ = await students_moving(base, 5, 0, think)
            load_task = asyncio.gather(*(Student(base).open() for _ in range(burst)))
            _, during = await students_moving(base, 5, max(changes, 6), think / 2, rng_seed=2, students=others)
            loaded = await load_task
            ready = [s.ready_at for s in loaded]
            for s in [*loaded, *others]:
                s.close()
            print(
                f"{burst} page loads at once: ready in median {np.median(ready):.1f} s, max {max(ready):.1f} s; "
                f"5 other sessions meanwhile: {summary(during)}"
            )
        if cycles:
            marks = {}
            for k in range(1, cycles + 1):
                (await Student(base).open()).close()
                if k in (20, cycles):
                    await asyncio.sleep(25)  # Bokeh discards closed sessions after about 15-17 s
                    marks[k] = rss_mb(proc.pid)
            if 20 in marks and cycles in marks:
                print(
                    f"memory after 20 open/close cycles {marks[20]:.0f} MB, after {cycles}: {marks[cycles]:.0f} MB "
                    f"({100 * (marks[cycles] / marks[20] - 1):+.1f}%)"
                )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            print("the server took more than 120 s to stop")
            proc.kill()
            proc.wait()


def main(argv=None):
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sessions",
        type=int,
        nargs="*",
        default=[1, 10, 25, 50],
        help="numbers of concurrent sessions (none: only the page loads and the cycles)",
    )
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--changes", type=int, default=8, help="slider changes per session and phase")
    parser.add_argument("--think", type=float, default=2.0, help="seconds between one student's changes")
    parser.add_argument("--cycles", type=int, default=200, help="open/close cycles for the memory check (0: skip)")
    parser.add_argument("--burst", type=int, default=20, help="page loads at once (0: skip)")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to serve (for before/after runs)")
    parser.add_argument("--quick", action="store_true", help="N = 1 and 10, one process, 40 cycles, 10 loads")
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.procs, args.cycles, args.burst, args.changes = [1, 10], [1], 40, 10, 5
    if max(args.sessions, default=0) > 100 or args.cycles > 500 or args.burst > 50:
        parser.error("bounded: at most 100 sessions, 500 cycles and 50 simultaneous loads")
    print(f"{os.cpu_count()} cores; {args.changes} changes per session, one every ~{args.think} s")
    for k, procs in enumerate(args.procs):  # the open/close cycles once, on the first server
        asyncio.run(
            measure(
                args.root.resolve(),
                procs,
                args.sessions,
                args.changes,
                args.think,
                args.cycles if k == 0 else 0,
                args.burst,
            )
        )


if __name__ == "__main__":
    main()
