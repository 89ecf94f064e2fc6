"""Serve the lab: ``python -m dashboard.serve [--port 5006] [--address 127.0.0.1] [--allow-websocket-origin HOST]``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import traceback

import panel as pn
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

from dashboard.app import TITLE, create_app

log = logging.getLogger("noiselab")


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


def serve(port=5006, address="127.0.0.1", origins=None, show=False, threaded=False):
    pn.extension("katex", notifications=False)
    logging.getLogger("tornado.application").addFilter(_ClosedBeforeSessionFilter())
    if not threaded:
        asyncio.set_event_loop(loop := asyncio.new_event_loop())
        loop.set_exception_handler(_quiet_closed_sockets)
    origins = list(origins or [])
    if not origins:
        origins = [f"localhost:{port}", f"127.0.0.1:{port}"]
        if address not in ("127.0.0.1", "localhost"):
            origins.append(f"{address}:{port}")
    return pn.serve({"/": create_app}, port=port, address=address, websocket_origin=origins, show=show, title=TITLE,
                    threaded=threaded)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Serve the noiselab app (offline; http://localhost:5006 by default).")
    parser.add_argument("--port", type=int, default=5006)
    parser.add_argument("--address", default="127.0.0.1", help="interface to bind (default 127.0.0.1 only)")
    parser.add_argument("--allow-websocket-origin", action="append", dest="origins", default=None,
                        help="host[:port] allowed to open the websocket (repeatable)")
    parser.add_argument("--show", action="store_true", help="open a browser tab")
    args = parser.parse_args(argv)
    print(f"noiselab: serving on http://{args.address}:{args.port}/ (Ctrl+C to stop)", flush=True)
    serve(args.port, args.address, args.origins, args.show)


if __name__ == "__main__":
    main()
