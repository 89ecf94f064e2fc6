"""Serving a class: the compute pool (threads and Dask), address values applied one by one, several
processes, the host allow-list and a clean stop."""

import gc
import html
import http.client
import json
import logging
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import panel as pn
import pytest

from dashboard.app import URL_KEYS, create_app, link_values, refused_message
from dashboard.compute import ComputePool
from dashboard.explorer import ExperimentSpec
from dashboard.models import DEFAULTS, Settings
from noisecore.dropout import ShareSum, dropout_point, laplace_dropout
from tests.conftest import free_port


def fresh_list(n, **_ignored):
    """A new object per call: identity shows whether a result was reused."""
    return list(range(n))


def fail_on_negative(n):
    if n < 0:
        raise ValueError("n must be >= 0")
    return n


# --- the compute pool ----------------------------------------------------------------------------
def test_pool_memoises_by_inputs_and_is_bounded():
    pool = ComputePool(threads=2, max_results=2)
    try:
        first = pool.result(fresh_list, 3)
        assert pool.result(fresh_list, 3) is first  # same inputs: the stored result
        assert pool.result(fresh_list, 4) is not first
        pool.result(fresh_list, 5)  # a third key drops the least recently used (3)
        assert pool.cached_count() == 2
        assert pool.result(fresh_list, 3) is not first and pool.result(fresh_list, 3) == first
        assert pool.map(fresh_list, [1, 2, 3]) == [[0], [0, 1], [0, 1, 2]]
    finally:
        pool.close()


def megabytes_of(n, content=b""):
    """n MB of zeros (the content only counts in the key)."""
    return np.zeros(n * 2**20 // 8)


def measured(pool, count):
    """Wait for the pool's measuring callbacks (they run on the worker thread, possibly after result()
    has returned) until it keeps ``count`` results; returns the bytes it counts."""
    for _ in range(3000):
        if pool.cached_count() == count and pool.cached_bytes() > 0:
            break
        time.sleep(0.01)
    return pool.cached_bytes()


def test_pool_keeps_results_within_a_byte_budget():
    """Results were bounded by count only: 64 uploads of about 20 MB each were kept (1.3 GB)."""
    pool = ComputePool(threads=2, max_bytes=3 * 2**20 + 2**19)
    try:
        for k in range(6):
            pool.result(megabytes_of, 1, bytes([k]) * 2000)
        assert 3 * 2**20 <= measured(pool, 3) <= 3.5 * 2**20 and pool.cached_count() == 3
        big = pool.result(megabytes_of, 4)  # larger than the budget: answered, not kept
        assert big.nbytes == 4 * 2**20 and measured(pool, 3) and pool.cached_count() == 3
        assert pool.result(megabytes_of, 4) is not big
    finally:
        pool.close()


def arrays_in(kind, n):
    """n arrays of 1 MB each, in a container of ``kind``."""
    arrays = [np.full(2**20 // 8, float(k)) for k in range(n)]
    return {k: a for k, a in enumerate(arrays)} if kind is dict else kind(arrays)


@pytest.mark.parametrize("kind", [list, tuple, set, frozenset, dict])
def test_pool_measures_results_inside_containers(kind):
    """Containers' sizes are estimated from their items (a renamed variable once made every list,
    tuple and set result raise inside the pool's measuring callback, which only logs)."""
    pool = ComputePool(threads=2)
    try:
        if kind in (set, frozenset):
            pool.result(tuple_set, kind, 3)
        else:
            pool.result(arrays_in, kind, 3)
        assert 3 * 2**20 <= measured(pool, 1) <= 3.2 * 2**20
    finally:
        pool.close()


def tuple_set(kind, n):
    """n distinct byte strings of 1 MB in a set (arrays are not hashable)."""
    return kind(bytes([k]) * 2**20 for k in range(n))


def test_pool_keys_uploads_by_content_hash():
    pool = ComputePool(threads=2)
    try:
        content = b"a,b\n" + b"1,2\n" * 100_000
        spec = ExperimentSpec(source="upload", content=content, target_column="b")
        first = pool.result(fresh_list, 3, spec=spec)
        again = ExperimentSpec(source="upload", content=bytes(bytearray(content)), target_column="b")
        assert pool.result(fresh_list, 3, spec=again) is first  # the same content in another object
        other = ExperimentSpec(source="upload", content=content + b"3,4\n", target_column="b")
        assert pool.result(fresh_list, 3, spec=other) is not first
        assert "1,2" not in repr(list(pool._results))  # the store holds no copy of the file
    finally:
        pool.close()


def test_pool_joins_a_running_request_and_forgets_failures():
    pool = ComputePool(threads=2)
    try:
        a = pool.future(time.sleep, 0.3)
        assert pool.future(time.sleep, 0.3) is a  # a class asking at once: one computation
        with pytest.raises(ValueError, match="n must be >= 0"):
            pool.result(fail_on_negative, -1)
        failed = pool.future(fail_on_negative, -1)
        assert failed.exception(timeout=5) is not None
        # a failure is not kept: the next request computes again
        assert pool.future(fail_on_negative, -1) is not failed
    finally:
        pool.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threads": 0}, "threads must be a positive integer"),
        ({"max_results": 1.5}, "max_results must be a positive integer"),
        ({"max_bytes": 0}, "max_bytes must be a positive integer"),
        ({"local_workers": True}, "local_workers must be a positive integer"),
        ({"scheduler": 8786}, "scheduler must be an address string"),
        ({"scheduler": "tcp://127.0.0.1:1", "local_workers": 1}, "not both"),
    ],
)
def test_pool_rejects_bad_arguments(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        ComputePool(**kwargs)


def test_pool_without_dask_does_not_import_it():
    code = (
        "import sys; from dashboard.compute import ComputePool; p = ComputePool(); p.result(abs, -2); "
        "p.close(); print('distributed' in sys.modules, 'dask' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"], out.stderr[-2000:]


def test_dask_pool_on_an_in_process_cluster_gives_the_same_numbers():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        pool = ComputePool(scheduler=cluster.scheduler_address)
        try:
            assert pool.uses_dask and "Dask scheduler" in pool.describe()
            args = (0.0, 1.0, 1.0)  # Laplace-limit shares: quick
            kwargs = {"fraction": 0.6, "sensitivity": 1.0, "epsilon_full": 1.0}
            remote = pool.result(dropout_point, *args, **kwargs)
            assert remote == dropout_point(*args, **kwargs)
            assert pool.future(dropout_point, *args, **kwargs) is pool.future(dropout_point, *args, **kwargs)
            with pytest.raises(ValueError, match="n must be >= 0"):
                pool.result(fail_on_negative, -3)  # the worker's error reaches the caller as itself
        finally:
            pool.close()


# --- dropout points (what the dropout button sends to the workers) --------------------------------
def test_dropout_point_laplace_limit_matches_laplace_shares():
    """With alpha = 0 the 'Arete' shares are Laplace shares. A fraction q of
    Laplace(1) shares is Gamma(q) - Gamma(q), whose E|Z| = 2 Gamma(q + 1/2) / (sqrt(pi) Gamma(q)); the
    closed form is itself checked by Monte Carlo (4.5 standard errors)."""
    _, abs_a, _, _ = dropout_point(0.0, 1.0, 1.0, fraction=0.6, sensitivity=1.0, epsilon_full=1.0)
    closed = 2 * math.gamma(1.1) / (math.sqrt(math.pi) * math.gamma(0.6))
    assert abs_a == pytest.approx(closed, rel=1e-7)
    rng = np.random.default_rng(7)
    z = np.abs(rng.gamma(0.6, 1.0, 400_000) - rng.gamma(0.6, 1.0, 400_000))
    assert abs(z.mean() - closed) < 4.5 * z.std() / math.sqrt(z.size)
    # all shares present: Laplace(1) itself, epsilon 1 at sensitivity 1
    full = dropout_point(0.0, 1.0, 1.0, fraction=1.0, sensitivity=1.0, epsilon_full=1.0)
    assert full[0] == pytest.approx(1.0, rel=1e-6) and full[1] == pytest.approx(1.0, rel=1e-6)
    assert laplace_dropout(1.0, fraction=0.6).var() == ShareSum(0.0, 1.0, 0.6, 1.0).var() == pytest.approx(1.2)


def test_dropout_point_validates():
    with pytest.raises(ValueError, match="fraction"):
        dropout_point(0.1, 0.5, 0.1, fraction=0.0)
    with pytest.raises(ValueError, match="alpha"):
        dropout_point(-0.1, 0.5, 0.1, fraction=0.5)


# --- address values ------------------------------------------------------------------------------
def test_one_bad_value_never_leaves_the_others_half_applied():
    """Before: ?eps=6&seed=-5 set epsilon to 6 without telling the views (param.update stopped at the
    bad seed), so the slider and the rewind said 1 and the other views 6."""
    s = Settings()
    seen = []
    s.param.watch(lambda e: seen.append((e.name, e.new)), ["epsilon", "seed"])
    refused = s.apply_values({"epsilon": 6.0, "seed": -5})
    assert s.epsilon == 6.0 and ("epsilon", 6.0) in seen  # applied, and the views were told
    assert s.seed == DEFAULTS["seed"] and set(refused) == {"seed"}
    assert "whole number from 0 to" in refused["seed"]


@pytest.mark.parametrize(
    ("query", "refused_key"),
    [
        ({"eps": [b"abc"]}, "eps"),
        ({"eps": [b"1e308"]}, "eps"),
        ({"delta": [b"2"]}, "delta"),
        ({"eps": [b"NaN"]}, "eps"),
        ({"eps": [b"Infinity"]}, "eps"),
        ({"stop": [b"<b>x</b>"]}, "stop"),
        ({"d": [b"3"]}, "d"),
        ({"tour": [b"99"]}, "tour"),
        ({"nonsense": [b"1"]}, "nonsense"),
        ({"eps": [b"\xff\xfe"]}, "eps"),
        ({"big": [b"maybe"]}, "big"),
        # a switch's value for a number, lists, objects, deep nesting, numbers past int()'s 4,300 digits
        ({"eps": [b"true"]}, "eps"),
        ({"sens": [b"false"]}, "sens"),
        ({"rho": [b"[1]"]}, "rho"),
        ({"d": [b"true"]}, "d"),
        ({"users": [b'{"a": 1}']}, "users"),
        ({"big": [b"2"]}, "big"),  # 1 and 0 are taken as true and false, as for present
        ({"stop": [b"null"]}, "stop"),
        ({"eps": [b"[" * 3000]}, "eps"),
        ({"eps": [b"[" * 3000 + b"]" * 3000]}, "eps"),
        ({"theta": [b"9" * 5000]}, "theta"),
    ],
)
def test_malformed_address_values_are_named_and_ignored(query, refused_key):
    s = Settings()
    values, unknown = link_values({**query, "seed": [b"4"]})
    refused = {**unknown, **{URL_KEYS[k]: v for k, v in s.apply_values(values).items() if k in URL_KEYS}}
    assert set(refused) == {refused_key}
    assert s.seed == 4  # the good value beside it is applied
    for name, default in DEFAULTS.items():
        if name != "seed":
            assert getattr(s, name) == default


def test_refused_keys_and_values_are_shown_as_text_never_as_markup():
    """Keys were once left raw: a backtick in a key closed the code span and the rest ran as HTML."""
    payload = '`<img src=x onerror="window.__xss=1">'
    key = "a" + payload
    arguments = {key: [b"1"], "stop": [b"**x**" + payload.encode()[:30]], "eps": [b"9" * 100]}
    refused = {key: "not a setting", "stop": "must be one of confidence, rat, peek", "eps": "must be a number"}
    text = refused_message(refused, arguments)
    assert "<" not in text and ">" not in text and "`" not in text.replace("\\`", "")
    rendered = pn.pane.Markdown(text)._transform_object(text)["object"]
    shown = html.unescape(rendered)  # what the browser's innerHTML receives
    assert "<img" not in shown and "&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;" in shown
    assert "**x**" in shown and "eps=" + "9" * 40 + "..." in shown


def test_good_address_values_round_trip():
    s = Settings()
    values, unknown = link_values({"eps": [b"3"], "d": [b"2"], "big": [b"true"], "stop": [b"rat"], "sens": [b"2.5"]})
    assert not unknown and s.apply_values(values) == {}
    assert (s.epsilon, s.dim, s.large_type, s.stop_rule, s.sensitivity) == (3.0, 2, True, "rat", 2.5)


# --- the server process --------------------------------------------------------------------------
def _get(port, host=None, path="/", timeout=60, read_timeout=30, address="127.0.0.1"):
    deadline = time.monotonic() + timeout
    while True:
        conn = http.client.HTTPConnection(address, port, timeout=read_timeout)
        try:
            conn.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
            resp = conn.getresponse()
            return resp.status, resp.read().decode("utf-8", "replace")
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
        finally:
            conn.close()


def _children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


def _port_free(port):
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wait(predicate, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def _serve(tmp_path, *args):
    """``python -m dashboard.serve --port PORT *args``, its output in ``tmp_path / "serve.log"``."""
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard.serve", "--port", str(port), *args],
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    return proc, log, port


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.subprocess
def test_several_processes_serve_and_stop_together(tmp_path, stop_signal):
    proc, log, port = _serve(tmp_path, "--num-procs", "2")
    try:
        for _ in range(6):  # the kernel spreads connections over both workers
            status, body = _get(port)
            assert status == 200 and "noiselab" in body
        workers = _children(proc.pid)
        assert len(workers) == 2
    finally:
        proc.send_signal(stop_signal)
        proc.wait(timeout=30)
    assert _wait(lambda: not any(_alive(w) for w in workers)), "a worker outlived the server"
    assert _wait(lambda: _port_free(port)), "the port is still held"
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]


@pytest.mark.subprocess
def test_only_known_hosts_are_answered(tmp_path):
    proc, log, port = _serve(tmp_path, "--allow-host", "lab.example.org")
    try:
        assert _get(port)[0] == 200
        assert _get(port, host=f"localhost:{port}")[0] == 200
        assert _get(port, host="lab.example.org")[0] == 200  # the name given with --allow-host
        status, body = _get(port, host=f"attacker.example:{port}")  # a DNS-rebinding page's request
        assert status == 403 and "noiselab" not in body
        status, _ = _get(port, host="attacker.example", path="/ws")
        assert status == 403
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text()


@pytest.mark.subprocess
def test_health_counts_this_processes_sessions_for_known_hosts_only(tmp_path):
    """GET /healthz: JSON with the pid and the sessions built and open (a page builds one); a foreign
    Host is refused like any other request, and /healthz/x is not found."""
    import json

    proc, log, port = _serve(tmp_path)
    try:
        status, body = _get(port, path="/healthz")
        before = json.loads(body)
        assert status == 200 and before["status"] == "ok" and before["pid"] == proc.pid
        assert _get(port)[0] == 200
        after = json.loads(_get(port, path="/healthz")[1])
        assert after["sessions_built"] == before["sessions_built"] + 1
        assert after["sessions_open"] >= 1
        assert _get(port, host="attacker.example", path="/healthz")[0] == 403
        assert _get(port, path="/healthz/x")[0] == 404
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text()


@pytest.mark.subprocess
def test_ipv6_mixed_case_hosts_and_bad_addresses_never_give_500(tmp_path):
    """--address ::1 refused to start, an IPv6 Host header gave HTTP 500, a mixed-case --allow-host
    refused every request, and a query value of over 4,300 digits gave HTTP 500."""
    proc, log, port = _serve(tmp_path, "--address", "::1", "--allow-host", "Lab.Example.ORG")
    queries = [
        "/",
        "/?eps=true&sens=false&d=true",
        "/?seed=" + "9" * 5000,
        "/?rho=" + "%5B" * 3000,
        "/?%3Cb%3E=" + "1" * 9000,
    ]
    try:
        hosts = (f"[::1]:{port}", "[::1]", f"LOCALHOST:{port}", "lab.example.org", f"LAB.example.ORG:{port}")
        for host, path in [*((h, "/") for h in hosts), *((hosts[0], q) for q in queries[1:])]:
            status, body = _get(port, host=host, path=path, address="::1")
            assert status == 200, (host, path[:40], body[-500:])
        assert _get(port, host="evil.example.org", address="::1")[0] == 403
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text and "ERROR" not in text, text[-3000:]


@pytest.mark.subprocess
def test_bad_options_give_a_plain_error():
    for args, message in (
        (["--num-procs", "0"], "num_procs must be a positive integer"),
        (["--dask-local", "0"], "local_workers must be a positive integer"),
        (["--num-procs", "2", "--dask-local", "1"], "--dask-scheduler"),
    ):
        out = subprocess.run(
            [sys.executable, "-m", "dashboard.serve", "--port", str(free_port()), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 2, out.stderr[-2000:]
        assert message in out.stderr and "Traceback" not in out.stderr


@pytest.mark.subprocess
def test_reload_spam_leaves_the_server_healthy(tmp_path):
    proc, log, port = _serve(tmp_path)
    try:
        assert _get(port)[0] == 200
        for k in range(12):  # page loads abandoned at once, some with hostile values
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", f"/?eps={'abc' if k % 2 else '1e308'}&stop=%3Cb%3E{'x' * 500}")
            conn.close()
        # every abandoned load still builds its session (about 1.2 s each here, one after another):
        # the server works through them and then answers
        status, body = _get(port, path="/?eps=2", read_timeout=300)
        assert status == 200 and "noiselab" in body
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text and "ERROR" not in text, text[-3000:]
    assert all(len(line) < 800 for line in text.splitlines())  # no value echoed whole into the log


@pytest.mark.sweep
def test_warm_up_starts_what_the_tour_asks_for():
    """The server starts the tour's dropout curves and the RAT study at start-up; a session's later
    request for the same settings joins those computations (same future) instead of repeating them."""
    from dashboard.app import warm_up
    from dashboard.explorer import ExperimentSpec, chunk_calls, level_grid, prepare
    from dashboard.models import ExperimentSettings
    from dashboard.tour import TOUR
    from dashboard.views.noise import cached_calibration, comparison_for, dropout_calls
    from noisecore import frontier

    pool = ComputePool(threads=2)
    try:
        assert warm_up(pool) > 0
        started = pool.cached_count()  # scenarios shared by the tour and the presets are started once
        settings = Settings()
        settings.apply(TOUR[-1].settings)  # the tour's last step: dropout curves for 20 users at epsilon 6
        # the view's Arete: calibrated at the slider's epsilon
        exact = cached_calibration(settings.epsilon, settings.sensitivity)
        _, calls = dropout_calls(settings, comparison_for(settings, frontier.load(), arete=exact))
        futures = [pool.future(c.func, *c.args, **c.keywords) for c in calls]
        assert pool.cached_count() == started  # nothing new was started
        assert all(f.result(timeout=300)[0] >= 6.0 - 1e-6 for f in futures)  # fewer shares: more loss
        # the experiments tab's first screen: its chunks are started once the task is ready
        config, spec = ExperimentSettings(), ExperimentSpec()
        prepared = pool.future(prepare, spec).result(timeout=300)
        calls = chunk_calls(
            prepared.task,
            levels=level_grid(*config.levels, count=config.count),
            trials=config.trials,
            rng=0,
            target=prepared.suggested_target,
            delta=settings.delta,
        )
        stored = pool.cached_count()
        futures = [pool.future(c.func, *c.args, **c.keywords) for c in calls]
        assert pool.cached_count() == stored  # the view's calls join the warm-up's
        assert all(f.result(timeout=300).train_bm.shape == (25, config.count) for f in futures)
    finally:
        pool.close()


def test_closing_the_pool_cancels_what_has_not_started():
    pool = ComputePool(threads=1)
    running = pool.future(time.sleep, 0.5)
    queued = [pool.future(fresh_list, k) for k in range(3)]
    time.sleep(0.1)
    pool.close()
    assert all(f.cancelled() for f in queued)
    assert running.result(timeout=5) is None  # the one already running finishes


def _wait_for(event_name, events):
    return events[event_name].wait(30)


def test_release_cancels_queued_work_nobody_waits_for():
    import threading

    events = {"go": threading.Event()}
    pool = ComputePool(threads=1)
    try:
        blocker = pool.future(_wait_for, "go", events)  # occupies the only worker thread
        queued = pool.future(math.factorial, 20)
        shared = pool.future(math.factorial, 21)
        assert pool.future(math.factorial, 21) is shared  # a second session joins it
        assert pool.release(queued) is True and queued.cancelled()
        assert pool.release(shared) is False and not shared.cancelled()  # the other session still waits
        events["go"].set()
        assert blocker.result(timeout=30) is True
        assert shared.result(timeout=30) == math.factorial(21)
        assert pool.release(blocker) is False  # done: nothing to cancel
        again = pool.future(math.factorial, 20)  # asked again later: computed afresh
        assert again is not queued and again.result(timeout=30) == math.factorial(20)
    finally:
        pool.close()


# --- what reaches clients and terminals ---------------------------------------------------------
def test_error_replies_carry_no_server_traceback():
    """Bokeh attached the traceback of the exception being handled to its ERROR reply."""
    from bokeh.protocol import Protocol
    from bokeh.server.connection import ServerConnection

    from dashboard.server_logging import configure_logging

    configure_logging()
    connection = ServerConnection.__new__(ServerConnection)
    connection._protocol = Protocol()
    request = Protocol().create("SERVER-INFO-REQ")
    try:
        raise KeyError("/secret/path/app.py " + "x" * 1000)
    except KeyError as exc:
        reply = connection.error(request, repr(exc))
    assert reply.content["traceback"] is None and len(reply.content["text"]) <= 200
    assert "Traceback" not in reply.content_json and reply.header["reqid"] == request.header["msgid"]


def test_every_logger_keeps_the_line_cap():
    """The cap was a filter on four named loggers, which their child loggers' records never pass."""
    from dashboard.server_logging import configure_logging

    configure_logging()
    seen = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    loggers = [logging.getLogger("bokeh.server.views.ws"), logging.getLogger("some.library.child")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        loggers[0].error("x" * 200_000)
        loggers[1].error("%s", "y" * 10_000)
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert [len(message) for message in seen] == [510, 510]


def test_a_socket_closed_before_its_session_is_not_logged_as_an_error():
    """A tab closed at once on a busy server: Bokeh's ``ServerConnection.session`` asserts, from the
    close handler (Tornado's "Uncaught exception GET /ws") and from a message handler (Bokeh's "error
    handling message"). Both went to the log as errors with a traceback; they are debug lines now, and
    any other AssertionError still is an error."""
    from bokeh.server.connection import ServerConnection

    from dashboard.server_logging import configure_logging

    configure_logging()
    connection = ServerConnection.__new__(ServerConnection)
    connection._session = None
    seen = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append((record.name, record.levelname))
    names = ("tornado.application", "bokeh.server.protocol_handler")
    for name in names:
        logging.getLogger(name).addHandler(handler)
    try:
        for name in names:
            try:
                connection.session.notify_connection_lost()
            except AssertionError:
                logging.getLogger(name).error("Uncaught exception GET /ws", exc_info=True)
            try:
                raise AssertionError("another assertion")
            except AssertionError:
                logging.getLogger(name).error("error handling message", exc_info=True)
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(handler)
    assert seen == [(name, "ERROR") for name in names]


@pytest.mark.subprocess
@pytest.mark.parametrize("delay", [0.0, 0.3, 1.0])
@pytest.mark.parametrize(
    "command",
    [["-m", "dashboard.cli", "serve"], ["-m", "dashboard.experiments_cli"], ["noiselab", "serve"]],
    ids=["cli", "experiments_cli", "noiselab"],
)
def test_ctrl_c_while_a_command_starts_prints_one_line(command, delay, tmp_path):
    """Ctrl+C in the first seconds of ``noiselab serve`` or the experiments command, while they import,
    printed a 16-47-line traceback (only ``python -m dashboard.serve`` was covered). The signal is sent
    ``delay`` seconds after the command began loading numpy (its package is imported by then; a signal
    during the interpreter's own start is Python's)."""
    if command[0] == "noiselab":
        command = [str(Path(sys.executable).with_name("noiselab")), *command[1:]]
    else:
        command = [sys.executable, *command]
    command += ["--port", str(free_port())] if "serve" in command else ["--out", str(tmp_path / "out")]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + 120
    while "numpy" not in (maps.read_text() if maps.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.01)  # polling a condition
    time.sleep(delay)  # not a limit: when the signal arrives
    before = proc.poll()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert before is None
    assert "Traceback" not in out, out[-3000:]
    # on a quiet machine the experiments command may have begun its run: its progress line is not noise
    progress = re.compile(r"^\S+\s+\[[#-]+\]\s+[\d.]+%")
    lines = [
        line
        for line in out.splitlines()
        if line.strip()
        and not line.startswith(("noiselab: serving", "noiselab: Bokeh shortcuts", "Launching"))
        and not progress.match(line)
    ]
    assert len(lines) == 1 and "stopped" in lines[0], out[-3000:]
    assert proc.returncode != 0


@pytest.mark.subprocess
@pytest.mark.parametrize("delay", [0.5, 3.0, None])
def test_ctrl_c_prints_one_line(delay):
    """Ctrl+C while the server imports (seconds on a busy machine) printed a 20-40-line traceback;
    once it serves, it stops with one line. ``None``: after the server answers."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if delay is None:
        assert _get(port)[0] == 200
    else:
        time.sleep(delay)  # not a limit: when the signal arrives
    before = proc.poll()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert before is None
    lines = [
        line
        for line in out.splitlines()
        if not line.startswith(("noiselab: serving", "noiselab: Bokeh shortcuts", "Launching server"))
    ]
    assert lines == ["noiselab: stopped"], out[-3000:]


async def _burst(port, count):
    """``count`` pages requested at once, each opened as a browser does once its HTML arrives (the
    websocket, then the document pulled); returns the times its HTML and its document arrived."""
    import asyncio

    from tornado.httpclient import AsyncHTTPClient

    from tests.conftest import close_websocket, pull_document

    client = AsyncHTTPClient(force_instance=True, max_clients=count)
    base = f"http://127.0.0.1:{port}"

    async def page():
        html = (await client.fetch(base + "/", request_timeout=600)).body.decode()
        html_at = time.monotonic()
        ws = await pull_document(base, html)
        ready_at = time.monotonic()
        await close_websocket(ws)
        return html_at, ready_at

    try:
        return await asyncio.gather(*(page() for _ in range(count)))
    finally:
        client.close()


@pytest.mark.subprocess
def test_a_burst_of_page_opens_serves_built_pages_between_builds(tmp_path):
    """When a class opens the link together, the first pages are ready while later ones are still being
    built: the server serves what arrived (a built page's websocket and document) between page builds.
    Before (Panel 1.9.4 / Bokeh 3.9.2 without ``PageQueue``) every queued page was built in one pass of
    the event loop, and the first page was ready only after the last page's HTML had been sent (this
    test failed so)."""
    from tests.conftest import run_async

    proc, log, port = _serve(tmp_path)
    try:
        assert _get(port, timeout=120, read_timeout=120)[0] == 200
        times = run_async(lambda: _burst(port, 8))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    gc.collect()  # a socket the burst left open warns here, not in a later test
    last_html = max(html_at for html_at, _ in times)
    first_ready = min(ready_at for _, ready_at in times)
    ready_early = sum(ready_at < last_html for _, ready_at in times)
    assert first_ready < last_html, (times, log.read_text()[-2000:])
    assert ready_early >= 2, times
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def _glibc_linux() -> bool:
    from dashboard.launch import _glibc

    return sys.platform.startswith("linux") and _glibc()


def _resident_mb(pid: int | str) -> float:
    """Resident size in MB of process ``pid`` (or ``"self"``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def test_freed_memory_goes_back_to_the_system():
    """What a closed session frees stays in glibc's heap (the resident size only grew) until
    ``malloc_trim``, which the server calls every 30 s on a worker thread."""
    from dashboard.serve import release_freed_memory

    if not _glibc_linux():
        pytest.skip("malloc_trim is glibc's")
    blocks = [bytearray(4000) for _ in range(40_000)]  # 160 MB from malloc's heap (not Python's arenas)
    del blocks[:-1]  # the last block pins the heap's top, as a live session's objects do
    freed = _resident_mb("self")
    assert release_freed_memory() is True
    assert freed - _resident_mb("self") > 100, (freed, _resident_mb("self"))


def test_the_page_queue_builds_one_at_a_time_in_arrival_order_and_pauses_between():
    from dashboard.serve import PageQueue
    from tests.conftest import run_async

    async def scenario():
        import asyncio

        queue, events = PageQueue(pause=0.05), []
        loop = asyncio.get_running_loop()

        async def build(k, fail=False):
            async with queue:
                events.append(("start", k, loop.time()))
                await asyncio.sleep(0.01)  # a build that yields: nobody else may start meanwhile
                events.append(("end", k, loop.time()))
                if fail:
                    raise RuntimeError("a failed build")

        tasks = [asyncio.ensure_future(build(k, fail=k == 1)) for k in range(4)]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        waiter = asyncio.ensure_future(build(9))
        await asyncio.sleep(0)
        waiter.cancel()  # a request that goes away while waiting
        await asyncio.gather(waiter, return_exceptions=True)
        await asyncio.wait_for(build(10), timeout=60)  # the queue is still free
        return events, results

    events, results = run_async(scenario)
    assert isinstance(results[1], RuntimeError) and results[0] is results[2] is results[3] is None
    order = [(kind, k) for kind, k, _ in events]
    assert order[:8] == [(kind, k) for k in range(4) for kind in ("start", "end")]
    assert ("start", 9) not in order and order[-2:] == [("start", 10), ("end", 10)]
    starts = {k: t for kind, k, t in events if kind == "start"}
    ends = {k: t for kind, k, t in events if kind == "end"}
    for k in range(1, 4):  # a lower bound (asyncio sleeps at least as long as asked), never an upper one
        assert starts[k] - ends[k - 1] >= 0.05 - 1e-3


def test_the_memory_trim_runs_periodically_off_the_event_loop(monkeypatch):
    import threading

    import dashboard.serve as serve_module
    from tests.conftest import run_async

    calls = []
    monkeypatch.setattr(serve_module, "release_freed_memory", lambda: calls.append(threading.get_ident()))

    async def scenario():
        import asyncio

        from tornado.ioloop import IOLoop

        class FakeServer:
            io_loop = IOLoop.current()

        trim = serve_module.trim_memory_periodically(FakeServer(), seconds=0.02)
        while len(calls) < 3:
            await asyncio.sleep(0.02)
        trim.stop()
        return threading.get_ident()

    loop_thread = run_async(scenario)
    assert len(calls) >= 3 and loop_thread not in calls


@pytest.mark.subprocess
def test_only_the_serve_command_switches_to_the_c_allocator(monkeypatch):
    """The server's start-up step (``dashboard.launch.start_command(serving=True)``, called first by
    ``noiselab serve`` and ``python -m dashboard.serve``) runs the process again in place with
    PYTHONMALLOC=malloc; other commands and a value already set are left alone, and importing the
    package changes nothing (it once re-executed the interpreter on import)."""
    if not _glibc_linux():
        pytest.skip("the switch is made on Linux with glibc only")
    command = (
        "from dashboard.launch import start_command; start_command(serving={serving})\n"
        "import os, signal\n"
        "print(os.environ.get('PYTHONMALLOC'), os.getpid(), signal.getsignal(signal.SIGINT).__name__)"
    )
    library = (
        "import sys; sys.argv[0] = '/some/bin/noiselab'; sys.argv[1:] = ['serve']\n"
        "import os, signal, dashboard, dashboard.cli, dashboard.serve\n"
        "print(os.environ.get('PYTHONMALLOC'), os.getpid(), signal.getsignal(signal.SIGINT).__name__)"
    )
    cases = [
        (command.format(serving=True), "malloc", "_stopped_while_starting"),
        (command.format(serving=False), "None", "_stopped_while_starting"),
        (library, "None", "default_int_handler"),  # an import: no allocator switch, no signal handler
    ]
    for preset in (None, "pymalloc"):
        if preset is None:
            monkeypatch.delenv("PYTHONMALLOC", raising=False)
        else:
            monkeypatch.setenv("PYTHONMALLOC", preset)
        for code, expected, handler in cases:
            proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
            out, _ = proc.communicate(timeout=120)
            allocator, pid, installed = out.split()
            assert allocator == (preset or expected), (code, preset, out)
            assert int(pid) == proc.pid  # the same process, run again in place
            assert installed == handler, (code, out)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _settled_resident_mb(pid: int) -> float:
    """The server's resident size once its closed sessions are discarded (Bokeh: within about 32 s) and it
    has been idle for one whole trim period (30 s) after that, so the trim has run on what they freed."""
    time.sleep(35)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        busy = _cpu_seconds(pid)
        time.sleep(40)
        if _cpu_seconds(pid) - busy < 0.5:  # no warm-up computation or page still running
            return _resident_mb(pid)
    raise AssertionError("the server never became idle")


@pytest.mark.subprocess
def test_closed_pages_give_their_memory_back(tmp_path):
    """Issue 20's aim: the resident size of ``python -m dashboard.serve`` after many page open/close cycles
    stays within a few percent of its size after 20. Each client pulls the document and reports 'document
    ready' as a browser does. Measured with 200 cycles: 260.4 and 260.6 MB after 20 and 200; with Python's own
    allocator (the server before, or PYTHONMALLOC=pymalloc) 316.6 MB after 20 and 374.9 MB (+18%) after 120."""
    import asyncio
    import urllib.request

    from tests.conftest import close_websocket, pull_document, run_async

    if not _glibc_linux():
        pytest.skip("the server's memory trim is glibc's")
    proc, log, port = _serve(tmp_path)
    base = f"http://127.0.0.1:{port}"

    async def cycles(count):
        for _ in range(count):
            page = await asyncio.to_thread(lambda: urllib.request.urlopen(base + "/", timeout=300).read().decode())
            await close_websocket(await pull_document(base, page))

    try:
        assert _get(port, timeout=300, read_timeout=300)[0] == 200
        run_async(lambda: cycles(20))
        after_20 = _settled_resident_mb(proc.pid)
        run_async(lambda: cycles(100))
        after_120 = _settled_resident_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    gc.collect()
    assert after_120 <= 1.03 * after_20, (after_20, after_120, log.read_text()[-2000:])
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def _all_subclasses(cls):
    found, todo = [], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_direct_theme_reads_are_bokehs_own():
    """The server reads a model's theme values directly (``read_themed_values_directly``), with Bokeh's own
    answers for models never themed, themed by a document's theme and unthemed again; it is left out
    where it would disagree."""
    from bokeh.core.has_props import HasProps
    from bokeh.document import Document
    from bokeh.models import Range1d, Slider
    from bokeh.themes import Theme

    from dashboard.shortcuts import _ours, read_themed_values_directly

    themed_values = HasProps.__dict__["themed_values"]
    assert not _ours(themed_values)  # compared below with Bokeh's own
    try:
        HasProps.themed_values = lambda self: {}  # a method the shortcut would not agree with
        assert read_themed_values_directly() is False
        assert HasProps.themed_values(Range1d()) == {}
        HasProps.themed_values = themed_values
        assert read_themed_values_directly() is True and read_themed_values_directly() is True
        assert HasProps.__dict__["themed_values"] is not themed_values

        doc = Document()
        ranges = [Range1d(), Range1d(end=9.0)]
        slider = Slider(start=0, end=1, value=0.5)
        models = [*ranges, slider]
        for model in models:
            doc.add_root(model)
        for model in models:
            assert model.themed_values() is None is themed_values(model)
        doc.theme = Theme(json={"attrs": {"Range1d": {"start": -5.0, "end": 5.0}}})
        for model in models:
            assert model.themed_values() is themed_values(model)
        assert ranges[0].start == -5.0 and ranges[0].end == 5.0 and ranges[1].end == 9.0
        assert ranges[0].themed_values() == {"start": -5.0, "end": 5.0} and slider.themed_values() is None
        doc.theme = None
        for model in models:
            assert model.themed_values() is None is themed_values(model)
        assert ranges[0].start == 0 and ranges[0].end == 1 and ranges[1].end == 9.0
    finally:
        HasProps.themed_values = themed_values


def _page_json() -> str:
    """A fresh page's document as sent, with what differs between two builds of the same page (model
    ids, object ids, Panel's name counters) numbered in order of appearance."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        create_app().server_doc(doc)
    sent = doc.to_json()
    text = json.dumps(
        getattr(sent, "content", sent),
        sort_keys=True,
        default=lambda value: bytes(value.data).hex() if hasattr(value, "data") else repr(value),
    )
    ids = {}
    text = re.sub(r"\bp\d{3,}\b", lambda m: f"m{ids.setdefault(m.group(0), len(ids))}", text)
    text = re.sub(r"\d{12,}", "#", text)
    return re.sub(r"(?<=[A-Za-z])\d{5}\b", "#", text)


def test_remembered_prepared_defaults_are_bokehs_own():
    """Per class, the server keeps a property's prepared default when it is a plain immutable value (the
    type alone for an empty list, dict or set) and whether a default is unstable
    (``remember_prepared_defaults``): for every property of every model class the two agree with
    Bokeh's own, twice (the second read from what was kept); nothing mutable or made per model is kept;
    a theme's value still wins; and a whole page, built with every shortcut the server takes, is sent
    exactly as without them."""
    import bokeh.models  # noqa: F401 (every model class defined)
    from bokeh.core.has_props import HasProps
    from bokeh.core.property.bases import Property
    from bokeh.core.property.descriptors import PropertyDescriptor
    from bokeh.document import Document
    from bokeh.model import util
    from bokeh.models import Range1d
    from bokeh.themes import Theme

    from dashboard.shortcuts import PREPARED_KINDS, _ours, remember_prepared_defaults, take_shortcuts

    originals = {
        (HasProps, "themed_values"): HasProps.__dict__["themed_values"],
        (PropertyDescriptor, "has_unstable_default"): PropertyDescriptor.__dict__["has_unstable_default"],
        (Property, "themed_default"): Property.__dict__["themed_default"],
        (util, "visit_value_and_its_immediate_references"): vars(util)["visit_value_and_its_immediate_references"],
    }
    themed_default = originals[Property, "themed_default"]
    has_unstable_default = originals[PropertyDescriptor, "has_unstable_default"]

    def same(a, b):
        return a is b or a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))

    assert not any(_ours(method) for method in originals.values())  # the page below is built on Bokeh's own
    without = _page_json()
    try:
        assert remember_prepared_defaults() is True and remember_prepared_defaults() is True
        assert Property.__dict__["themed_default"] is not themed_default
        kept = fresh = empty = instances = 0
        for cls in _all_subclasses(HasProps):
            try:
                model = cls()
            except Exception:  # abstract, or needs arguments
                model = None
            for name in cls.properties():
                descriptor = cls.lookup(name)
                prop = descriptor.property
                first, second = prop.themed_default(cls, name, None), prop.themed_default(cls, name, None)
                bokehs = themed_default(prop, cls, name, None)
                assert type(first) is type(second) is type(bokehs), (cls, name)
                if type(first) in PREPARED_KINDS:
                    assert same(first, bokehs) and same(second, first), (cls, name)
                    kept += 1
                elif isinstance(first, (HasProps, list, dict, set)):
                    assert second is not first, (cls, name)  # made afresh each time, as by Bokeh
                    if isinstance(first, (list, dict, set)) and not bokehs:
                        assert not first and not second, (cls, name)
                        empty += 1
                    fresh += 1
                if model is not None and isinstance(descriptor, PropertyDescriptor):  # not an alias
                    for _ in range(2):
                        assert descriptor.has_unstable_default(model) == has_unstable_default(descriptor, model)
                    instances += 1
        assert kept > 3000 and fresh > 1000 and empty > 1000 and instances > 5000, (kept, fresh, empty, instances)
        # a kept empty default is a new container every read, owned by nobody until its model takes it
        first, second = Range1d().tags, Range1d().tags
        assert first is not second and type(first) is type(second) is type(Range1d.lookup("tags").property.wrap([]))
        first.append("x")
        assert second == [] and Range1d().tags == []

        doc = Document()
        plain, themed = Range1d(), Range1d()
        doc.add_root(themed)
        doc.theme = Theme(json={"attrs": {"Range1d": {"start": -5.0}}})
        assert (plain.start, themed.start) == (0, -5.0)
        doc.theme = None
        assert themed.start == 0

        assert take_shortcuts("") == {"read_themed_values_directly": True, "remember_prepared_defaults": True}
        assert _page_json() == without
    finally:
        for (owner, name), value in originals.items():
            setattr(owner, name, value)


def test_a_page_shares_one_style_sheet_model_per_address():
    """The page is attached in one pass (``_server_doc_in_one_pass``); on Panel 1.10 that left each
    restyled model with sheets of its own (450 models a first page instead of 307). The pass ends with
    one sheet model per address, on the installed Panel whichever it is, and the models keep their order
    of sheets."""
    from bokeh.document import Document
    from bokeh.models import Div, ImportedStyleSheet
    from panel.io.state import set_curdoc

    from dashboard.app import _one_sheet_per_address

    doc = Document()
    with set_curdoc(doc):
        create_app().server_doc(doc)
    sheets = [m for m in doc.models if isinstance(m, ImportedStyleSheet)]
    assert 3 <= len(sheets) == len({sheet.url for sheet in sheets}) <= 12, sorted(s.url for s in sheets)
    assert len(doc.models) < 330

    doc = Document()
    first, second = ImportedStyleSheet(url="a.css"), ImportedStyleSheet(url="a.css")
    other = ImportedStyleSheet(url="b.css")
    divs = [Div(stylesheets=[first, other]), Div(stylesheets=[other, second, "p { color: red; }"])]
    for div in divs:
        doc.add_root(div)
    assert _one_sheet_per_address(doc) == 1
    kept = divs[0].stylesheets[0]
    assert kept in (first, second) and divs[1].stylesheets[1] is kept and divs[1].stylesheets[0] is other
    assert divs[0].stylesheets[1] is other and divs[1].stylesheets[2] == "p { color: red; }"
    assert sum(doc.get_model_by_id(sheet.id) is not None for sheet in (first, second)) == 1
    assert _one_sheet_per_address(doc) == 0


def _first_page_inventory(create):
    """The Panel objects a page renders (by kind) and its Bokeh models, for a page built by ``create()``."""
    from collections import Counter

    from bokeh.document import Document
    from panel.io.state import set_curdoc
    from panel.viewable import Viewable

    created = []
    init = Viewable.__init__

    def counted(self, *args, **kwargs):
        created.append(self)
        init(self, *args, **kwargs)

    Viewable.__init__ = counted
    try:
        doc = Document()
        with set_curdoc(doc):
            create().server_doc(doc)
    finally:
        Viewable.__init__ = init
    rendered = Counter(type(o).__name__ for o in created if o._models)
    return rendered, len(doc.models)


def test_the_inventory_floor_has_the_lab_first_screen_inventory():
    """``benchmarks/floor_app.py --inventory`` says it renders as many Panel objects of each kind as the
    lab's first screen, and figures like its three: its cost is then what that content costs in Panel.
    This fails when the lab's first screen changes, so the floor is brought along: the same number of
    Panel objects (within 3), of widgets of each kind exactly, text panes within 3, Bokeh models within 5%;
    attached in one pass as the lab attaches its page, the inventory is the same page."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        import floor_app
    finally:
        sys.path.pop(0)

    lab, lab_models = _first_page_inventory(create_app)
    floor, floor_models = _first_page_inventory(floor_app.create_inventory)
    assert abs(sum(lab.values()) - sum(floor.values())) <= 3, (lab, floor)
    widgets = ("Button", "Toggle", "FloatSlider", "IntSlider", "TooltipIcon", "Select", "RadioButtonGroup")
    widgets += ("IntInput", "FileDownload", "Tabs", "Card", "Bokeh", "FlexBox", "LaTeX")
    assert {k: lab[k] for k in widgets} == {k: floor[k] for k in widgets}
    text = ("HTML", "Text", "Markdown", "Str", "TextAlert", "Alert")
    assert abs(sum(lab[k] for k in text) - sum(floor[k] for k in text)) <= 3, (lab, floor)
    assert abs(lab_models - floor_models) <= 0.05 * lab_models, (lab_models, floor_models)
    # attached as the lab attaches its page (--one-pass): the same page
    assert _first_page_inventory(floor_app.attached_in_one_pass(floor_app.create_inventory)) == (floor, floor_models)
    minimal, minimal_models = _first_page_inventory(floor_app.create_floor)
    assert sum(minimal.values()) < 12 and minimal_models < 60  # the minimal floor it is set against


def test_each_replacement_still_has_its_reason():
    """Each replacement is kept while the Bokeh code it replaces still does the slow thing it avoids: this
    fails when a Bokeh release changes that code (bokeh#15322, #15355), so the replacement is measured
    again (``benchmarks/bench_shortcuts.py``) and kept only if it still saves 5% of a page build."""
    import dis

    from bokeh.core.has_props import HasProps
    from bokeh.core.property.bases import Property
    from bokeh.core.property.descriptors import PropertyDescriptor

    from dashboard.shortcuts import SHORTCUTS, _ours

    def calls(function):
        code = function.__code__
        ops = {(i.opname, i.argval) for i in dis.get_instructions(code)}
        return set(code.co_names), set(code.co_consts), ops

    assert [f.__name__ for f in SHORTCUTS] == ["read_themed_values_directly", "remember_prepared_defaults"]
    themed_values = vars(HasProps)["themed_values"]
    themed_default = vars(Property)["themed_default"]
    has_unstable_default = vars(PropertyDescriptor)["has_unstable_default"]
    assert not any(_ours(f) for f in (themed_values, themed_default, has_unstable_default))  # Bokeh's own
    # read_themed_values_directly: a getattr that fails through HasProps.__getattr__ for an unthemed model
    names, consts, _ = calls(themed_values)
    assert "getattr" in names and "__themed_values__" in consts and "__getattr__" in vars(HasProps)
    # remember_prepared_defaults: every read copies, validates and transforms the default again
    names, _, _ = calls(themed_default)
    assert {"_overridden_defaults", "prepare_value"} <= names and {"_copy_default", "_raw_default"} <= names
    names, _, _ = calls(has_unstable_default)
    assert {"_may_have_unstable_default", "is_unstable"} <= names  # and the overrides, read again


def test_garbage_collection_is_tuned_once_before_serving():
    """``tune_garbage_collection`` freezes what is alive (so later collections skip it) and raises the
    young generation's threshold, keeping the older ones; run in a child process, as freezing cannot be
    undone for the objects it froze. A wrong threshold is refused by name."""
    code = (
        "import gc, json\n"
        "from dashboard.serve import tune_garbage_collection as tune\n"
        "before = gc.get_threshold(); frozen = gc.get_freeze_count()\n"
        "now = tune()\n"
        "print(json.dumps([before, now, frozen, gc.get_freeze_count()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, now, frozen_before, frozen_after = json.loads(out.stdout.strip().splitlines()[-1])
    assert now == [10_000, before[1], 100] and before[0] < 10_000  # Python 3.11 and 3.12: 700
    assert frozen_after > frozen_before + 50_000  # the imported modules' objects (Python 3.12 starts with 375)

    from dashboard.serve import tune_garbage_collection

    for error, bad in ((ValueError, 0), (ValueError, -5), (TypeError, 2.5), (TypeError, True), (TypeError, "10000")):
        with pytest.raises(error, match="young must be"):
            tune_garbage_collection(bad)
        with pytest.raises(error, match="full must be"):
            tune_garbage_collection(10_000, bad)


def test_serve_queues_pages_and_trims_memory():
    """``serve`` wires both in (each web process calls them after Bokeh's fork)."""
    import inspect

    import dashboard.serve as serve_module

    source = inspect.getsource(serve_module.serve)
    assert "queue_page_builds(server)" in source and "trim_memory_periodically(server)" in source
    assert "take_shortcuts(shortcuts)" in source
    assert source.index("tune_garbage_collection()") < source.index("pn.serve(")  # before the fork, no session open
    assert "perform_error_diagnostics.set_value(False)" in source


SHORTCUT_PROBE = """
import json, sys
from bokeh.core.has_props import HasProps
from dashboard import shortcuts
taken = shortcuts.take_shortcuts(sys.argv[1] if len(sys.argv) > 1 else None)
ours = shortcuts._ours(vars(HasProps).get("themed_values"))
print(json.dumps({"taken": taken, "themed_values_replaced": ours}))
"""


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("setting", "env", "expect_off"),
    [
        ("off", None, "all"),
        (None, "off", "all"),
        ("-read_themed_values_directly", None, {"read_themed_values_directly"}),
        (None, "-remember_prepared_defaults", {"remember_prepared_defaults"}),
        (None, None, set()),
    ],
)
def test_the_shortcuts_switch_takes_all_none_or_all_but_named(setting, env, expect_off):
    """One entry point, switchable: 'off' (from --no-shortcuts, or NOISELAB_SHORTCUTS=off) takes none and
    leaves Bokeh's own methods in place; '-name' entries leave those out; unset takes every one that
    applies to the installed versions."""
    import json
    import os

    environment = {k: v for k, v in os.environ.items() if k != "NOISELAB_SHORTCUTS"}
    if env is not None:
        environment["NOISELAB_SHORTCUTS"] = env
    args = [sys.executable, "-c", SHORTCUT_PROBE, *([setting] if setting is not None else [])]
    result = json.loads(subprocess.run(args, capture_output=True, text=True, check=True, env=environment).stdout)
    taken = result["taken"]
    assert list(taken) == ["read_themed_values_directly", "remember_prepared_defaults"]
    not_taken = {name for name, t in taken.items() if not t}
    if expect_off == "all":
        assert not_taken == set(taken) and not result["themed_values_replaced"]
    else:
        assert not_taken == expect_off
        assert result["themed_values_replaced"] == ("read_themed_values_directly" not in expect_off)


@pytest.mark.subprocess
def test_a_bad_shortcuts_setting_is_named_and_the_banner_says_what_was_taken(tmp_path):
    import os

    env = {**os.environ, "NOISELAB_SHORTCUTS": "bogus"}
    result = subprocess.run(
        [sys.executable, "-m", "dashboard.serve", "--port", str(free_port())], capture_output=True, text=True, env=env
    )
    assert result.returncode == 2 and "NOISELAB_SHORTCUTS must be 'off' or '-name' entries" in result.stderr
    proc, log, port = _serve(tmp_path, "--no-shortcuts")
    try:
        assert _get(port)[0] == 200  # the page is served with Panel and Bokeh as they ship
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "Bokeh shortcuts taken: none" in text and "Traceback" not in text
