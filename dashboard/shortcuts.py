"""The server's replacements of Bokeh internals, in one place, with one entry point (``take_shortcuts``).

Each replaces one Bokeh method that a page build calls thousands of times, keeps its answers (a probe
compares them before it is installed, and the tests compare them over every model class), and returns
False, changing nothing, where Bokeh's own method is not the one it was written for. Each saves at least 5%
of a page's build on both Panel/Bokeh pairs tested (``benchmarks/bench_shortcuts.py``; the figures and the
upstream work that would make each unnecessary: ARCHITECTURE.md's workaround table). Only the serve command
takes them (``--no-shortcuts`` or ``NOISELAB_SHORTCUTS=off`` takes none, ``-name`` leaves one out); importing
this module changes nothing.
"""

from __future__ import annotations

import logging
import os
import weakref

log = logging.getLogger(__name__)

__all__ = ["SHORTCUTS", "SHORTCUTS_ENV", "take_shortcuts"]


def _ours(method) -> bool:
    """Whether a Bokeh method is one of this module's replacements."""
    return getattr(method, "__noiselab__", False)


def _replace(owner, name, replacement) -> bool:
    replacement.__noiselab__ = True
    setattr(owner, name, replacement)
    return True


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


SHORTCUTS = (read_themed_values_directly, remember_prepared_defaults)


SHORTCUTS_ENV = "NOISELAB_SHORTCUTS"
_OFF = ("off", "0", "no", "false", "none")


def take_shortcuts(setting: str | None = None) -> dict[str, bool]:
    """The one entry point for the server's replacements of Bokeh internals (the functions
    above; each returns False, changing nothing, where its version does not match): all of them, none
    (``setting`` "off", from ``--no-shortcuts``), or all but those named with a minus ("-name,-name").
    ``setting`` None reads ``NOISELAB_SHORTCUTS``. Logs one line naming what was taken; returns name ->
    taken."""
    every = {f.__name__: f for f in SHORTCUTS}
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
        "Bokeh shortcuts taken: %s; not taken: %s (%s=off or --no-shortcuts takes none)",
        ", ".join(n for n, t in taken.items() if t) or "none",
        ", ".join(n for n, t in taken.items() if not t) or "none",
        SHORTCUTS_ENV,
    )
    return taken
