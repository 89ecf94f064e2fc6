"""dashboard.jobs.Jobs, the machinery behind BaseView.offload_each, in a stand-in served session."""

import asyncio
import functools
from types import SimpleNamespace

import panel as pn

from dashboard.compute import ComputePool
from dashboard.jobs import Jobs, when_shown
from tests.conftest import run_async


class Doc:
    """A served document: a session context and next-tick callbacks run when the test says; shown in
    the browser unless ``shown=False`` (then :meth:`show` says it is, as the browser's 'document ready'
    does)."""

    def __init__(self, shown=True):
        self.session_context = object()
        self.callbacks = []
        self.on_ready = []
        if shown:
            pn.state._loaded[self] = True  # Panel's record of the sessions whose page is shown

    def on_event(self, name, callback):
        assert name == "document_ready"
        self.on_ready.append(callback)

    def show(self):
        pn.state._loaded[self] = True
        for callback in self.on_ready:
            callback(SimpleNamespace(event_name="document_ready"))

    def add_next_tick_callback(self, callback):
        self.callbacks.append(callback)

    def run_callbacks(self):
        callbacks, self.callbacks = self.callbacks, []
        for callback in callbacks:
            callback()


class View:
    """The hooks a view gives its Jobs, recording what happens."""

    def __init__(self, pool=None):
        self.pool = pool
        self.active = True
        self.deferred = {}
        self.ended = []
        self.applied = []
        self.jobs = Jobs(
            pool=lambda: self.pool,
            guarded=self.guarded,
            is_active=lambda: self.active,
            defer=self.deferred.__setitem__,
            on_end=self.end,
        )

    def guarded(self, func, *args):
        func(*args)
        return True

    def end(self, name):
        self.ended.append(name)
        self.jobs.end_busy(name)


def square(x):
    return x * x


def served(test, shown=True):
    """Run ``test(doc)`` as a coroutine with ``doc`` as Panel's current document."""

    async def main():
        doc = Doc(shown)
        with pn.io.server.set_curdoc(doc):
            await test(doc)

    run_async(main)


async def settle(view, doc):
    await asyncio.gather(*view.jobs._tasks)
    doc.run_callbacks()


def test_results_are_applied_on_the_loop_with_a_spinner_and_progress():
    async def test(doc):
        view = View()
        busy = SimpleNamespace(loading=False)
        progress = SimpleNamespace(max=0, value=0, visible=False)
        calls = [functools.partial(square, k) for k in range(4)]
        assert view.jobs.submit("sq", calls, view.applied.append, busy=busy, progress=progress)
        assert busy.loading and progress.visible and progress.max == 4 and view.jobs.running("sq")
        await settle(view, doc)
        assert view.applied == [[0, 1, 4, 9]]
        assert progress.value == 4 and not progress.visible and not busy.loading
        assert not view.jobs.running("sq") and view.ended == ["sq"]

    served(test)


def test_a_later_request_supersedes_and_cancel_drops():
    async def test(doc):
        view = View()
        view.jobs.submit("sq", [functools.partial(square, 2)], view.applied.append)
        view.jobs.submit("sq", [functools.partial(square, 3)], view.applied.append)
        view.jobs.submit("other", [functools.partial(square, 5)], view.applied.append)
        assert view.jobs.cancel("other") and not view.jobs.cancel("other")
        await settle(view, doc)
        assert view.applied == [[9]]
        assert view.jobs.names() == []  # applied: nothing is waited for any more

    served(test)


def test_cancel_after_the_result_is_applied_drops_nothing():
    """A Cancel pressed as a run ends said "Cancelled; the previous result is kept" beside the new result
    (a CI run): the finished request was still counted as waited for."""

    async def test(doc):
        view = View()
        view.jobs.submit("sq", [functools.partial(square, 2)], view.applied.append)
        await settle(view, doc)
        assert view.applied == [[4]] and not view.jobs.cancel("sq")
        view.jobs.submit("sq", [functools.partial(square, 3)], view.applied.append)
        view.active = False
        await settle(view, doc)
        assert view.jobs.names() == ["sq"]  # the result waits for its view, so it can still be cancelled
        view.deferred.pop("offload:sq")()
        assert view.applied == [[4], [9]] and view.jobs.names() == [] and not view.jobs.cancel("sq")

    served(test)


def test_a_result_for_a_hidden_view_waits_until_it_is_shown():
    async def test(doc):
        view = View()
        view.jobs.submit("sq", [functools.partial(square, 4)], view.applied.append)
        view.active = False
        await settle(view, doc)
        assert view.applied == [] and list(view.deferred) == ["offload:sq"]
        view.deferred.pop("offload:sq")()
        assert view.applied == [[16]] and view.ended == ["sq"]

    served(test)


def test_the_pool_computes_and_is_released():
    async def test(doc):
        pool = ComputePool(threads=1)
        try:
            view = View(pool)
            view.jobs.submit("sq", [functools.partial(square, 6), functools.partial(square, 7)], view.applied.append)
            await settle(view, doc)
            assert view.applied == [[36, 49]] and view.jobs._futures == {}
        finally:
            pool.close()

    served(test)


def test_a_failure_reaches_the_views_guard():
    async def test(doc):
        view = View()
        errors = []

        def guarded(func, *args):
            try:
                func(*args)
            except ValueError as exc:
                errors.append(str(exc))
            return True

        view.jobs._guarded = guarded
        view.jobs.submit("bad", [functools.partial(int, "x")], view.applied.append)
        await settle(view, doc)
        assert view.applied == [] and "invalid literal" in errors[0] and view.ended == ["bad"]

    served(test)


def test_without_a_server_everything_runs_at_once():
    view = View()
    assert view.jobs.submit("sq", [functools.partial(square, 3)], view.applied.append)
    assert view.applied == [[3 * 3]] and view.jobs.names() == []


def test_a_result_that_arrives_before_the_page_is_shown_waits_for_it():
    """Panel 1.9 drops the changes held while a session is unconnected, though the browser may have
    fetched the document already: a linked experiments tab lost its plots that way (a CI run). A result
    waits for the browser's 'document ready'."""

    async def test(doc):
        view = View()
        view.jobs.submit("sq", [functools.partial(square, 5)], view.applied.append)
        await settle(view, doc)
        assert view.applied == [] and view.jobs.names() == ["sq"] and len(doc.on_ready) == 1
        doc.show()
        assert view.applied == [[25]] and view.jobs.names() == [] and view.ended == ["sq"]

    served(test, shown=False)


def test_a_result_cancelled_before_the_page_is_shown_is_never_applied():
    async def test(doc):
        view = View()
        view.jobs.submit("sq", [functools.partial(square, 5)], view.applied.append)
        await settle(view, doc)
        assert view.jobs.cancel("sq")
        doc.show()
        assert view.applied == []

    served(test, shown=False)


def test_when_shown_runs_at_once_without_a_session_or_once_shown():
    ran = []
    when_shown(None, lambda: ran.append("no document"))
    doc = Doc(shown=False)
    when_shown(doc, lambda: ran.append("waited"))
    assert ran == ["no document"]
    doc.show()
    when_shown(doc, lambda: ran.append("at once"))
    assert ran == ["no document", "waited", "at once"]
