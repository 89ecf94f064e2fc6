import fcntl
import os
import socket
from pathlib import Path

import numpy as np
import pytest

# The authors' local-search sets (paper B, Figure 4 shows eps = 6 and 8; eps = 7 is from their public
# code), (alpha, theta, lam), with the exact
# worst-case epsilon and E|Z| listed in shared/guides/reference-values.md.
LOCAL_SEARCH_SETS = {
    6: ((0.07559007048913552, 0.6295929433519876, 0.05453349704921005), 5.99966, 0.124460),
    7: ((0.03438865645893487, 0.7753538691868341, 0.03916449536622209), 6.99950, 0.082883),
    8: ((0.01922231819807612, 0.8312962061581013, 0.02547890283133737), 7.99901, 0.053432),
}


ROOT = Path(__file__).resolve().parents[1]
TOUR = ROOT / "notebooks" / "tour.ipynb"


@pytest.fixture
def rng():
    return np.random.default_rng(20261130)


def free_port() -> int:
    """A free TCP port on the loopback interface, for a server a test starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# The slow tier, by kind: every slow test carries one of these markers, and `slow` is their union
# (added here), so `pytest -m "not slow"` is the fast loop and `-m oracle` (say) one kind of the slow tier.
KINDS = ("notebook", "ui", "subprocess", "oracle", "sweep")


def pytest_addoption(parser):
    parser.addoption(
        "--recompute-oracles",
        action="store_true",
        help="recompute the stored mpmath references (tests/noisecore/data) and compare them with the files",
    )
    parser.addoption(
        "--write-oracles",
        action="store_true",
        help="recompute the stored mpmath references and rewrite the files (tests/noisecore/make_references.py)",
    )


BLAS_LIMIT = pytest.StashKey[object]()  # the workers' BLAS thread limit, kept for the session


def pytest_configure(config):
    """Under pytest-xdist, BLAS on one thread in each worker and in the servers and programs it starts:
    OpenBLAS's threads wait for work by spinning, so two workers with two BLAS threads each on two cores
    took turns at the statistical sweeps (the app's compute pool caps its work the same way)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
        config.stash[BLAS_LIMIT] = threadpool_limits(limits=1, user_api="blas")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the markers added here are selectable
def pytest_collection_modifyitems(config, items):
    """Add `slow` to every test of a slow kind; refuse a `slow` test without a kind. Under pytest-xdist,
    send the slow kinds first (longest kinds first), so no long test starts last on an idle machine."""
    unkinded = []
    for item in items:
        kinds = [kind for kind in KINDS if item.get_closest_marker(kind) is not None]
        if kinds:
            item.add_marker(pytest.mark.slow)
        elif item.get_closest_marker("slow") is not None:
            unkinded.append(item.nodeid)
        if "reference" in item.fixturenames:
            item.add_marker(pytest.mark.recompute)
    if unkinded:
        raise pytest.UsageError(
            f"slow tests need a kind marker ({', '.join(KINDS)}); `slow` alone: " + ", ".join(unkinded)
        )
    if hasattr(config, "workerinput"):  # an xdist worker: every worker sorts alike, so collections agree

        def rank(item):
            return next((k for k, kind in enumerate(KINDS) if item.get_closest_marker(kind)), len(KINDS))

        items.sort(key=rank)  # stable: file order within a kind


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist (the floor job) it is never called
def pytest_xdist_make_scheduler(config, log):
    """``-n``'s default distribution ('load') with work stealing: an idle worker takes half of a busy one's
    queue. 'load' hands each worker a fixed batch of consecutive tests, and since the slow kinds are sorted
    first one worker got every browser test: it ran them alone for 16 minutes after the other finished the
    rest of the suite in 4. An explicit ``--dist`` is left as given."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


def run_async(make_coroutine):
    """``asyncio.run(make_coroutine())`` on a thread of its own: under pytest-xdist a worker that has run
    a browser test keeps Playwright's event loop running on the main thread, where ``asyncio.run`` refuses."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(lambda: asyncio.run(make_coroutine())).result()


async def pull_document(base: str, html: str):
    """Open a served page's websocket as BokehJS does (the token from its HTML; wait for the server's ACK,
    then pull the document) and return it open; ``base`` is ``http://host:port``."""
    import json
    import re
    import uuid

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    token = re.search(r'"token":\s*"([^"]+)"', html).group(1)
    request = HTTPRequest(base.replace("http", "ws", 1) + "/ws", connect_timeout=600, request_timeout=600)
    ws = await websocket_connect(request, subprotocols=["bokeh", token], max_message_size=100 * 2**20)

    async def wait_for(msgtype):
        while True:
            fragment = await ws.read_message()
            assert fragment is not None, f"websocket closed before {msgtype}"
            if isinstance(fragment, str) and f'"{msgtype}"' in fragment.replace('": "', '":"'):
                return

    await wait_for("ACK")  # the session exists once the server acknowledges
    for part in ({"msgid": uuid.uuid4().hex, "msgtype": "PULL-DOC-REQ"}, {}, {}):
        await ws.write_message(json.dumps(part))
    await wait_for("PULL-DOC-REPLY")
    # as BokehJS does once the page is rendered: Panel runs its onload work (and applies later changes)
    # only after this event, and its per-document bookkeeping starts with it
    ready = {
        "events": [
            {
                "kind": "MessageSent",
                "msg_type": "bokeh_event",
                "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map", "entries": []}},
            }
        ]
    }
    for part in ({"msgid": uuid.uuid4().hex, "msgtype": "PATCH-DOC"}, {}, ready):
        await ws.write_message(json.dumps(part))
    return ws


async def close_websocket(ws) -> None:
    """Close and wait for the closing handshake, so the socket is closed (not left to the collector)."""
    ws.close()
    while await ws.read_message() is not None:
        pass


def execute_tour(cache_dir: Path | None = None):
    """The tour, executed from the repository root (as the README says to open it). With ``cache_dir``
    (a folder of this run's own, which every pytest-xdist worker of the run shares) it is executed once,
    by whichever test asks first; the others read that result."""
    import nbformat

    if cache_dir is None:
        from nbclient import NotebookClient

        nb = nbformat.read(TOUR, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
        return nb
    executed = cache_dir / "tour-executed.ipynb"
    with open(cache_dir / "tour.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the one executing it
        if not executed.exists():
            nbformat.write(execute_tour(), executed)
    return nbformat.read(executed, as_version=4)


@pytest.fixture(scope="session")
def executed_tour(tmp_path_factory):
    """The executed tour, shared by the tests of one run (see execute_tour)."""
    base = tmp_path_factory.getbasetemp()
    # under pytest-xdist each worker's folder lies in the run's own folder, which the workers share
    return execute_tour(cache_dir=base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)
