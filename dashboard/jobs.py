"""A view's named background computations: run away from the event loop, applied on it.

``Jobs`` holds what ``BaseView.offload_each`` needs between a request and its result: the latest
request per name (a later one supersedes an earlier one), the pool futures it waits for, its spinner
and progress bar, and the asyncio tasks that wait. The view supplies its own hooks (how to run an
update, whether it is on screen, how to defer work until it is shown, how to end a spinner).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

import panel as pn
from panel.io.state import set_curdoc

from .compute import ComputePool

__all__ = ["Jobs", "when_shown"]

Apply = Callable[[list[Any]], None]


def when_shown(doc: Any, func: Callable[[], None]) -> None:
    """Run ``func`` now, or, in a served session whose browser has not yet shown the page, once it has
    (its 'document ready' event).

    Panel 1.9 drops the model changes made under a hold while a session is unconnected, taking them
    for part of the document the browser has still to fetch; but a browser fetches the document before
    it reports ready. A result applied between the two never reached the page: a linked experiments tab
    kept its status line and lost its plots (a CI run; reproduced with a throttled Chromium)."""
    if doc is None or doc.session_context is None:
        func()
        return
    with set_curdoc(doc):
        loaded = pn.state.loaded
    if loaded:
        func()
    else:  # on the document itself, so a page closed before it loads keeps nothing alive
        doc.on_event("document_ready", lambda _event: func())


class Jobs:
    """The background computations of one view, by name.

    Parameters
    ----------
    pool : callable
        Returns the view's ComputePool, or None (a worker thread per call).
    guarded : callable
        ``guarded(func, *args)`` runs an update, showing a failure as a plain message.
    is_active : callable
        True while the view is on screen.
    defer : callable
        ``defer(key, func)`` runs ``func`` when the view is next shown.
    on_end : callable
        ``on_end(name)`` ends a request's spinner and progress bar (calls :meth:`end_busy`).
    """

    def __init__(
        self,
        *,
        pool: Callable[[], ComputePool | None],
        guarded: Callable[..., bool],
        is_active: Callable[[], bool],
        defer: Callable[[str, Callable[[], None]], None],
        on_end: Callable[[str], None],
    ) -> None:
        self._pool = pool
        self._guarded = guarded
        self._is_active = is_active
        self._defer = defer
        self._on_end = on_end
        self._latest: dict[str, object] = {}  # name -> the token of the request on screen
        self._futures: dict[str, tuple[object, list[Future[Any]]]] = {}  # name -> (token, pool futures)
        self._busy: dict[str, tuple[Any, Any]] = {}  # name -> (spinner target, progress bar)
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(
        self, name: str, calls: Sequence[functools.partial[Any]], apply: Apply, busy: Any = None, progress: Any = None
    ) -> bool:
        """Compute every call away from the loop, then ``apply(results)`` on it (see ``BaseView.offload_each``)."""
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return self._guarded(lambda: apply([call() for call in calls]))
        token = object()
        self._latest[name] = token
        self._release(name)  # a superseded request's queued work is dropped unless others wait for it
        self._busy[name] = (busy, progress)
        if busy is not None:
            busy.loading = True
        if progress is not None:
            progress.max, progress.value, progress.visible = len(calls), 0, True
        job = _Job(self, name, token, doc, calls, apply, progress)
        self._start_on_loop(doc, job.run)
        return True

    def _start_on_loop(self, doc: Any, coroutine_function: Callable[[], Any]) -> None:
        """Start ``coroutine_function()`` as a task on the session's event loop. Bokeh 3.10 runs
        synchronous callbacks on worker threads (bokeh/bokeh#15294), where no loop is running."""

        def start() -> None:
            task = asyncio.get_running_loop().create_task(coroutine_function())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a worker thread: hand the start to the loop
            io_loop = doc.session_context.server_context.application_context.io_loop
            getattr(io_loop, "asyncio_loop", io_loop).call_soon_threadsafe(start)
        else:
            start()

    def cancel(self, name: str) -> bool:
        """Stop waiting for a request: its result is not shown; queued parts nobody else waits for are
        cancelled. False if there was none."""
        if self._latest.pop(name, None) is not None:
            self._release(name)
            self._on_end(name)
            return True
        return False

    def names(self) -> list[str]:
        """The requests waited for."""
        return list(self._latest)

    def running(self, name: str) -> bool:
        """Whether the request's spinner is on."""
        return name in self._busy

    def end_busy(self, name: str) -> None:
        """End the request's spinner and hide its progress bar."""
        busy, progress = self._busy.pop(name, (None, None))
        if busy is not None:
            busy.loading = False
        if progress is not None:
            progress.visible = False

    def _is_latest(self, name: str, token: object) -> bool:
        return self._latest.get(name) is token

    def _hold(self, name: str, token: object, futures: list[Future[Any]]) -> None:
        self._futures[name] = (token, futures)

    def _release_if(self, name: str, token: object) -> None:
        if self._futures.get(name, (None,))[0] is token:
            self._release(name)

    def _release(self, name: str) -> None:
        """Tell the pool the view no longer waits for a request's futures."""
        _, futures = self._futures.pop(name, (None, []))
        pool = self._pool()
        for future in futures:
            if pool is not None:
                pool.release(future)

    def _finish(
        self, name: str, token: object, apply: Apply, results: list[Any] | None, failure: Exception | None
    ) -> None:
        """On the loop: apply a result now, or when the view is shown again if it is hidden (Panel 1.9
        re-points shared style sheets to its CDN when a pane updates while its tab is detached)."""
        if not self._is_active():
            self._defer(f"offload:{name}", functools.partial(self._finish_later, name, token, apply, results, failure))
            return
        try:
            self._guarded(_apply_result, apply, results, failure)
        finally:
            self._done(name, token)

    def _done(self, name: str, token: object) -> None:
        """A request whose result is on screen (or failed) is no longer waited for: a Cancel pressed
        after it must not say that it dropped it."""
        if self._latest.get(name) is token:
            del self._latest[name]
        self._on_end(name)

    def _finish_later(
        self, name: str, token: object, apply: Apply, results: list[Any] | None, failure: Exception | None
    ) -> None:
        try:
            if self._is_latest(name, token):
                _apply_result(apply, results, failure)
        finally:
            self._done(name, token)


class _Job:
    """One request: waits for its calls, counts them on the progress bar, hands the results back."""

    def __init__(
        self, jobs: Jobs, name: str, token: object, doc: Any, calls: Sequence[Any], apply: Apply, progress: Any
    ) -> None:
        self.jobs, self.name, self.token, self.doc = jobs, name, token, doc
        self.calls, self.apply, self.progress = calls, apply, progress

    def current(self) -> bool:
        """Not superseded or cancelled, and the browser tab is still open."""
        return self.jobs._is_latest(self.name, self.token) and self.doc.session_context is not None

    def advance(self, done: int) -> None:
        if self.current() and self.progress is not None:
            self.progress.value = done

    def finish(self, results: list[Any] | None, failure: Exception | None) -> None:
        if self.current():  # else superseded or cancelled, or the browser tab has closed
            when_shown(self.doc, functools.partial(self._finish_now, results, failure))

    def _finish_now(self, results: list[Any] | None, failure: Exception | None) -> None:
        if self.current():
            self.jobs._finish(self.name, self.token, self.apply, results, failure)

    def _futures(self) -> list[asyncio.Future[Any]]:
        pool = self.jobs._pool()
        if pool is None:
            return [asyncio.ensure_future(asyncio.to_thread(c)) for c in self.calls]
        raw = [pool.future(c.func, *c.args, **c.keywords) for c in self.calls]
        self.jobs._hold(self.name, self.token, raw)
        return [asyncio.wrap_future(f) for f in raw]

    async def run(self) -> None:
        if not self.current():
            return  # cancelled before it started
        results: list[Any] | None
        failure: Exception | None
        try:
            futures = self._futures()
            for done, next_done in enumerate(asyncio.as_completed(futures), start=1):
                await next_done
                if self.progress is not None and self.current():
                    self.doc.add_next_tick_callback(functools.partial(self.advance, done))
            results, failure = [f.result() for f in futures], None
        except Exception as exc:  # shown as a plain message, like any other failed update
            results, failure = None, exc
        self.jobs._release_if(self.name, self.token)
        if self.doc.session_context is None:
            return  # the tab closed meanwhile: its models are gone (and Panel's shared
            # stylesheets must not be re-pointed from a dead document)
        # back on the loop: apply in a callback that holds the document lock
        self.doc.add_next_tick_callback(functools.partial(self.finish, results, failure))


def _apply_result(apply: Apply, result: Any, failure: Exception | None) -> None:
    if failure is not None:
        raise failure
    apply(result)
