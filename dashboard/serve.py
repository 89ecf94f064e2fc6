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
import weakref
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


def _ours(method) -> bool:
    """Whether a Bokeh method is one of this module's replacements."""
    return getattr(method, "__noiselab__", False)


def _replace(owner, name, replacement) -> bool:
    replacement.__noiselab__ = True
    setattr(owner, name, replacement)
    return True


def remember_overridden_defaults() -> bool:
    """Compute each Bokeh model class's overridden property defaults once instead of on every read of a
    default (Bokeh 3.9 walks the class's MRO and merges a dict each time, about 7% of a page's server
    time). The result depends only on class attributes Bokeh sets when it creates the class, so it is
    kept per class, read-only. Returns False, changing nothing, where Bokeh keeps them itself (3.10 does)
    or the method is not the one expected."""
    from types import MappingProxyType

    from bokeh.core.has_props import HasProps

    method = HasProps.__dict__.get("_overridden_defaults")
    if _ours(method):
        return True
    if not isinstance(method, classmethod) or hasattr(HasProps, "__property_info__"):
        return False
    compute = method.__func__
    remembered = weakref.WeakKeyDictionary()

    def overridden_defaults(cls):
        try:
            return remembered[cls]
        except KeyError:
            defaults = remembered[cls] = MappingProxyType(compute(cls))
            return defaults

    overridden_defaults.__doc__ = compute.__doc__
    return _replace(HasProps, "_overridden_defaults", classmethod(overridden_defaults))


def read_themed_values_directly() -> bool:
    """Read a Bokeh model's theme overrides without an exception. Bokeh (3.9, 3.10) reads them on every
    read of a default with ``getattr(model, '__themed_values__', None)``: for the many models no theme
    touches, that lookup fails through ``HasProps.__getattr__`` and raises twice (about 10% of a page's
    server time). The replacement reads the model's attribute dict, where ``apply_theme`` stores them;
    it is installed only if it agrees with Bokeh's own on a model with and one without theme values.
    Returns whether it is installed."""
    from bokeh.core.has_props import HasProps
    from bokeh.models import Range1d

    method = HasProps.__dict__.get("themed_values")
    if _ours(method):
        return True
    if not callable(method):
        return False

    def themed_values(self):
        return self.__dict__.get("__themed_values__")

    themed_values.__doc__ = method.__doc__
    plain, themed = Range1d(), Range1d()
    themed.apply_theme({"start": -1.0})
    if any(themed_values(model) is not method(model) for model in (plain, themed)):
        return False
    return _replace(HasProps, "themed_values", themed_values)


def check_unstable_defaults_directly() -> bool:
    """Tell Bokeh's unstable defaults (a function, or a model made per instance) without importing on
    each call. Bokeh (3.9, 3.10) runs two imports inside ``PropertyDescriptor.is_unstable``, which runs
    on every read of a default (about 8% of a page's server time); the replacement checks the same two
    types, found once. Installed only if it agrees with Bokeh's own on one value of each kind and three
    others. Returns whether it is installed."""
    from types import FunctionType

    from bokeh.core.property.descriptors import PropertyDescriptor
    from bokeh.core.property.instance import InstanceDefault
    from bokeh.models import Range1d

    method = PropertyDescriptor.__dict__.get("is_unstable")
    if _ours(method):
        return True
    if not isinstance(method, classmethod):
        return False
    kinds = (FunctionType, InstanceDefault)

    def is_unstable(cls, value):
        return isinstance(value, kinds)

    is_unstable.__doc__ = method.__func__.__doc__
    probes = (lambda: 1, InstanceDefault(Range1d), 1.0, None, Range1d())
    if any(is_unstable(PropertyDescriptor, v) != method.__func__(PropertyDescriptor, v) for v in probes):
        return False
    return _replace(PropertyDescriptor, "is_unstable", classmethod(is_unstable))


PREPARED_KINDS = (int, float, str, bool, type(None))  # immutable: one prepared default serves every model
EMPTY_KINDS = (list, dict, set)  # an empty default of these: a new empty container of the prepared type
_MADE_AFRESH = object()  # a default that is not kept: prepared again on every read, as by Bokeh


class _EmptyOf:
    """What is kept for an empty list, dict or set default: the type Bokeh prepares it as (e.g.
    ``PropertyValueList``), of which every read gets a new empty one."""

    __slots__ = ("kind",)

    def __init__(self, kind):
        self.kind = kind


def _keepable(raw, value):
    """What can be kept of a prepared default ``value`` made from the raw default ``raw``."""
    if callable(raw):
        return _MADE_AFRESH
    if type(value) in PREPARED_KINDS:
        return value
    if type(raw) in EMPTY_KINDS and not raw and isinstance(value, EMPTY_KINDS) and not value:
        return _EmptyOf(type(value))
    return _MADE_AFRESH


def remember_prepared_defaults() -> bool:
    """Keep, per Bokeh model class, two facts Bokeh (3.9, 3.10) works out again on every read of a
    default (together about 15% of a page's server time): a property's default once copied, validated and
    transformed (only a plain immutable value: a number, text, True/False or None, from a default that is
    not a function; for an empty list, dict or set, only the type it is prepared as, each read getting a
    new empty one), and whether its default is unstable (made per model). Both follow from the class
    and its properties, which Bokeh fixes when it creates the class; a theme's value is never kept.
    Installed only if both agree with Bokeh's own on a probe model. Returns whether installed."""
    from bokeh.core.property.bases import Property
    from bokeh.core.property.descriptors import PropertyDescriptor
    from bokeh.models import Range1d

    themed_default = Property.__dict__.get("themed_default")
    has_unstable_default = PropertyDescriptor.__dict__.get("has_unstable_default")
    if _ours(themed_default):
        return True
    if not callable(themed_default) or not callable(has_unstable_default):
        return False
    prepared = weakref.WeakKeyDictionary()  # class -> {(property id, name): prepared default or _MADE_AFRESH}
    unstable = weakref.WeakKeyDictionary()  # class -> {descriptor: bool}

    def remembered_themed_default(self, cls, name, theme_overrides, *, no_eval=False):
        if theme_overrides is not None and name in theme_overrides:
            return themed_default(self, cls, name, theme_overrides, no_eval=no_eval)
        try:
            kept = prepared[cls]
        except KeyError:
            kept = prepared[cls] = {}
        key = (id(self), name)
        value = kept.get(key, _MADE_AFRESH)
        if value is not _MADE_AFRESH:
            return value.kind() if type(value) is _EmptyOf else value
        value = themed_default(self, cls, name, None, no_eval=no_eval)
        if key not in kept:  # first read: decide once whether this default can be kept
            overrides = cls._overridden_defaults()
            kept[key] = _keepable(overrides[name] if name in overrides else self._default, value)
        return value

    def remembered_has_unstable_default(self, obj):
        try:
            return unstable[type(obj)][self]
        except KeyError:
            result = unstable.setdefault(type(obj), {})[self] = has_unstable_default(self, obj)
            return result

    remembered_themed_default.__doc__ = themed_default.__doc__
    remembered_has_unstable_default.__doc__ = has_unstable_default.__doc__
    probe = Range1d()
    for name in ("start", "js_property_callbacks", "tags"):
        descriptor = Range1d.lookup(name)
        twice = [remembered_themed_default(descriptor.property, Range1d, name, None) for _ in range(2)]
        bokehs = themed_default(descriptor.property, Range1d, name, None)
        if twice[0] != bokehs or twice[1] != bokehs or type(twice[1]) is not type(bokehs):
            return False
        if isinstance(bokehs, EMPTY_KINDS) and twice[1] is twice[0]:
            return False
        if remembered_has_unstable_default(descriptor, probe) != has_unstable_default(descriptor, probe):
            return False
    _replace(PropertyDescriptor, "has_unstable_default", remembered_has_unstable_default)
    return _replace(Property, "themed_default", remembered_themed_default)


_SCALAR, _ITEMS, _MAPPING, _MODEL, _PROPS, _OTHER = range(6)  # how the reference walk treats a value's type
MAX_WALK_TYPES = 1000  # types whose treatment the walk keeps


def walk_references_directly() -> bool:
    """Walk Bokeh's model graph without an import on every visited value: Bokeh (3.9, 3.10) finds every
    model a document holds by visiting each property value (about 10,000 per page, lists and dicts
    item by item) in a function that imports ``Model`` on each call (about 6% of a page's server time).
    The replacement visits the same values in the same order, and decides once per type whether a
    value is a scalar, a list or tuple, a dict, a model, another ``HasProps`` or something else (a
    dataclass is still recognised per value). Installed only if it visits a probe's models as Bokeh's
    own does. Returns whether installed."""
    from dataclasses import is_dataclass

    from bokeh.core.has_props import HasProps
    from bokeh.core.property.vectorization import Field
    from bokeh.model import util
    from bokeh.model.model import Model
    from bokeh.models import Range1d
    from bokeh.util.dataclasses import entries

    bokehs = util.visit_value_and_its_immediate_references
    if _ours(bokehs):
        return True
    if not callable(bokehs) or not callable(getattr(util, "visit_immediate_value_references", None)):
        return False
    treatments = {int: _SCALAR, float: _SCALAR, str: _SCALAR, list: _ITEMS, dict: _MAPPING}

    def treatment(kind):
        if issubclass(kind, (list, tuple)):
            return _ITEMS
        if issubclass(kind, dict):
            return _MAPPING
        if issubclass(kind, HasProps):
            return _MODEL if issubclass(kind, Model) else _PROPS
        return _OTHER

    def visit(obj, visitor):
        kind = type(obj)
        how = treatments.get(kind)
        if how is None:
            how = treatment(kind)
            if len(treatments) < MAX_WALK_TYPES:
                treatments[kind] = how
        if how == _SCALAR:
            return
        if how == _MODEL:
            visitor(obj)
        elif how == _ITEMS:
            for item in obj:
                visit(item, visitor)
        elif how == _MAPPING:
            for key, value in obj.items():
                visit(key, visitor)
                visit(value, visitor)
        elif how == _PROPS:
            util.visit_immediate_value_references(obj, visitor)
        elif is_dataclass(obj):
            for _, value in entries(obj):
                visit(value, visitor)

    visit.__doc__ = bokehs.__doc__
    models = [Range1d(name=str(k)) for k in range(5)]
    probe = [models[0], (1, "a", models[1]), {models[2]: [models[3], None]}, Field("x", transform=models[4]), 2.0]
    for value in (probe, models[0]):
        seen_by_bokeh, seen_here = [], []
        bokehs(value, seen_by_bokeh.append)
        visit(value, seen_here.append)
        if seen_here != seen_by_bokeh or len(seen_here) != (5 if value is probe else 1):
            return False
    return _replace(util, "visit_value_and_its_immediate_references", visit)


BOKEH_SHORTCUTS = (
    remember_overridden_defaults,
    read_themed_values_directly,
    check_unstable_defaults_directly,
    remember_prepared_defaults,
    walk_references_directly,
)


def take_bokeh_shortcuts() -> dict[str, bool]:
    """Take every shortcut above in Bokeh's reads of a property default and its walks of the model
    graph; returns which were taken (the server goes through ``take_shortcuts``)."""
    return {shortcut.__name__: shortcut() for shortcut in BOKEH_SHORTCUTS}


def build_init_params_in_one_pass() -> bool:
    """Work out which parameters a Panel object syncs once per model it builds, not once per parameter.
    Panel (1.9, 1.10) gathers a new Bokeh model's properties in ``Syncable._init_params``, which
    evaluates the ``_synced_params`` property (a list built by a scan of every parameter) for each
    parameter it checks: quadratic in the number of parameters, about 7% of a page's server time. The
    replacement evaluates it once and returns the same dict. Installed only if it agrees with Panel's
    own on probe widgets and layouts. Returns whether installed."""
    from panel.reactive import Syncable

    method = Syncable.__dict__.get("_init_params")
    if _ours(method):
        return True
    if not callable(method):
        return False

    def init_params(self):
        synced = set(self._synced_params)
        params = {}
        for name in self.param:
            if name in synced:
                value = getattr(self, name)
                if value is not None:
                    params[name] = value
        return params

    init_params.__doc__ = method.__doc__
    for probe in (pn.widgets.FloatSlider(label="x", end=2.0), pn.widgets.Button(label="b"), pn.Row(width=10)):
        ours, panels = init_params(probe), method(probe)
        if ours != panels or list(ours) != list(panels):
            return False
    return _replace(Syncable, "_init_params", init_params)


PER_SESSION_LISTS = ("raw_css", "global_css", "css_files", "js_files", "js_modules")  # copied per session
_READ_DIRECTLY = frozenset(("_param__private", "_globals", "_parameter_set", "__class__", "param"))


def read_panel_config_without_import() -> bool:
    """Read Panel's ``config`` without an import on every read. Panel (1.9, 1.10) resolves each read of
    a config attribute (about 7,000 per page: every model's style sheets, loading spinner, design, ...)
    in ``_config.__getattribute__``, which runs ``from .io.state import state`` each time (about 5% of
    a page's server time). The replacement takes the same steps with ``state`` found once: a session's
    own value first, its own copy of the five style and script lists made on its first read of each, a
    global setting or an override otherwise. Installed only if it reads as Panel's own does, in a
    session and outside one, on probe attributes. Returns whether installed."""
    import copy

    from panel.io.state import set_curdoc, state

    config_module = sys.modules[type(pn.config).__module__]
    config_class = type(pn.config)
    method = config_class.__dict__.get("__getattribute__")
    if _ours(method):
        return True
    if not callable(method) or not hasattr(config_class, "_globals"):
        return False
    read = super(config_class, config_class).__getattribute__  # what Panel's super() call finds
    per_session = frozenset(PER_SESSION_LISTS)

    def config_getattribute(self, attr):
        if attr in _READ_DIRECTLY or config_module._config_uninitialized:
            return read(self, attr)
        curdoc = state.curdoc
        own = None
        if curdoc:
            sessions = read(self, "_session_config")
            own = sessions.get(curdoc)
            if own is None:
                own = sessions[curdoc] = {}
            if attr in per_session and attr not in own:
                setattr(self, attr, copy.copy(read(self, attr)))
        if attr in config_class._globals or attr == "theme":
            return read(self, attr)
        if own is not None and attr in own:
            return own[attr]
        if f"_{attr}" in config_class._parameter_set and getattr(self, f"_{attr}_") is not None:
            return read(self, f"_{attr}_")
        return read(self, attr)

    config_getattribute.__doc__ = method.__doc__
    from bokeh.document import Document

    probes = ("raw_css", "css_files", "sizing_mode", "design", "theme", "loading_spinner", "template")

    def reads(getattribute):
        outside = [getattribute(pn.config, attr) for attr in probes]
        doc = Document()
        with set_curdoc(doc):
            inside = [getattribute(pn.config, attr) for attr in probes * 2]
            own = dict(read(pn.config, "_session_config").pop(doc, {}))
        return outside, inside, own

    (panels_out, panels_in, panels_own), (ours_out, ours_in, ours_own) = reads(method), reads(config_getattribute)
    same_outside = all(a is b for a, b in zip(panels_out, ours_out, strict=True))
    same_inside = panels_in == ours_in and list(panels_own) == list(ours_own)
    copied = all(ours_own[name] is ours_in[probes.index(name) + len(probes)] for name in ours_own)
    if not (same_outside and same_inside and copied and {"raw_css", "css_files"} <= set(ours_own)):
        return False
    return _replace(config_class, "__getattribute__", config_getattribute)


PANEL_SHORTCUTS = (build_init_params_in_one_pass, read_panel_config_without_import)


def take_panel_shortcuts() -> dict[str, bool]:
    """Take both shortcuts above in Panel's building of a page; returns which were taken (the server goes
    through ``take_shortcuts``)."""
    return {shortcut.__name__: shortcut() for shortcut in PANEL_SHORTCUTS}


# the switch for every shortcut above: "off" takes none; "-name,-name" leaves those out; unset: all
SHORTCUTS_ENV = "NOISELAB_SHORTCUTS"
_OFF = ("off", "0", "no", "false", "none")


def take_shortcuts(setting: str | None = None) -> dict[str, bool]:
    """The one entry point for the server's replacements of Panel and Bokeh internals (the functions
    above; each returns False, changing nothing, where its version does not match): all of them, none
    (``setting`` "off", from ``--no-shortcuts``), or all but those named with a minus ("-name,-name").
    ``setting`` None reads ``NOISELAB_SHORTCUTS``. Logs one line naming what was taken; returns name ->
    taken."""
    every = {f.__name__: f for f in (*BOKEH_SHORTCUTS, *PANEL_SHORTCUTS)}
    setting = os.environ.get(SHORTCUTS_ENV, "") if setting is None else setting
    if not isinstance(setting, str):
        raise TypeError(f"shortcuts must be a str, got {type(setting).__name__}")
    if setting.strip().lower() in _OFF:
        skip = set(every)
    else:
        names = [n.strip() for n in setting.split(",") if n.strip()]
        if any(not n.startswith("-") for n in names) or any(n[1:] not in every for n in names):
            raise ValueError(
                f"{SHORTCUTS_ENV} must be 'off' or '-name' entries separated by commas, names among "
                f"{', '.join(every)}; got {setting!r}"
            )
        skip = {n[1:] for n in names}
    taken = {name: (name not in skip and shortcut()) for name, shortcut in every.items()}
    log.info(
        "Panel/Bokeh shortcuts taken: %s; not taken: %s (%s=off or --no-shortcuts takes none)",
        ", ".join(n for n, t in taken.items() if t) or "none",
        ", ".join(n for n, t in taken.items() if not t) or "none",
        SHORTCUTS_ENV,
    )
    return taken


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
        help="leave Panel's and Bokeh's internals as they ship (see NOISELAB_SHORTCUTS in docs/serving.md)",
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
        f"noiselab: Panel/Bokeh shortcuts taken: {', '.join(n for n, t in taken.items() if t) or 'none'}"
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
