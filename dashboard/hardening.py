"""What the lab's server answers, and what a request cannot do: shared by ``python -m dashboard.serve``
and ``panel serve dashboard/app.py --setup dashboard/panel_setup.py``.

- **Only the routes the lab needs** (:func:`keep_lab_routes`): the page, its websocket, Bokeh's and
  Panel's static files, the lab's assets and the tab icon. Every other route the framework registers is
  closed, above all Panel's ``/components/<module>/...``, which imports the module named in the
  address (a request for ``/components/venv.__main__/a/b/c`` ran that module's command-line parsing,
  which called ``sys.exit`` and stopped the server).
- **Only known host names** (:func:`restrict_hosts`), against DNS rebinding.
- **No request ends the process** (:func:`contain_exits`): a ``SystemExit`` or ``KeyboardInterrupt``
  raised in a task on the event loop (every request handler and websocket message runs in one) is logged
  and turned into an ordinary error of that task; only a signal or the operator stops the server.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable

from tornado.routing import AnyMatches, HostMatches, PathMatches, Rule
from tornado.web import RequestHandler

log = logging.getLogger("noiselab")

__all__ = [
    "LAB_ROUTES",
    "LOOPBACK_NAMES",
    "allowed_hosts",
    "as_host",
    "contain_exits",
    "harden",
    "harden_running_servers",
    "keep_lab_routes",
    "restrict_hosts",
    "route_table",
]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")

# A route is kept when its handler class is named here (the class or a subclass, by name, so Panel's and
# Bokeh's own subclasses count) and its path pattern is the one given, after an optional app prefix such
# as ``/app`` (``panel serve dashboard/app.py`` serves the page there); every other route is closed.
LAB_ROUTES = (
    ("DocHandler", "/?$", "the page"),
    ("WSHandler", "/ws$", "the page's websocket: its session"),
    ("StaticHandler", "/static/(?!extensions/)(.*)$", "Bokeh's scripts"),
    ("StaticHandler", "/static/(.*)$", "Bokeh's scripts (Bokeh's fallback for the same folder)"),
    ("MultiRootStaticHandler", "/static/extensions/(.*)$", "Panel's scripts, styles and fonts"),
    ("IcoHandler", "/favicon.ico$", "the tab's icon"),
    ("RootHandler", "/?$", "the index: under panel serve, '/' sends the browser to the page"),
    ("HealthHandler", "/healthz$", "the web process's health for a reverse proxy and monitoring (dashboard.serve)"),
)
_APP_PREFIX = re.compile(r"(/[A-Za-z0-9_.-]+)*")
ASSETS_REASON = "the lab's logo and KaTeX's fonts (dashboard/assets)"
# why the framework's other routes are closed (a route not listed here is closed too, as "not needed")
CLOSED_BECAUSE = {
    "ComponentResourceHandler": "imports the module named in the address (holoviz/panel#3284): one request "
    "could run any installed module's import-time code, and one stopped the server",
    "AutoloadJsHandler": "embeds the app in another site's page; not used (an OPTIONS request gave HTTP 500)",
    "MetadataHandler": "the app's metadata for embedding; not used",
}


def _handler_names(target) -> set[str]:
    return {cls.__name__ for cls in getattr(target, "__mro__", ())}


def _path(rule) -> str:
    matcher = rule.matcher
    return matcher.regex.pattern if isinstance(matcher, PathMatches) else repr(matcher)


def route_table(app, assets: str | None = None) -> list[tuple[str, str, str]]:
    """Every route ``app`` (a Tornado application) has, in order: (path pattern, handler class name,
    why it is there); a route the lab does not need says "closed: ..."."""
    table = []
    for rule in app.wildcard_router.rules:
        reason = _reason(rule, assets)
        target = getattr(rule.target, "__name__", type(rule.target).__name__)
        table.append((_path(rule), target, reason or "closed: " + _closed_reason(rule.target)))
    return table


def _reason(rule, assets: str | None) -> str | None:
    """Why the lab keeps ``rule``, or None to close it."""
    names, path = _handler_names(rule.target), _path(rule)
    if "ComponentResourceHandler" in names:
        return None
    for handler, pattern, why in LAB_ROUTES:
        if handler in names and path.endswith(pattern) and _APP_PREFIX.fullmatch(path[: -len(pattern)]):
            return why
    if assets and "StaticFileHandler" in names and path == f"/{assets}/(.*)$":
        return ASSETS_REASON
    return None


def _closed_reason(target) -> str:
    for name in _handler_names(target):
        if name in CLOSED_BECAUSE:
            return CLOSED_BECAUSE[name]
    return "not needed by the lab"


def keep_lab_routes(app, assets: str | None = None) -> list[str]:
    """Close every route of ``app`` the lab does not need (see :data:`LAB_ROUTES`; ``assets`` is the
    route of the lab's static assets, if served); returns the closed path patterns, logged once."""
    rules = app.wildcard_router.rules
    reasons = [_reason(rule, assets) for rule in rules]
    kept = [rule for rule, reason in zip(rules, reasons, strict=True) if reason is not None]
    closed = [_path(rule) for rule, reason in zip(rules, reasons, strict=True) if reason is None]
    if not any("DocHandler" in _handler_names(rule.target) for rule in kept):
        raise RuntimeError("the page's route was not found among the server's routes")
    rules[:] = kept
    if closed:
        log.info("closed the framework's routes the lab does not use: %s", ", ".join(closed))
    return closed


class _UnknownHost(RequestHandler):
    def prepare(self):
        log.info("refused a request for host %.60r", self.request.host)
        self.set_status(403)
        self.finish("This server answers only for the host names it was started with (see --allow-host).\n")


class _NotFound(RequestHandler):
    def prepare(self):
        self.set_status(404)
        self.finish("Not found.\n")


def as_host(address: str) -> str:
    """An address as a Host header names it: an IPv6 literal in brackets."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def allowed_hosts(address, port, extra: Iterable[str] = ()) -> list[str]:
    """Host names (without port, lower case: browsers and tornado compare them so) the server
    answers for."""
    names = set(LOOPBACK_NAMES)
    if address not in (None, "", "0.0.0.0", "::"):
        names.add(as_host(address.lower()))
    for item in extra:
        host = item.strip().lower()
        if host.startswith("["):  # [::1]:5006
            names.add(host.split("]")[0] + "]")
        elif host.count(":") > 1:  # a bare IPv6 address
            names.add(as_host(host))
        else:
            names.add(host.rsplit(":", 1)[0] if host.count(":") == 1 else host)
    return sorted(names)


def restrict_hosts(app, hosts) -> None:
    """Answer only requests whose Host header names one of ``hosts`` (tornado's host routing; tornado
    lower-cases the name it matches)."""
    pattern = "(?i)(" + "|".join(re.escape(h.lower()) for h in hosts) + ")$"
    router = app.default_router
    router.rules = [
        Rule(HostMatches(pattern), app.wildcard_router),
        Rule(HostMatches(pattern), [(r".*", _NotFound)]),  # a path the lab does not serve (or closed)
        Rule(AnyMatches(), [(r".*", _UnknownHost)]),
    ]
    router.rules[1:] = [router.process_rule(rule) for rule in router.rules[1:]]


class ContainedExit(RuntimeError):
    """What a ``SystemExit`` or ``KeyboardInterrupt`` raised inside a task on the server's loop becomes."""


async def _contained(coro):
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as exc:
        name = getattr(coro, "__qualname__", type(coro).__name__)
        log.error("contained %s raised in %.80s; the server carries on", type(exc).__name__, name)
        raise ContainedExit(f"{type(exc).__name__} in {name}") from None


def contain_exits(loop: asyncio.AbstractEventLoop) -> bool:
    """Make every task later started on ``loop`` turn a ``SystemExit`` or ``KeyboardInterrupt`` into a
    logged :class:`ContainedExit` (asyncio would otherwise stop the loop, and the server with it).
    Returns False, changing nothing, where the loop already has another task factory."""
    factory = loop.get_task_factory()
    if getattr(factory, "__noiselab__", False):
        return True
    if factory is not None:
        return False

    def contained_task(loop, coro, **kwargs):
        return asyncio.Task(_contained(coro), loop=loop, **kwargs)

    contained_task.__noiselab__ = True  # type: ignore[attr-defined]
    loop.set_task_factory(contained_task)
    return True


def harden(app, loop, hosts, assets: str | None = None) -> list[str]:
    """All of the above on one server: its routes, its host names, its loop. Returns the closed routes."""
    closed = keep_lab_routes(app, assets)
    restrict_hosts(app, hosts)
    if not contain_exits(loop):
        log.warning("the event loop has another task factory: an exit raised by a request is not contained")
    return closed


def _origin_hosts(app) -> list[str]:
    origins = getattr(app, "websocket_origins", None) or ()
    return [origin for origin in origins if origin != "*"]


def harden_running_servers(assets: str | None = None) -> int:
    """Harden every Bokeh server application in this process (``panel serve``'s, found through the
    garbage collector: Bokeh keeps no registry of them), allowing the host names of its websocket
    origins (``--allow-websocket-origin``; localhost by default). Returns how many were hardened now."""
    import gc

    from bokeh.server.tornado import BokehTornado

    done = 0
    for app in [obj for obj in gc.get_objects() if isinstance(obj, BokehTornado)]:
        if getattr(app, "_noiselab_hardened", False):
            continue
        origins = _origin_hosts(app)
        if "*" in (getattr(app, "websocket_origins", None) or ()):
            log.warning("websocket origins are '*': only loopback host names are answered")
        harden(app, asyncio.get_event_loop(), allowed_hosts(None, None, origins), assets)
        app._noiselab_hardened = True  # type: ignore[attr-defined]
        done += 1
    return done
