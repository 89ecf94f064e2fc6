"""What the server answers and what a request cannot do (issue 44): the routes kept and why, exits
raised by requests contained, outside text never typeset, refusals named, one log line per refused
browser value. The served checks start real servers (``subprocess``); the rest run in-process."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import math
import os
import signal
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import panel as pn
import pytest
import tornado.web
from tornado.httpclient import AsyncHTTPClient, HTTPClientError
from tornado.platform.asyncio import AsyncIOLoop

from dashboard.app import URL_KEYS, VIEW_KEYS, NoiseLab, create_app, link_values
from dashboard.hardening import contain_exits
from dashboard.models import Settings
from dashboard.server_logging import configure_logging
from noisecore import Arete, AreteShare
from noisecore.brownian import BrownianRelease
from noisecore.tasks.data import read_table
from noisecore.threshold import ThresholdRound
from tests.conftest import free_port
from tests.dashboard.test_server import _alive, _children, _get, _serve, _wait

ROOT = Path(__file__).resolve().parents[2]
STOP_PATH = "/components/venv.__main__/a/b/c"  # imported venv's command line, which called sys.exit

# The routes the lab keeps, as the walk states them: handler class -> path pattern -> why
KEPT = {
    ("IcoHandler", "/favicon.ico$"),
    ("WSHandler", "/ws$"),
    ("QueuedDocHandler", "/?$"),
    ("StaticHandler", "/static/(?!extensions/)(.*)$"),
    ("AuthenticatedStaticFileHandler", "/noiselab-assets/(.*)$"),
    ("RootHandler", "/?$"),
    ("MultiRootStaticHandler", "/static/extensions/(.*)$"),
    ("StaticHandler", "/static/(.*)$"),
    ("HealthHandler", "/healthz$"),  # added by dashboard.serve after the framework's routes were closed
}
CLOSED = {"ComponentResourceHandler", "AutoloadJsHandler", "MetadataHandler"}

ROUTE_WALK = """
import json, sys
import dashboard.hardening as hardening
from dashboard.app import ASSETS_ROUTE
from dashboard.serve import serve

seen = {}
keep = hardening.keep_lab_routes

def spy(app, assets=None):
    seen["before"] = hardening.route_table(app, assets)
    return keep(app, assets)

hardening.keep_lab_routes = spy
server = serve(port=int(sys.argv[1]), start=False, warm=False)
print(json.dumps({"before": seen["before"], "after": hardening.route_table(server._tornado, ASSETS_ROUTE)}))
"""


@pytest.mark.subprocess
def test_every_route_the_server_registers_is_accounted_for():
    out = subprocess.run(
        [sys.executable, "-c", ROUTE_WALK, str(free_port())], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    tables = json.loads(out.stdout.strip().splitlines()[-1])
    before, after = tables["before"], tables["after"]
    assert all(reason for _, _, reason in before)  # every route says why it is kept or closed
    closed = {handler for _, handler, reason in before if reason.startswith("closed")}
    assert closed == CLOSED, before
    assert any("imports the module named in the address" in reason for *_, reason in before)
    assert {(handler, path) for path, handler, _ in after} == KEPT
    assert not any(reason.startswith("closed") for *_, reason in after)
    assert len(before) + 1 == len(after) + len(CLOSED)  # + 1: /healthz, the lab's own


@pytest.mark.parametrize("procs", ["1", "2"])
@pytest.mark.subprocess
def test_the_stop_request_leaves_the_server_answering(tmp_path, procs):
    """``GET /components/venv.__main__/a/b/c`` stopped the server (both processes of two, in two
    requests): now it is not found, and the server answers as before."""
    proc, log, port = _serve(tmp_path, "--num-procs", procs)
    try:
        assert _get(port)[0] == 200
        workers = _children(proc.pid) if procs == "2" else []
        for path in (STOP_PATH, STOP_PATH, "/components/..%2f..%2fetc%2fpasswd", "/autoload.js", "/metadata"):
            status, body = _get(port, path=path)
            assert status == 404 and "Traceback" not in body, (path, status)
        for _ in range(4):
            assert _get(port)[0] == 200
        assert proc.poll() is None
        if workers:
            assert sorted(_children(proc.pid)) == sorted(workers)  # neither was stopped and restarted
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text and "usage: venv" not in text, text[-3000:]


@pytest.mark.subprocess
def test_a_web_process_stopped_alone_is_started_again(tmp_path):
    """With several web processes, one that ends (here: a SIGTERM to it alone) is started again and
    logged; Tornado restarts only processes that exit non-zero, and a web process exited 0 before."""
    proc, log, port = _serve(tmp_path, "--num-procs", "2")
    try:
        assert _get(port)[0] == 200
        assert _wait(lambda: len(_children(proc.pid)) == 2)
        first, other = _children(proc.pid)
        os.kill(first, signal.SIGTERM)
        assert _wait(lambda: not _alive(first), timeout=30)
        assert _wait(lambda: len(_children(proc.pid)) == 2, timeout=60), "no web process took its place"
        assert other in _children(proc.pid)
        for _ in range(6):
            assert _get(port)[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "stopped while the server serves on" in text and "restarting" in text, text[-3000:]


@pytest.mark.subprocess
def test_an_ipv6_address_is_printed_in_brackets(tmp_path):
    proc, log, port = _serve(tmp_path, "--address", "::1")
    try:
        assert _get(port, host=f"[::1]:{port}", address="::1")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert f"serving on http://[::1]:{port}/" in log.read_text()


@pytest.mark.subprocess
def test_panel_serve_with_the_setup_script_keeps_only_the_labs_routes_and_hosts(tmp_path):
    port = free_port()
    log = tmp_path / "panel.log"
    command = [
        *(sys.executable, "-m", "panel", "serve", "dashboard/app.py", "--port", str(port)),
        *("--address", "127.0.0.1", "--setup", "dashboard/panel_setup.py"),
    ]
    with open(log, "w") as handle:
        proc = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        assert _get(port, path="/app")[0] == 200
        for path in (STOP_PATH, "/app/autoload.js", "/app/metadata", "/components/panel/x/y/z"):
            assert _get(port, path=path)[0] == 404, path
        assert _get(port, path="/app")[0] == 200 and proc.poll() is None
        assert _get(port, host="attacker.example", path="/app")[0] == 403  # DNS rebinding
        assert _get(port, path="/")[0] in (200, 302)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text and "usage: venv" not in text and "without --setup" not in text, text[-3000:]


class _Exits(tornado.web.RequestHandler):
    def get(self):
        raise SystemExit(2)


class _Interrupts(tornado.web.RequestHandler):
    async def get(self):
        await asyncio.sleep(0)
        raise KeyboardInterrupt


class _Fine(tornado.web.RequestHandler):
    def get(self):
        self.write("fine")


def test_exits_raised_by_requests_and_callbacks_are_contained(caplog):
    """A ``SystemExit`` in a request handler stopped the event loop, and the server with it."""
    from dashboard.serve import _stop_asked, run_until_stopped

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    io_loop = AsyncIOLoop(asyncio_loop=loop)
    assert contain_exits(loop) and contain_exits(loop)  # a second call keeps the one factory
    port = free_port()
    server = tornado.web.Application([("/exit", _Exits), ("/interrupt", _Interrupts), ("/fine", _Fine)]).listen(
        port, address="127.0.0.1"
    )
    answers = []

    async def client():
        http = AsyncHTTPClient()
        for path in ("/exit", "/interrupt"):
            try:
                await http.fetch(f"http://127.0.0.1:{port}{path}", request_timeout=2)
                answers.append((path, "answered"))
            except (TimeoutError, HTTPClientError, OSError) as exc:
                answers.append((path, type(exc).__name__))
        loop.call_soon(sys.exit, 3)  # a plain callback, not a task: the loop is run again
        await asyncio.sleep(0.01)
        response = await http.fetch(f"http://127.0.0.1:{port}/fine")
        answers.append(("/fine", response.body.decode()))
        _stop_asked(loop, signal.SIGTERM)

    try:
        with caplog.at_level(logging.ERROR, logger="noiselab"):
            io_loop.add_callback(client)
            assert run_until_stopped(io_loop) == signal.SIGTERM
    finally:
        server.stop()
        io_loop.close(all_fds=True)
        asyncio.set_event_loop(None)
    assert answers[-1] == ("/fine", "fine"), answers
    assert [path for path, _ in answers[:2]] == ["/exit", "/interrupt"]
    logged = caplog.text
    assert logged.count("contained SystemExit") == 2 and "contained KeyboardInterrupt" in logged


def test_run_until_stopped_gives_up_after_its_limit_and_validates():
    from dashboard.serve import run_until_stopped

    loop = asyncio.new_event_loop()
    io_loop = AsyncIOLoop(asyncio_loop=loop)
    try:

        def exit_again():
            loop.call_soon(exit_again)
            raise SystemExit(1)

        loop.call_soon(exit_again)
        assert run_until_stopped(io_loop, limit=3) is None
        with pytest.raises(ValueError, match="limit"):
            run_until_stopped(io_loop, limit=0)
    finally:
        io_loop.close(all_fds=True)


def test_another_task_factory_is_left_alone():
    loop = asyncio.new_event_loop()
    try:
        loop.set_task_factory(lambda loop, coro, **kw: asyncio.Task(coro, loop=loop, **kw))
        assert contain_exits(loop) is False
    finally:
        loop.close()


# --- outside text is never typeset --------------------------------------------------------------


def test_no_text_pane_of_the_app_typesets_maths():
    """Panel's Markdown typesets ``\\(...\\)`` and ``$$...$$`` by default, and MathJax's ``\\href``
    made a live ``javascript:`` link of a file name or an address key; formulas have LaTeX panes."""
    lab = NoiseLab()
    template = create_app(lab)
    for index in range(len(lab.tabs)):
        lab.tabs.active = index  # views are built when first shown
    parts = [*template.main, *template.sidebar]
    panes = [pane for part in parts for pane in part.select(pn.pane.Markdown)]
    assert len(panes) > 20
    assert all(pane.disable_math for pane in panes), [p.object[:60] for p in panes if not p.disable_math]
    # and the browser gets it: Panel's own Markdown never sends disable_math (its model keeps False)
    assert all(pane.get_root().disable_math is True for pane in panes)
    assert isinstance(template.main[0].get_root(), type(pn.pane.Alert("").get_root()))
    assert any(part.select(pn.pane.LaTeX) for part in parts)  # the formulas are still typeset, in their own panes


# --- named refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "refused"),
    [({"d": [b"2.0"]}, "d"), ({"users": [b"5.0"]}, "users"), ({"seed": [b"4.5"]}, "seed"), ({"d": [b"1e0"]}, "d")],
)
def test_a_whole_number_setting_refuses_a_decimal_by_name(query, refused):
    """``?d=2.0`` was taken into the address and then refused by every view without a notice."""
    settings = Settings()
    values, unknown = link_values(query)
    named = {**unknown, **{URL_KEYS[k]: v for k, v in settings.apply_values(values).items() if k in URL_KEYS}}
    assert set(named) == {refused}
    assert "whole number" in named[refused] or named[refused].startswith("must be one of 1, 2")
    assert settings.dim == 1 and settings.seed == Settings().seed


def test_a_decimal_trial_count_in_a_link_is_refused_by_name():
    lab = NoiseLab()
    refused = lab.apply_link_state({"experiments.trials": 250.0, "experiments.count": 30.0})
    key_trials, key_count = VIEW_KEYS["experiments.trials"], VIEW_KEYS["experiments.count"]
    assert set(refused) == {key_trials, key_count}
    assert "250" in refused[key_trials] and "whole number" in refused[key_count]
    assert lab.experiment_config.trials == 100
    assert lab.apply_link_state({"experiments.trials": 250}) == {} and lab.experiment_config.trials == 250


@pytest.mark.parametrize("n", [10**400, 2**53 + 1, 0, -3])
def test_share_counts_past_the_range_are_refused_naming_n(n):
    arete = Arete(0.1, 0.5, 0.05)
    with pytest.raises(ValueError, match=r"^n must be an integer in \[1, "):
        arete.shares(n)
    with pytest.raises(ValueError, match=r"^n must be"):
        AreteShare(0.1, 0.5, 0.05, n)


def test_the_largest_share_count_gives_finite_shares():
    share = Arete(0.1, 0.5, 0.05).shares(2**53)
    assert share.n == 2**53
    draws = share.sample(1000, rng=1)
    assert np.isfinite(draws).all()


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"time": math.nan}, "time"),
        ({"time": -1.0}, "time"),
        ({"time": "1"}, "time"),
        ({"value": [math.inf]}, "value"),
        ({"value": ["a"]}, "value"),
        ({"value": object()}, "value"),
        ({"value": [[1.0]]}, "value"),
        ({"value": []}, "value"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"epsilon": None}, "epsilon"),
    ],
)
def test_a_brownian_release_record_refuses_what_is_not_a_release(fields, named):
    good = {"time": 2.0, "value": [0.5, -1.0], "epsilon": 0.4}
    with pytest.raises((ValueError, TypeError), match=f"^{named}"):
        BrownianRelease(**{**good, **fields})
    release = BrownianRelease(**good)
    assert release.value.dtype == float and release.value.tolist() == [0.5, -1.0]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"epsilon": math.nan}, "epsilon"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"noisy_utility": math.inf}, "noisy_utility"),
        ({"noisy_utility": "3"}, "noisy_utility"),
        ({"noisy_threshold": object()}, "noisy_threshold"),
        ({"above": "yes"}, "above"),
        ({"above": 1}, "above"),
    ],
)
def test_a_threshold_round_record_refuses_what_is_not_a_round(fields, named):
    good = {"epsilon": 0.5, "noisy_utility": 1.0, "noisy_threshold": 2.0, "above": np.bool_(False)}
    with pytest.raises((ValueError, TypeError), match=f"^{named}"):
        ThresholdRound(**{**good, **fields})
    assert ThresholdRound(**good).above is False


def test_blank_lines_take_no_room():
    """A header of 1,000 columns and 15 million blank lines asked numpy for 112 GiB (one row per line)."""
    header = ",".join(f"c{i}" for i in range(1000)) + "\n"
    row = ",".join(["1.5"] * 1000) + "\n"
    text = header + row + "\n" * 3_000_000 + " , ,\n" * 1000 + row
    tracemalloc.start()
    try:
        names, values = read_table(text.encode())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(names) == 1000 and values.shape == (2, 1000) and (values == 1.5).all()
    assert peak < 8 * len(text), f"{peak / 1e6:.0f} MB for a {len(text) / 1e6:.0f} MB text"


# --- one log line per refused browser value ------------------------------------------------------


def set_from_json(value):  # named as Bokeh's: where a refused browser value is raised
    raise ValueError(f"failed to validate Slider.value: expected a value of type Real, got {value!r}")


def test_a_refused_browser_value_is_one_log_line_without_traceback(caplog):
    configure_logging()
    loggers = [logging.getLogger(n) for n in ("bokeh.server.protocol_handler", "panel.reactive", "tornado.application")]
    with caplog.at_level(logging.INFO):
        for value in ("abc", [1, 2]):
            try:
                set_from_json(value)
            except ValueError:
                for logger in loggers:  # Bokeh, Panel and Tornado each logged the same refusal
                    logger.error("error handling message", exc_info=True)
        try:
            raise ValueError("a real bug elsewhere")
        except ValueError:
            loggers[2].error("Exception in callback", exc_info=True)
    lines = [r for r in caplog.records if "refused a value a browser sent" in r.getMessage()]
    assert len(lines) == 2 and all(r.exc_info is None and r.levelname == "WARNING" for r in lines)
    assert "'abc'" in lines[0].getMessage()
    other = [r for r in caplog.records if r.getMessage() == "Exception in callback"]
    assert len(other) == 1 and other[0].exc_info is not None  # other errors keep their traceback


def test_the_setup_script_is_valid_python_that_hardens_on_the_loop():
    source = (ROOT / "dashboard" / "panel_setup.py").read_text()
    compile(source, "panel_setup.py", "exec")
    assert "harden_running_servers" in source and "add_callback" in source
    readme = (ROOT / "README.md").read_text()
    assert "--setup dashboard/panel_setup.py" in readme


@pytest.mark.subprocess
def test_framework_routes_refused_by_http_never_give_500(tmp_path):
    """``OPTIONS /autoload.js`` and ``/components/..%2f...`` gave HTTP 500."""
    proc, log, port = _serve(tmp_path)
    try:
        assert _get(port)[0] == 200
        for method, path in (("OPTIONS", "/autoload.js"), ("GET", "/components/..%2f..%2f"), ("POST", "/metadata")):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request(method, path, headers={"Host": f"127.0.0.1:{port}"})
            status = conn.getresponse().status
            conn.close()
            assert status == 404, (method, path, status)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text()
