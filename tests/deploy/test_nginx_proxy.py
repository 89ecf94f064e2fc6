"""A class served as IT would serve it: Debian's nginx from ``python -m dashboard.deploy nginx``, over
HTTPS with a self-signed certificate, in front of two backends (``python -m dashboard.serve`` on two
ports, as the systemd unit starts them), all on loopback.

Clients are Bokeh protocol clients (``benchmarks/bench_load.Student``: the page over HTTPS, then the
websocket, the document pulled), so 50 can open at once on a 2-core machine. Each backend counts the
sessions it built (``/healthz``): a websocket that reached the other backend than its page would build
the session a second time, so built == pages means every websocket met its page."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_load import Student

pytestmark = pytest.mark.subprocess

CLIENTS = 50


def _health(port) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as resp:
        return json.loads(resp.read())


def _wait(predicate, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.2)  # polling interval of a condition
    raise AssertionError("condition not met in time")


class Backend:
    def __init__(self, folder: Path, public_port: int):
        self.port = free_port()
        self.folder, self.public_port = folder, public_port
        self.proc = None
        self.logs = []

    def start(self):
        log_path = self.folder / f"backend-{self.port}-{len(self.logs)}.log"
        self.logs.append(log_path)
        args = subprocess.run(
            [sys.executable, "-m", "dashboard.deploy", "systemd", "--server-name", "localhost"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "ExecStart=" in args.stdout
        command = [
            sys.executable,
            "-m",
            "dashboard.serve",
            "--port",
            str(self.port),
            "--allow-host",
            "localhost",
            "--allow-websocket-origin",
            f"localhost:{self.public_port}",
        ]
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        _wait(lambda: _health(self.port)["status"] == "ok")

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def built(self) -> int:
        return _health(self.port)["sessions_built"]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.fail("Debian's nginx is required for the proxy test (apt-get install nginx-light)")
    folder = tmp_path_factory.mktemp("nginx")
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost"),
            *("-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")),
        ],
        check=True,
        capture_output=True,
    )
    public = free_port()
    backends = [Backend(folder, public), Backend(folder, public)]
    site = subprocess.run(
        [
            *(sys.executable, "-m", "dashboard.deploy", "nginx", "--server-name", "localhost"),
            *(arg for b in backends for arg in ("--backend", f"127.0.0.1:{b.port}")),
            *("--certificate", str(folder / "cert.pem"), "--key", str(folder / "key.pem")),
            *("--listen", str(public), "--redirect-from", "0", "--fail-timeout", "2"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (folder / "site.conf").write_text(site)
    temp = "".join(
        f"    {kind}_temp_path {folder / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (folder / "nginx.conf").write_text(
        f"worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'};\n"
        f"events {{ worker_connections 2048; }}\n"
        f"http {{\n    access_log {folder / 'access.log'};\n{temp}    include {folder / 'site.conf'};\n}}\n"
    )
    for backend in backends:
        backend.start()
    proxy = subprocess.Popen(
        [nginx, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    base = f"https://localhost:{public}"
    context = ssl.create_default_context(cafile=str(folder / "cert.pem"))
    _wait(lambda: proxy.poll() is None and urllib.request.urlopen(base + "/healthz", context=context, timeout=10))
    yield base, str(folder / "cert.pem"), backends, folder
    proxy.terminate()
    proxy.wait(timeout=15)
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
    for student in students:
        student.reader.cancel()
        student.ws.close()


def _statuses(folder: Path) -> list[int]:
    return [
        int(line.split('" ')[1].split()[0]) for line in (folder / "access.log").read_text().splitlines() if '" ' in line
    ]


def test_fifty_pages_through_the_proxy_each_websocket_meets_its_page_and_a_lost_backend_is_survived(deployment):
    base, ca, (first, second), folder = deployment

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
    statuses = _statuses(folder)
    assert statuses and not [s for s in statuses if s >= 500], sorted(set(statuses))
