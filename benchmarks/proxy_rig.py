"""Debian's nginx in front of noiselab backends, on loopback, as ``docs/deployment.md`` sets them up: a
self-signed certificate, the site from ``python -m dashboard.deploy nginx`` inside a minimal main
configuration, and one ``python -m dashboard.serve`` per port. Used by ``tests/deploy`` and
``benchmarks/bench_proxy.py``."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import free_port
from bench_page import cpu_seconds

from dashboard.deploy import backend_command

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def health(port) -> dict:
    """A backend's ``/healthz`` (its own process)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as resp:
        return json.loads(resp.read())


def answers(url, context=None) -> bool:
    """Whether ``url`` answers 200 (the connection closed at once)."""
    with urllib.request.urlopen(url, context=context, timeout=10) as resp:
        return resp.status == 200


def wait_until(predicate, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.2)  # polling interval of a condition
    raise TimeoutError("condition not met in time")


class Backend:
    """One ``python -m dashboard.serve`` on a port of its own (``num_procs`` web processes)."""

    def __init__(self, folder: Path, public_port: int, num_procs: int = 1):
        self.port = free_port()
        self.folder, self.public_port, self.num_procs = folder, public_port, num_procs
        self.proc: subprocess.Popen | None = None
        self.logs: list[Path] = []

    def start(self):
        log_path = self.folder / f"backend-{self.port}-{len(self.logs)}.log"
        self.logs.append(log_path)
        # the arguments the systemd unit gives (dashboard.deploy), its port in place of %i
        args = backend_command(port=self.port, server_name="localhost", listen=self.public_port)
        command = [sys.executable, "-m", "dashboard.serve", *args, "--num-procs", str(self.num_procs)]
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: health(self.port)["status"] == "ok")
        return self

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
        """Sessions built by the web process that answers (all of them when ``num_procs`` is 1)."""
        return health(self.port)["sessions_built"]

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)


def certificate(folder: Path) -> Path:
    """A self-signed certificate for localhost (its own CA for the clients); returns its path."""
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost"),
            *("-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")),
        ],
        check=True,
        capture_output=True,
    )
    return folder / "cert.pem"


class Proxy:
    """nginx with the site ``python -m dashboard.deploy nginx`` writes for ``backends``."""

    def __init__(self, folder: Path, public_port: int, backends, fail_timeout: int = 2):
        self.folder, self.port = folder, public_port
        self.ca = str(certificate(folder))
        site = subprocess.run(
            [
                *(sys.executable, "-m", "dashboard.deploy", "nginx", "--server-name", "localhost"),
                *(arg for b in backends for arg in ("--backend", f"127.0.0.1:{b.port}")),
                *("--certificate", self.ca, "--key", str(folder / "key.pem")),
                *("--listen", str(public_port), "--redirect-from", "0", "--fail-timeout", str(fail_timeout)),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (folder / "site.conf").write_text(site)
        kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        temp = "".join(f"    {kind}_temp_path {folder / kind};\n" for kind in kinds)
        (folder / "nginx.conf").write_text(
            f"worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'};\n"
            "events { worker_connections 4096; }\n"
            f"http {{\n    access_log {folder / 'access.log'};\n{temp}    include {folder / 'site.conf'};\n}}\n"
        )
        self.base = f"https://localhost:{public_port}"
        self.proc: subprocess.Popen | None = None

    def check(self) -> subprocess.CompletedProcess:
        """nginx's own check of the configuration (``nginx -t``)."""
        return subprocess.run(
            [NGINX, "-t", "-p", str(self.folder), "-c", str(self.folder / "nginx.conf")], capture_output=True, text=True
        )

    def start(self):
        self.proc = subprocess.Popen(
            [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        context = ssl.create_default_context(cafile=self.ca)
        wait_until(lambda: self.proc.poll() is None and answers(self.base + "/healthz", context))
        return self

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=15)

    def statuses(self) -> list[int]:
        """The HTTP status of every request in the access log."""
        lines = (self.folder / "access.log").read_text().splitlines()
        return [int(line.split('" ')[1].split()[0]) for line in lines if '" ' in line]
