"""Opening pages at the cost of a small app, and nothing kept once a page is closed: a served session's
document (checked like Bokeh's own validation, which ``serve`` turns off), and a server in this process
opening and closing real websocket sessions, then looking for what they left behind."""

import asyncio
import gc
import urllib.request

import panel as pn
import pytest
from bokeh.core.validation import check_integrity
from bokeh.document import Document
from panel.links import Callback

from dashboard.app import ASSETS_ROUTE, NoiseLab, create_app, page_css
from dashboard.compute import ComputePool
from tests.conftest import close_websocket, free_port, pull_document, run_async


def test_a_page_document_passes_bokehs_validation():
    doc = Document()
    with pn.io.server.set_curdoc(doc):
        create_app().server_doc(doc)
    issues = check_integrity([m for root in doc.roots for m in root.references()])
    assert not issues.error, issues.error
    # the only warnings: the slots of the tabs not shown yet, empty until first shown
    assert {issue.name for issue in issues.warning} <= {"EMPTY_LAYOUT"}


def test_served_pages_link_their_fonts_instead_of_inlining_them():
    served, inlined = page_css(ASSETS_ROUTE), page_css()
    assert "base64" not in served and f"url({ASSETS_ROUTE}/katex/KaTeX_Main-Regular.woff2?v=" in served
    assert len(served) < 5_000 < 100_000 < len(inlined)


def _serve(factory):
    """A server of ``factory``'s pages in this process, on a free loopback port: (server, base URL)."""
    port = free_port()
    server = pn.serve(
        {"/": factory},
        port=port,
        address="127.0.0.1",
        websocket_origin=[f"127.0.0.1:{port}"],
        show=False,
        start=False,
    )
    server.start()
    return server, f"http://127.0.0.1:{port}"


async def _open(base):
    """One page as a browser opens it: the HTML, then the websocket (returned open) and the document pulled."""
    html = await asyncio.to_thread(lambda: urllib.request.urlopen(base + "/", timeout=300).read().decode())
    return await pull_document(base, html)


async def _open_and_close(base):
    await close_websocket(await _open(base))


def _live(kind):
    return sum(isinstance(obj, kind) for obj in gc.get_objects())


async def _cycles(server, base, count):
    for _ in range(count):
        await _open_and_close(base)
    await asyncio.sleep(1.0)  # the server notices the closed websockets
    await server._tornado._cleanup_sessions()  # discard closed sessions now (Bokeh: after 15 s)
    await asyncio.sleep(0.5)  # the sessions' end callbacks
    gc.collect()


@pytest.mark.subprocess
def test_closed_pages_leave_nothing_behind():
    async def scenario():
        pool = ComputePool()
        server, base = _serve(lambda: create_app(pool=pool))
        server._tornado._unused_session_lifetime_milliseconds = 0
        try:
            await _cycles(server, base, 2)
            before = [len(pn.state._fake_roots), len(pn.state._views), len(Callback.registry)]
            before += [_live(Document), _live(NoiseLab)]
            await _cycles(server, base, 6)
            after = [len(pn.state._fake_roots), len(pn.state._views), len(Callback.registry)]
            return before, [*after, _live(Document), _live(NoiseLab)]
        finally:
            server.stop()
            pool.close()

    before, after = run_async(scenario)
    # Panel's list of template roots, its views, its JavaScript callbacks, Bokeh documents, labs
    assert after == before


@pytest.mark.subprocess
def test_settings_changed_without_the_document_lock_update_the_figures():
    """Panel runs a click that arrives while a widget change is pending as a coroutine without Bokeh's
    document lock; a view that set figure properties directly then raised "_pending_writes should be
    non-None" (a CI run: Large type, then Reset). Every view update holds the document instead."""
    from bokeh.document import without_document_lock
    from panel.io.state import set_curdoc

    from dashboard.models import Settings

    async def scenario():
        pool = ComputePool()
        made = []

        def factory():
            lab = NoiseLab(Settings(), pool=pool)
            made.append((pn.state.curdoc, lab))
            return create_app(lab, pool=pool)

        server, base = _serve(factory)
        try:
            ws = await _open(base)
            doc, lab = made[0]
            errors, sizes = [], []
            finished = asyncio.Event()

            @without_document_lock
            async def press_like_panel():
                with set_curdoc(doc):
                    try:
                        for large in (True, False, True):
                            lab.settings.large_type = large
                            sizes.append(lab.rewind.figures[0].title.text_font_size)
                        # the first view's curves, its second figure, presenter mode and the tour
                        lab.settings.param.update(epsilon=2.5, rho=0.3, dim=2, seed=5, present=True)
                        lab.settings.param.trigger("committed")
                        lab.settings.tour = 2
                        lab.settings.reset()
                        sizes.append(lab.rewind.figures[0].title.text_font_size)
                    except Exception as exc:  # reported by the test
                        errors.append(exc)
                    finally:
                        finished.set()

            doc.add_next_tick_callback(press_like_panel)
            await asyncio.wait_for(finished.wait(), 60)
            await close_websocket(ws)
            return errors, sizes
        finally:
            server.stop()
            pool.close()

    errors, sizes = run_async(scenario)
    assert errors == []
    small, large = sizes[1], sizes[0]
    # Reset keeps the room's large type (issue 43): the last size is still large
    assert sizes == [large, small, large, large] and small != large
