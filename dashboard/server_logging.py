"""Server logging and error handling shared by ``dashboard.serve`` and ``panel serve dashboard/app.py``:
bounded log lines, closed tabs at debug level, no server tracebacks sent to clients."""

from __future__ import annotations

import asyncio
import logging
import re
import traceback

from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

log = logging.getLogger("noiselab")

__all__ = ["configure_logging", "quiet_closed_sockets", "quiet_closed_tabs"]


def quiet_closed_sockets(loop, context):
    """A browser tab closed mid-animation leaves writes to a dead websocket: expected, not an error."""
    if isinstance(context.get("exception"), (WebSocketClosedError, StreamClosedError)):
        log.debug("dropped a message for a closed session")
        return
    loop.default_exception_handler(context)


class _ClosedBeforeSessionFilter(logging.Filter):
    """Bokeh asserts when a websocket closes, or a message arrives on it, before its session exists (a
    tab closed or reloaded at once on a busy server): ``ServerConnection.session`` asserts. Harmless:
    the server carries on, so it goes to debug level instead of an uncaught exception with a traceback."""

    def filter(self, record):
        _, exc, tb = record.exc_info or (None, None, None)
        if isinstance(exc, AssertionError) and tb is not None:
            last = traceback.extract_tb(tb)[-1]
            if last.name == "session" and last.filename.replace("\\", "/").endswith("bokeh/server/connection.py"):
                log.debug("websocket closed, or a message arrived, before its session was created")
                return False
        return True


class _RefusedValueOneLine(logging.Filter):
    """A value sent by a browser that a widget or Bokeh refuses (a crafted websocket message, or a
    client out of step) is logged as one line, once, without a traceback: Bokeh, Panel and Tornado each
    logged the same refusal with a full traceback (885 tracebacks, 7.6 MB, for about 2,200 crafted
    values)."""

    WHERE = frozenset(("set_from_json", "_process_property_change", "_process_events", "_change_coroutine"))

    def filter(self, record):
        _, exc, tb = record.exc_info or (None, None, None)
        if not isinstance(exc, ValueError | TypeError) or tb is None:
            return True
        if not any(frame.name in self.WHERE for frame in traceback.extract_tb(tb)):
            return True
        if getattr(exc, "_noiselab_logged", False):
            return False
        try:
            exc._noiselab_logged = True  # type: ignore[union-attr]  # the other loggers' records of it are dropped
        except AttributeError:
            pass
        record.msg, record.args = "refused a value a browser sent: %s", (str(exc)[:200],)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
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

    make.noiselab_capped = True  # type: ignore[attr-defined]  # marks an installed factory
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

    ServerConnection.error = _error_reply_without_stack  # type: ignore[method-assign]


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


def configure_logging():
    """Install the log filters and the line cap once (a second call adds nothing), and keep server
    tracebacks from clients."""
    hide_stacks_from_clients()
    if not getattr(logging.getLogRecordFactory(), "noiselab_capped", False):
        logging.setLogRecordFactory(_capped_records(logging.getLogRecordFactory()))
    for name in ("tornado.application", "bokeh.server.protocol_handler"):
        _add_filter_once(logging.getLogger(name), _ClosedBeforeSessionFilter)
    for name in ("tornado.application", "bokeh.server.protocol_handler", "panel.reactive"):
        _add_filter_once(logging.getLogger(name), _RefusedValueOneLine)
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
    asyncio.get_event_loop().set_exception_handler(quiet_closed_sockets)
