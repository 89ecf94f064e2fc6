"""A class served as IT would serve it: Debian's nginx from ``python -m dashboard.deploy nginx``, over
HTTPS with a self-signed certificate, in front of two backends (``python -m dashboard.serve`` on two
ports, as the systemd unit starts them), all on loopback.

Clients are Bokeh protocol clients (``benchmarks/bench_load.Student``: the page over HTTPS, then the
websocket, the document pulled), so 50 can open at once on a 2-core machine. Each backend counts the
sessions it built (``/healthz``): a websocket that reached the other backend than its page would build
the session a second time, so built == pages means every websocket met its page."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_load import Student
from proxy_rig import NGINX, Backend, Proxy

pytestmark = pytest.mark.subprocess

CLIENTS = 50


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    if not Path(NGINX).exists():
        pytest.fail("Debian's nginx is required for the proxy test (apt-get install nginx-light)")
    folder = tmp_path_factory.mktemp("nginx")
    public = free_port()
    backends = [Backend(folder, public), Backend(folder, public)]
    proxy = Proxy(folder, public, backends)
    for backend in backends:
        backend.start()
    proxy.start()
    yield proxy, backends
    proxy.stop()
    for backend in backends:
        backend.stop()
    for backend in backends:
        for log in backend.logs:
            text = log.read_text()
            assert "Traceback" not in text, text[-3000:]


async def _open(base, ca, count):
    students = [Student(base, ca_certs=ca) for _ in range(count)]
    await asyncio.gather(*(s.open() for s in students))
    return students


async def _until(predicate, timeout=120):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.1)  # polling interval of a condition


async def _close(students):
    """Close each page's websocket and its socket now (a socket left to the garbage collector warns in
    whichever later test collects it)."""
    streams = [getattr(getattr(s.ws, "protocol", None), "stream", None) for s in students]
    for student in students:
        student.reader.cancel()
        student.ws.close()
    await asyncio.sleep(0.2)  # the close frames go out
    for stream in streams:
        if stream is not None and not stream.closed():
            stream.close()


def test_fifty_pages_through_the_proxy_each_websocket_meets_its_page_and_a_lost_backend_is_survived(deployment):
    proxy, (first, second) = deployment
    base, ca = proxy.base, proxy.ca

    timings = {}

    async def scenario():
        start = time.perf_counter()
        students = await _open(base, ca, CLIENTS)
        timings["50 pages"] = time.perf_counter() - start
        built = [first.built(), second.built()]
        # every websocket reached the backend that built its page: no session was built twice
        assert sum(built) == CLIENTS, built
        assert min(built) >= 1, built  # the keys spread the class over both backends
        assert all(s.cookie and s.cookie.startswith("noiselab_backend=") for s in students)
        assert len({s.cookie for s in students}) == CLIENTS

        second.kill()  # one backend lost: its pages close, the other's answer on
        lost = built[1]
        await _until(lambda: sum(s.reader.done() for s in students) == lost)
        alive = [s for s in students if not s.reader.done()]
        assert len(alive) == built[0]
        replies = await asyncio.gather(*(s.move_epsilon(2.0) for s in alive))
        assert len(replies) == built[0]  # every page of the surviving backend redrew its headline
        before = first.built()
        late = await _open(base, ca, 10)  # new pages go to the survivor
        assert first.built() - before == 10
        await _close(late)
        timings["backend lost"] = time.perf_counter() - start

        second.start()  # restarted: once the proxy's fail timeout (2 s) has passed, it takes new pages again
        for _ in range(120):
            probe = await _open(base, ca, 1)
            await _close(probe)
            if second.built() > 0:
                break
            await asyncio.sleep(0.5)  # polling interval of a condition
        assert second.built() > 0, "the restarted backend took no new page"
        total = first.built() + second.built()
        again = await _open(base, ca, 20)
        assert first.built() + second.built() == total + 20  # sticky again: no session built twice
        assert second.built() > 1
        timings["restart"] = time.perf_counter() - start
        await _close(again)
        await _close(students)

    asyncio.run(scenario())
    print("seconds from the first page:", {k: round(v, 1) for k, v in timings.items()})
    statuses = proxy.statuses()
    assert statuses and not [s for s in statuses if s >= 500], sorted(set(statuses))


def test_the_written_site_passes_nginx_own_check(deployment):
    proxy, _ = deployment
    result = proxy.check()
    assert result.returncode == 0 and "syntax is ok" in result.stderr, result.stderr


def test_the_backends_run_what_the_systemd_unit_runs(deployment):
    """The unit's ExecStart (its port %i) is the command the backends of this test were started with."""
    from dashboard.deploy import backend_command, systemd_unit

    proxy, (first, _) = deployment
    unit = systemd_unit(python="/opt/noiselab/venv/bin/python", server_name="localhost", listen=proxy.port)
    args = backend_command(port=first.port, server_name="localhost", listen=proxy.port)
    args[1] = "%i"
    assert f"ExecStart=/opt/noiselab/venv/bin/python -m dashboard.serve {' '.join(args)}\n" in unit
