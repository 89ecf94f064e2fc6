"""Serve the lab: ``python -m dashboard.serve [--port 5006] [--address 127.0.0.1] [--num-procs N]
[--dask-scheduler ADDRESS | --dask-local N] [--allow-host NAME] [--allow-websocket-origin HOST]``.

Secure defaults: bound to 127.0.0.1; only requests whose Host header names this machine's loopback
names (or a name given with ``--allow-host``) are answered, so a page on another site cannot drive a
local instance by DNS rebinding; websockets only from the same origins.
"""

from __future__ import annotations

if __name__ == "__main__":  # the command, not an import: its start-up steps before the heavy imports
    from dashboard.launch import start_command

    start_command(serving=True)

import argparse
import asyncio
import ctypes
import gc
import json
import logging
import math
import os
import signal
import sys
from importlib import resources

import panel as pn
from bokeh.settings import settings as bokeh_settings
from panel.io.server import DocHandler
from tornado.ioloop import PeriodicCallback
from tornado.routing import PathMatches, Rule
from tornado.web import RequestHandler

from dashboard.app import ASSETS_ROUTE, TITLE, create_app, warm_up
from dashboard.compute import ComputePool
from dashboard.hardening import allowed_hosts, as_host, harden
from dashboard.server_logging import configure_logging, quiet_closed_sockets
from dashboard.shortcuts import take_shortcuts
from dashboard.uploads import WEBSOCKET_MAX_MESSAGE_BYTES
from noisecore._validation import positive_int

log = logging.getLogger("noiselab")


class PageQueue:
    """Page builds one at a time, in arrival order, at least ``pause`` seconds apart: between two builds
    the event loop serves what arrived meanwhile (a built page's websocket and document, an open page's
    change). A page alone is built at once.

    Without it a burst of page requests is built back to back in one pass of the loop, and no page is
    ready (its document sent) before the last one is built: a class that opens the link together waits
    for the whole burst, and so does every open page's next change. The pause, measured with bench_page
    (one process, bursts of 20 and 50): 0.1 s let the pages become ready one by one but ended the burst
    at 2.3-2.5x the floor's time and 2.6-2.8x; 0.05 s at 1.9-2.1x and 2.0-2.3x, the first page ready
    after 0.5-1.0 s; 0.03 s no sooner, sometimes holding the first pages back (0.7 s and 1.6 s); 0.01 s
    and no pause ended a burst of 20 sooner (1.7-1.8x) but held every page until its end."""

    def __init__(self, pause: float = 0.05):
        self.pause = pause
        self._lock = asyncio.Lock()
        self._last_end = -math.inf

    async def __aenter__(self):
        await self._lock.acquire()
        try:
            wait = self._last_end + self.pause - asyncio.get_running_loop().time()
            if wait > 0:
                await asyncio.sleep(wait)
        except BaseException:
            self._lock.release()
            raise

    async def __aexit__(self, *exc_info):
        self._last_end = asyncio.get_running_loop().time()
        self._lock.release()


def queue_page_builds(server) -> PageQueue:
    """Route the server's page requests through a new :class:`PageQueue` (one per web process: call it
    in each)."""
    queue = PageQueue()

    class QueuedDocHandler(DocHandler):
        async def get_session(self):
            async with queue:
                return await super().get_session()

    rules = [rule for rule in server._tornado.wildcard_router.rules if rule.target is DocHandler]
    if not rules:
        raise RuntimeError("Panel's page handler was not found among the server's routes")
    for rule in rules:
        rule.target = QueuedDocHandler
    return queue


YOUNG_COLLECTION_ALLOCATIONS = 10_000  # net allocations between young collections (Python's default: 700)
MIDDLE_COLLECTIONS_PER_FULL = 100  # middle-generation collections between full ones (Python's: 10)


def tune_garbage_collection(
    young: int = YOUNG_COLLECTION_ALLOCATIONS, full: int = MIDDLE_COLLECTIONS_PER_FULL
) -> tuple[int, int, int]:
    """Run the cyclic garbage collector less often and over fewer objects: everything alive now (the
    imported modules, the app's code) is collected once and then frozen, left out of every later
    collection; a young collection waits for ``young`` net allocations, and a full one for ``full``
    middle ones. Building a page leaves about 27,000 more tracked objects than it frees. In-process, 100
    pages built with 50 kept open: with Python's defaults the collector took 33 ms of each page's 201 ms
    and ran 13 full collections of up to 0.86 s each (they traverse every open page's objects and the
    garbage of pages let go; 0.19-0.32 s with 50 open and none let go); with
    these settings 5 ms of 171 ms, no full collection, the longest 18 ms. Closed sessions are still
    collected: Panel runs a full collection after sessions end. Call only while no session is open
    (frozen objects are never freed). Returns the thresholds now in force."""
    young, full = positive_int("young", young), positive_int("full", full)
    gc.collect()
    gc.freeze()
    gc.set_threshold(young, gc.get_threshold()[1], full)
    return gc.get_threshold()


TRIM_SECONDS = 30


def release_freed_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``): True if some were given
    back; False if none were, or where there is no glibc. A closed session's memory is freed inside the
    process, but glibc keeps most of it, so without this the server's resident size only grew."""
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return False
    return bool(trim(0))


def trim_memory_periodically(server, seconds: float = TRIM_SECONDS) -> PeriodicCallback:
    """Every ``seconds``, :func:`release_freed_memory` on a worker thread (ctypes releases the GIL). It
    walks the heap holding each arena's lock, so the loop's own large allocations may wait for it meanwhile
    (a few milliseconds on a 300 MB server)."""
    trim = PeriodicCallback(lambda: server.io_loop.run_in_executor(None, release_freed_memory), seconds * 1000)
    server.io_loop.add_callback(trim.start)
    return trim


def _in_worker_process():
    """After the fork, in each worker: a fresh event loop, and the worker ends when the parent does."""
    asyncio.set_event_loop(loop := asyncio.new_event_loop())
    loop.set_exception_handler(quiet_closed_sockets)
    _stop_on_signals(loop)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: SIGTERM when the parent exits
        if os.getppid() == 1:  # the parent is already gone
            os._exit(0)


def _exit(signum, _frame):
    raise SystemExit(0)


def _stop_on_signals(loop):
    """Ctrl+C or SIGTERM stop the loop between callbacks; a Python-level handler would raise anywhere,
    even inside a garbage-collection callback, where the exit is printed as a traceback and ignored."""
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(stop_signal, _stop_asked, loop, stop_signal)


def _stop_asked(loop, signum):
    loop.noiselab_stop_signal = signum
    loop.stop()


MAX_CONTAINED_EXITS = 100  # exits raised outside a task (a plain callback) survived before the process gives up


def run_until_stopped(io_loop, limit: int = MAX_CONTAINED_EXITS) -> int | None:
    """Run ``io_loop`` until a stop signal (its number is returned) or until it stops unasked (None).
    A ``SystemExit`` or ``KeyboardInterrupt`` raised by a callback on the loop (tasks already turn theirs into errors:
    ``dashboard.hardening.contain_exits``) is logged and the loop runs on, ``limit`` times at most."""
    limit = positive_int("limit", limit)
    loop = io_loop.asyncio_loop
    for _ in range(limit):
        try:
            io_loop.start()
        except (SystemExit, KeyboardInterrupt) as exc:
            log.error("contained %s raised on the event loop; the server carries on", type(exc).__name__)
            continue
        signum = getattr(loop, "noiselab_stop_signal", None)
        if signum is None:
            log.error("the event loop stopped without a stop signal")
        return signum
    log.error("%d exits raised on the event loop: this web process ends", limit)
    return None


HEALTH_ROUTE = "/healthz"


class HealthHandler(RequestHandler):
    """``GET /healthz``: this web process's state as JSON, for a reverse proxy's checks and for monitoring
    (``pid``, ``sessions_built``: app builds since start, ``sessions_open``)."""

    def initialize(self, status):
        self._status = status

    def get(self):
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(self._status()))


def serve(
    port=5006,
    address="127.0.0.1",
    origins=None,
    show=False,
    num_procs=1,
    pool=None,
    hosts=None,
    start=True,
    warm=True,
    shortcuts=None,
):
    """Start the server (blocking unless ``start=False``: then start it and run ``server.io_loop``); returns it.
    ``shortcuts``: see ``take_shortcuts`` (None: the ``NOISELAB_SHORTCUTS`` variable, unset: all)."""
    if not isinstance(num_procs, int) or isinstance(num_procs, bool) or num_procs < 1:
        raise ValueError(f"num_procs must be a positive integer, got {num_procs!r}")
    if num_procs > 1 and show:
        raise ValueError("num_procs > 1 runs the server in this process's children: not with show")
    if pool is not None and pool.local_workers is not None and num_procs > 1:
        raise ValueError(
            "with several web processes give one shared cluster (--dask-scheduler), not --dask-local: "
            "each process would start its own"
        )
    pn.extension("katex", notifications=False)
    configure_logging()
    parent = os.getpid()
    # Bokeh checks every new document's model graph (5-15% of a page's server time); the tests check it
    bokeh_settings.perform_document_validation.set_value(False)
    # and every callback's signature and a close match for a misspelt attribute (3-4%); the tests do both
    bokeh_settings.perform_error_diagnostics.set_value(False)
    take_shortcuts(shortcuts)
    tune_garbage_collection()  # before the fork: every web process starts with it
    # a parent of several workers ends here; they follow by the parent-death signal
    signal.signal(signal.SIGINT, _exit)
    signal.signal(signal.SIGTERM, _exit)
    if num_procs > 1:
        os.register_at_fork(after_in_child=_in_worker_process)
    else:
        asyncio.set_event_loop(loop := asyncio.new_event_loop())
        loop.set_exception_handler(quiet_closed_sockets)
        _stop_on_signals(loop)
    origins = [origin.lower() for origin in origins or []]
    if not origins:
        origins = [f"localhost:{port}", f"127.0.0.1:{port}"]
        if address not in ("127.0.0.1", "localhost", "0.0.0.0", "::"):
            origins.append(f"{as_host(address.lower())}:{port}")
    pool = pool or ComputePool()
    built = [0]  # this web process's app builds (each process counts its own after the fork)

    def session_app():  # one fresh app per browser session, all sharing this process's compute pool
        built[0] += 1
        return create_app(pool=pool, assets=ASSETS_ROUTE)

    # Bokeh's origin list splits each entry on ':', so IPv6 literals ([::1]:5006) are added afterwards
    bracketed = [origin for origin in origins if origin.startswith("[")]
    server = pn.serve(
        {"/": session_app},
        port=port,
        address=address,
        websocket_origin=[origin for origin in origins if origin not in bracketed] or [f"localhost:{port}"],
        show=show,
        title=TITLE,
        num_procs=num_procs,
        start=False,
        # the logo and KaTeX's fonts, fetched once by each browser instead of inlined into every page
        static_dirs={ASSETS_ROUTE: str(resources.files("dashboard").joinpath("assets"))},
        # the largest upload's message fits (dashboard.uploads); the browser keeps larger files back
        websocket_max_message_size=WEBSOCKET_MAX_MESSAGE_BYTES,
    )
    server._tornado.websocket_origins.update(bracketed)
    _stop_on_signals(server.io_loop.asyncio_loop)  # again: pn.serve put its own SIGINT handler in place
    # in each web process (pn.serve forks before it returns): only the lab's routes and host names, and
    # no request ends the process
    answered = allowed_hosts(address, port, [*(hosts or []), *origins])
    harden(server._tornado, server.io_loop.asyncio_loop, answered, ASSETS_ROUTE)

    def status():
        return {
            "status": "ok",
            "pid": os.getpid(),
            "sessions_built": built[0],
            "sessions_open": len(server._tornado.get_sessions("/")),
        }

    rule = Rule(PathMatches(HEALTH_ROUTE + "$"), HealthHandler, {"status": status})
    server._tornado.wildcard_router.rules.insert(0, server._tornado.wildcard_router.process_rule(rule))
    queue_page_builds(server)
    trim_memory_periodically(server)
    if warm:  # in each web process, once it serves; in a thread, so the loop never waits for it
        server.io_loop.add_callback(server.io_loop.run_in_executor, None, warm_up, pool)
    if start:
        server.start()
        try:
            signum = run_until_stopped(server.io_loop)
        finally:
            pool.close()
        if signum is None or (num_procs > 1 and signum == signal.SIGTERM and os.getppid() == parent):
            # a web process stopped alone (its parent serves on; the parent's own end stops every web
            # process with SIGTERM, after which it has a new parent): it exits non-zero, and its parent
            # (Tornado's fork_processes) starts a new one and logs it
            log.warning("web process %d stopped while the server serves on: it is started again", os.getpid())
            raise SystemExit(1)
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description="Serve the noiselab app (offline; http://localhost:5006 by default).")
    parser.add_argument("--port", type=int, default=5006)
    parser.add_argument("--address", default="127.0.0.1", help="interface to bind (default 127.0.0.1 only)")
    parser.add_argument(
        "--allow-websocket-origin",
        action="append",
        dest="origins",
        default=None,
        help="host[:port] allowed to open the websocket (repeatable)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        dest="hosts",
        default=None,
        help="a host name the server answers for besides localhost (repeatable), e.g. the public "
        "name behind a reverse proxy",
    )
    parser.add_argument(
        "--num-procs",
        type=int,
        default=1,
        help="web processes sharing the port (sessions stay in the process that opened them)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--dask-scheduler",
        default=None,
        metavar="ADDRESS",
        help="send heavy computations to this Dask scheduler (needs the 'dask' extra)",
    )
    group.add_argument(
        "--dask-local",
        type=int,
        default=None,
        metavar="N",
        help="start a local Dask cluster of N worker processes for the heavy computations",
    )
    parser.add_argument("--show", action="store_true", help="open a browser tab")
    parser.add_argument(
        "--no-shortcuts",
        action="store_true",
        help="leave Bokeh's internals as they ship (see NOISELAB_SHORTCUTS in docs/serving.md)",
    )
    args = parser.parse_args(argv)
    parent = os.getpid()
    try:
        pool = ComputePool(scheduler=args.dask_scheduler, local_workers=args.dask_local)
        if pool.scheduler is not None:
            pool.result(os.getpid)  # connect now: a wrong address fails here, not at the first click
            pool.close()  # each web process connects for itself (a client must not cross a fork)
        shortcuts = "off" if args.no_shortcuts else None
        taken = take_shortcuts(shortcuts)  # here for the line below; serve takes the same (a no-op then)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        parser.error(str(exc))
    print(
        f"noiselab: serving on http://{as_host(args.address)}:{args.port}/ with {args.num_procs} process(es), "
        f"heavy work on {pool.describe()} (Ctrl+C to stop)\n"
        f"noiselab: Bokeh shortcuts taken: {', '.join(n for n, t in taken.items() if t) or 'none'}"
        f" (not taken: {', '.join(n for n, t in taken.items() if not t) or 'none'}; --no-shortcuts takes none)",
        flush=True,
    )
    try:
        serve(
            args.port,
            args.address,
            args.origins,
            args.show,
            num_procs=args.num_procs,
            pool=pool,
            hosts=args.hosts,
            shortcuts=shortcuts,
        )
    except ValueError as exc:
        parser.error(str(exc))
    except (KeyboardInterrupt, SystemExit) as exc:  # Ctrl+C or SIGTERM: the one line below
        if os.getpid() != parent and exc.code not in (None, 0):
            raise  # a web process that did not stop on a signal exits non-zero: its parent restarts it
    if os.getpid() == parent:  # forked web processes return here too
        print("noiselab: stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
