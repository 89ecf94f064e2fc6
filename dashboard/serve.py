"""Serve the lab: ``python -m dashboard.serve [--port 5006] [--address 127.0.0.1] [--num-procs N]
[--dask-scheduler ADDRESS | --dask-local N] [--allow-host NAME] [--allow-websocket-origin HOST]``.

Secure defaults: bound to 127.0.0.1; only requests whose Host header names this machine's loopback
names (or a name given with ``--allow-host``) are answered, so a page on another site cannot drive a
local instance by DNS rebinding; websockets only from the same origins.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import logging
import os
import re
import signal
import sys
import traceback
from importlib import resources

import panel as pn
from bokeh.settings import settings as bokeh_settings
from tornado.iostream import StreamClosedError
from tornado.routing import AnyMatches, HostMatches, Rule
from tornado.web import RequestHandler
from tornado.websocket import WebSocketClosedError

from dashboard.app import ASSETS_ROUTE, TITLE, create_app, warm_up
from dashboard.compute import ComputePool
from dashboard.uploads import WEBSOCKET_MAX_MESSAGE_BYTES

log = logging.getLogger("noiselab")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")


def _quiet_closed_sockets(loop, context):
    """A browser tab closed mid-animation leaves writes to a dead websocket: expected, not an error."""
    if isinstance(context.get("exception"), (WebSocketClosedError, StreamClosedError)):
        log.debug("dropped a message for a closed session")
        return
    loop.default_exception_handler(context)


class _ClosedBeforeSessionFilter(logging.Filter):
    """Bokeh asserts when a websocket closes before its session exists (a tab closed or reloaded
    at once): harmless, the server carries on, so it is not logged as an uncaught exception."""

    def filter(self, record):
        _, exc, tb = record.exc_info or (None, None, None)
        if isinstance(exc, AssertionError) and tb is not None:
            frames = traceback.extract_tb(tb)
            if any(frame.name == "notify_connection_lost" for frame in frames):
                log.debug("websocket closed before its session was created")
                return False
        return True


class _ShortLines(logging.Filter):
    """Log lines are bounded: a long URL or value is cut, never echoed whole."""

    LIMIT = 500

    def filter(self, record):
        _cut(record, self.LIMIT)
        return True


def _cut(record, limit):
    try:
        message = record.getMessage()
    except Exception:  # a malformed call: logging reports it when the record is written
        return
    if len(message) > limit:
        record.msg, record.args = message[:limit] + " ... [cut]", None


def _capped_records(factory):
    """Every record of every logger, child loggers included (a filter on ``bokeh`` does not see
    ``bokeh.server.views.ws``'s records), is cut to the line limit when it is made."""

    def make(*args, **kwargs):
        record = factory(*args, **kwargs)
        _cut(record, _ShortLines.LIMIT)
        return record

    make.noiselab_capped = True
    return make


def _error_reply_without_stack(self, message, text):
    """Bokeh's ERROR reply to a message the server could not handle, without the server's traceback
    (which Bokeh attaches from the exception being handled) and with a short text."""
    reply = self.protocol.create("ERROR", message.header["msgid"], str(text)[:200])
    reply.content = {"text": reply.content["text"], "traceback": None}
    return reply


def hide_stacks_from_clients():
    """Clients get Bokeh's error replies without the server's traceback (installed once per process)."""
    from bokeh.server.connection import ServerConnection

    ServerConnection.error = _error_reply_without_stack


class _ClosedTabAtDebug(logging.Filter):
    """Closing a tab is normal: Bokeh's and Tornado's warnings about it go to debug level."""

    PATTERNS = (
        "WebSocket connection closed",
        "Failed sending message as connection was closed",
        "Stream is closed",
        "Session .* was destroyed",
    )

    def filter(self, record):
        if record.levelno <= logging.WARNING and any(re.search(p, record.getMessage()) for p in self.PATTERNS):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


class _UnknownHost(RequestHandler):
    def prepare(self):
        log.info("refused a request for host %.60r", self.request.host)
        self.set_status(403)
        self.finish("This server answers only for the host names it was started with (see --allow-host).\n")


def _as_host(address: str) -> str:
    """An address as a Host header names it: an IPv6 literal in brackets."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def allowed_hosts(address, port, extra=()) -> list[str]:
    """Host names (without port, lower case: browsers and tornado compare them so) the server
    answers for."""
    names = set(LOOPBACK_NAMES)
    if address not in (None, "", "0.0.0.0", "::"):
        names.add(_as_host(address.lower()))
    for item in extra:
        host = item.strip().lower()
        if host.startswith("["):  # [::1]:5006
            names.add(host.split("]")[0] + "]")
        elif host.count(":") > 1:  # a bare IPv6 address
            names.add(_as_host(host))
        else:
            names.add(host.rsplit(":", 1)[0] if host.count(":") == 1 else host)
    return sorted(names)


def restrict_hosts(server, hosts) -> None:
    """Answer only requests whose Host header names one of ``hosts`` (tornado's host routing; tornado
    lower-cases the name it matches)."""
    app = server._tornado
    pattern = "(?i)(" + "|".join(re.escape(h.lower()) for h in hosts) + ")$"
    router = app.default_router
    router.rules = [Rule(HostMatches(pattern), app.wildcard_router), Rule(AnyMatches(), [(r".*", _UnknownHost)])]
    router.rules[-1] = router.process_rule(router.rules[-1])


def _in_worker_process():
    """After the fork, in each worker: a fresh event loop, and the worker ends when the parent does."""
    asyncio.set_event_loop(loop := asyncio.new_event_loop())
    loop.set_exception_handler(_quiet_closed_sockets)
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
        loop.add_signal_handler(stop_signal, loop.stop)


def configure_logging():
    """Install the log filters and the line cap once (a second call adds nothing), and keep server
    tracebacks from clients."""
    hide_stacks_from_clients()
    if not getattr(logging.getLogRecordFactory(), "noiselab_capped", False):
        logging.setLogRecordFactory(_capped_records(logging.getLogRecordFactory()))
    _add_filter_once(logging.getLogger("tornado.application"), _ClosedBeforeSessionFilter)
    for name in ("bokeh", "tornado", "panel", "noiselab"):
        logger = logging.getLogger(name)
        _add_filter_once(logger, _ShortLines)
        _add_filter_once(logger, _ClosedTabAtDebug)


def _add_filter_once(logger, kind):
    if not any(isinstance(existing, kind) for existing in logger.filters):
        logger.addFilter(kind())


def quiet_closed_tabs():
    """Under ``panel serve``: the same handling of tabs closed mid-update as ``serve`` installs (a write
    to a closed websocket is expected, not an error)."""
    configure_logging()
    asyncio.get_event_loop().set_exception_handler(_quiet_closed_sockets)


def serve(
    port=5006,
    address="127.0.0.1",
    origins=None,
    show=False,
    threaded=False,
    num_procs=1,
    pool=None,
    hosts=None,
    start=True,
    warm=True,
):
    """Start the server (blocking unless ``threaded`` or ``start=False``); returns it."""
    if not isinstance(num_procs, int) or isinstance(num_procs, bool) or num_procs < 1:
        raise ValueError(f"num_procs must be a positive integer, got {num_procs!r}")
    if num_procs > 1 and (threaded or show):
        raise ValueError("num_procs > 1 runs the server in this process's children: not with threaded or show")
    if pool is not None and pool.local_workers is not None and num_procs > 1:
        raise ValueError(
            "with several web processes give one shared cluster (--dask-scheduler), not --dask-local: "
            "each process would start its own"
        )
    pn.extension("katex", notifications=False)
    configure_logging()
    # Bokeh checks every new document's model graph (5-15% of a page's server time); the tests check it
    bokeh_settings.perform_document_validation.set_value(False)
    if not threaded:  # a parent of several workers ends here; they follow by the parent-death signal
        signal.signal(signal.SIGINT, _exit)
        signal.signal(signal.SIGTERM, _exit)
    if num_procs > 1:
        os.register_at_fork(after_in_child=_in_worker_process)
    elif not threaded:
        asyncio.set_event_loop(loop := asyncio.new_event_loop())
        loop.set_exception_handler(_quiet_closed_sockets)
        _stop_on_signals(loop)
    origins = [origin.lower() for origin in origins or []]
    if not origins:
        origins = [f"localhost:{port}", f"127.0.0.1:{port}"]
        if address not in ("127.0.0.1", "localhost", "0.0.0.0", "::"):
            origins.append(f"{_as_host(address.lower())}:{port}")
    pool = pool or ComputePool()

    def session_app():  # one fresh app per browser session, all sharing this process's compute pool
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
        threaded=threaded,
        num_procs=num_procs,
        start=False,
        # the logo and KaTeX's fonts, fetched once by each browser instead of inlined into every page
        static_dirs={ASSETS_ROUTE: str(resources.files("dashboard").joinpath("assets"))},
        # the largest upload's message fits (dashboard.uploads); the browser keeps larger files back
        websocket_max_message_size=WEBSOCKET_MAX_MESSAGE_BYTES,
    )
    if threaded:  # a StoppableThread: the server is made inside it
        server.start()
        return server
    server._tornado.websocket_origins.update(bracketed)
    restrict_hosts(server, allowed_hosts(address, port, [*(hosts or []), *origins]))
    if warm:  # in each web process, once it serves; in a thread, so the loop never waits for it
        server.io_loop.add_callback(server.io_loop.run_in_executor, None, warm_up, pool)
    if start:
        server.start()
        try:
            server.io_loop.start()
        finally:
            pool.close()
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
    args = parser.parse_args(argv)
    parent = os.getpid()
    try:
        pool = ComputePool(scheduler=args.dask_scheduler, local_workers=args.dask_local)
        if pool.scheduler is not None:
            pool.result(os.getpid)  # connect now: a wrong address fails here, not at the first click
            pool.close()  # each web process connects for itself (a client must not cross a fork)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        parser.error(str(exc))
    print(
        f"noiselab: serving on http://{args.address}:{args.port}/ with {args.num_procs} process(es), heavy work "
        f"on {pool.describe()} (Ctrl+C to stop)",
        flush=True,
    )
    try:
        serve(args.port, args.address, args.origins, args.show, num_procs=args.num_procs, pool=pool, hosts=args.hosts)
    except ValueError as exc:
        parser.error(str(exc))
    except (KeyboardInterrupt, SystemExit):
        pass  # Ctrl+C or SIGTERM: the one line below
    if os.getpid() == parent:  # forked web processes return here too
        print("noiselab: stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
