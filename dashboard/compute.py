"""Where the heavy, deterministic work of the app runs: worker threads of the web process by default,
or a Dask cluster shared by several web processes or machines.

A :class:`ComputePool` belongs to one server process (``dashboard.serve`` builds it, ``panel serve``
keeps it in ``pn.state.cache``) and is handed to every session. Results are memoised by their inputs in
a store bounded by count and by bytes (an uploaded file in the inputs is keyed by its content hash,
so the store never holds the file itself), and a request that is already running is joined rather
than repeated, so a class that asks for the same calibration at once computes it once. Only
module-level functions with plain arguments are sent, so the same call works in a thread and on a
Dask worker.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import dataclasses
import hashlib
import os
import queue
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["ComputePool", "pool_mapper", "process_mapper", "run_capped"]


class ComputePool:
    """Run ``func(*args, **kwargs)`` away from the event loop, memoised by its inputs.

    Parameters
    ----------
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``). Dask is imported only when this or
        ``local_workers`` is given.
    local_workers : int, optional
        Start a Dask ``LocalCluster`` with this many single-threaded worker processes instead.
    threads : int, optional
        Worker threads when Dask is not used (default: the number of cores).
    max_results : int
        Results kept for repeat requests (least recently used dropped first).
    max_bytes : int
        Memory the kept results may take (estimated from their arrays and bytes; least recently
        used dropped first; a larger result is returned but not kept).
    """

    def __init__(
        self,
        *,
        scheduler: str | None = None,
        local_workers: int | None = None,
        threads: int | None = None,
        max_results: int = 64,
        max_bytes: int = 256 * 2**20,
    ):
        if scheduler is not None and not isinstance(scheduler, str):
            raise TypeError(f"scheduler must be an address string such as 'tcp://127.0.0.1:8786', not {scheduler!r}")
        if scheduler is not None and local_workers is not None:
            raise ValueError("give either scheduler (an existing Dask cluster) or local_workers, not both")
        for name, value in (
            ("local_workers", local_workers),
            ("threads", threads),
            ("max_results", max_results),
            ("max_bytes", max_bytes),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.scheduler = scheduler
        self.local_workers = local_workers
        self.threads = threads or os.cpu_count() or 2
        self.max_results = max_results
        self.max_bytes = max_bytes
        self._results: collections.OrderedDict = collections.OrderedDict()
        self._sizes: dict = {}  # key -> estimated bytes of a finished result
        self._lock = threading.RLock()  # a done callback may run inside future()
        self._executor: _DaemonThreads | None = None  # created on first use: after a fork, in the process that uses it
        self._client: Any = None  # distributed.Client, imported only with Dask
        self._cluster: Any = None

    @property
    def uses_dask(self) -> bool:
        return self.scheduler is not None or self.local_workers is not None

    def describe(self) -> str:
        if self.scheduler is not None:
            return f"Dask scheduler at {self.scheduler}"
        if self.local_workers is not None:
            return f"local Dask cluster, {self.local_workers} worker processes"
        return f"{self.threads} worker threads"

    # --- submitting -------------------------------------------------------------------------
    def future(self, func, /, *args, **kwargs) -> concurrent.futures.Future:
        """A future for ``func(*args, **kwargs)``: a stored or running one for the same inputs if there is one."""
        key = (
            func.__module__,
            func.__qualname__,
            tuple(_key_part(a) for a in args),
            tuple(sorted((k, _key_part(v)) for k, v in kwargs.items())),
        )
        try:
            hash(key)
        except TypeError:  # arrays or other unhashable inputs: computed every time
            with self._lock:
                return self._submit(func, args, kwargs)
        with self._lock:
            found = self._results.get(key)
            if found is not None and not (found.done() and (found.cancelled() or found.exception() is not None)):
                self._results.move_to_end(key)
                found._noiselab_waiters = getattr(found, "_noiselab_waiters", 0) + 1
                return found
            future = self._submit(func, args, kwargs)
            future._noiselab_waiters = 1  # type: ignore[attr-defined]  # counted by release
            self._results[key] = future
            self._sizes.pop(key, None)
            self._trim()
        future.add_done_callback(lambda done: self._measure(key, done))
        return future

    def _measure(self, key, future):
        """A result has arrived: count its bytes against the budget (a failure is not kept)."""
        failed = future.cancelled() or future.exception() is not None
        size = 0 if failed else _size_of(future.result())
        with self._lock:
            if self._results.get(key) is not future:
                return
            if failed or size > self.max_bytes:
                del self._results[key]
                return
            self._sizes[key] = size
            self._trim()

    def _trim(self):
        """Drop the least recently used results until both bounds hold (running ones count 0 bytes)."""
        while len(self._results) > self.max_results or sum(self._sizes.values()) > self.max_bytes:
            key, _ = self._results.popitem(last=False)
            self._sizes.pop(key, None)

    def cached_bytes(self) -> int:
        """Estimated bytes of the results kept."""
        with self._lock:
            return sum(self._sizes.values())

    def release(self, future) -> bool:
        """One caller of :meth:`future` no longer needs ``future``. When no caller does and it has not
        started, it is cancelled (on a Dask cluster: its task is cancelled), so a cancelled request
        leaves no queue behind; a request made again later is computed afresh. Returns True if cancelled."""
        with self._lock:
            waiting = getattr(future, "_noiselab_waiters", 0) - 1
            future._noiselab_waiters = max(waiting, 0)
            if waiting > 0 or future.done():
                return False
        remote = getattr(future, "_noiselab_remote", None)
        if remote is not None:
            remote.cancel()
            return True
        return future.cancel()

    async def run(self, func, /, *args, **kwargs):
        """Await ``func(*args, **kwargs)`` from the event loop."""
        return await asyncio.wrap_future(self.future(func, *args, **kwargs))

    def result(self, func, /, *args, **kwargs):
        """Block for ``func(*args, **kwargs)`` (command-line tools, notebooks)."""
        return self.future(func, *args, **kwargs).result()

    def map(self, func, iterable, /, **kwargs) -> list:
        """Block for ``[func(item, **kwargs) for item in iterable]``, the items spread over the workers."""
        futures = [self.future(func, item, **kwargs) for item in iterable]
        return [f.result() for f in futures]

    def cached_count(self) -> int:
        with self._lock:
            return len(self._results)

    def _submit(self, func, args, kwargs) -> concurrent.futures.Future:
        if self.uses_dask:
            return self._submit_dask(func, args, kwargs)
        if self._executor is None:
            self._executor = _DaemonThreads(self.threads)
        return self._executor.submit(func, *args, **kwargs)

    def _submit_dask(self, func, args, kwargs) -> concurrent.futures.Future:
        client = self._dask_client()
        remote = client.submit(func, *args, pure=False, **kwargs)
        local: concurrent.futures.Future = concurrent.futures.Future()
        local.set_running_or_notify_cancel()

        def transfer(done):
            try:
                local.set_result(done.result())
            except BaseException as exc:
                local.set_exception(exc)

        remote.add_done_callback(transfer)
        local._noiselab_remote = remote  # type: ignore[attr-defined]  # keeps the Dask future (and so its task) alive
        return local

    def _dask_client(self):
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.local_workers is not None:
                self._cluster = LocalCluster(
                    n_workers=self.local_workers, threads_per_worker=1, dashboard_address=None, host="127.0.0.1"
                )
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.scheduler, timeout=10)
        return self._client

    def close(self):
        """Stop the worker threads or the Dask client (and a local cluster)."""
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    @classmethod
    def from_environment(cls) -> ComputePool:
        """Pool configured by ``NOISELAB_DASK_SCHEDULER`` or ``NOISELAB_DASK_LOCAL`` (used by ``panel serve``)."""
        scheduler = os.environ.get("NOISELAB_DASK_SCHEDULER") or None
        text = os.environ.get("NOISELAB_DASK_LOCAL") or None
        local = None
        if text is not None:
            try:
                local = int(text)
            except ValueError:
                raise ValueError(f"NOISELAB_DASK_LOCAL must be a number of workers, got {text[:40]!r}") from None
        return cls(scheduler=scheduler, local_workers=local)


_DIGEST_FROM = 1024  # bytes inputs longer than this are keyed by their hash


def _key_part(value):
    """An input as part of a store key: long bytes by their content hash (an uploaded file is not
    kept alive by the store), frozen dataclasses field by field."""
    if isinstance(value, bytes | bytearray | memoryview) and len(value) > _DIGEST_FROM:
        return ("blake2b", len(value), hashlib.blake2b(value, digest_size=32).hexdigest())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = tuple((f.name, _key_part(getattr(value, f.name))) for f in dataclasses.fields(value))
        return (type(value).__module__, type(value).__qualname__, fields)
    if type(value) is tuple:
        return tuple(_key_part(item) for item in value)
    return value


def _size_of(value, depth: int = 0, seen: set | None = None) -> int:
    """Bytes a result holds, roughly: its arrays, bytes and strings, through containers and object
    attributes a few levels deep (long sequences estimated from their first items)."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 5:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes if value.base is None or id(value.base) not in seen else 0
    if isinstance(value, bytes | bytearray | str):
        return sys.getsizeof(value)
    if isinstance(value, dict):
        items = list(value.items())[:100]
        part = sum(_size_of(k, depth + 1, seen) + _size_of(v, depth + 1, seen) for k, v in items)
        return sys.getsizeof(value) + part * len(value) // max(len(items), 1)
    if isinstance(value, list | tuple | set | frozenset):
        elements = list(value)[:100] if not isinstance(value, list | tuple) else value[:100]
        part = sum(_size_of(item, depth + 1, seen) for item in elements)
        return sys.getsizeof(value) + part * len(value) // max(len(elements), 1)
    size = sys.getsizeof(value)
    attributes = getattr(value, "__dict__", None)
    if attributes is not None:
        size += _size_of(attributes, depth + 1, seen)
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if isinstance(name, str) and hasattr(value, name):
                size += _size_of(getattr(value, name), depth + 1, seen)
    return size


class _DaemonThreads:
    """A fixed set of daemon worker threads. Unlike ``ThreadPoolExecutor``, whose threads the
    interpreter waits for at exit (with every queued item), stopping the server here never waits
    for a computation nobody will see."""

    def __init__(self, count: int):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, name=f"noiselab-{k}", daemon=True) for k in range(count)]
        for thread in self._threads:
            thread.start()

    def submit(self, func, /, *args, **kwargs) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((future, func, args, kwargs))
        return future

    def _work(self):
        while (item := self._queue.get()) is not None:
            future, func, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(func(*args, **kwargs))
            except BaseException as exc:  # handed to whoever awaits the result
                future.set_exception(exc)

    def shutdown(self):
        """Cancel what has not started; the threads end after their current item."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in self._threads:
            self._queue.put(None)


class _OneBlasThread:
    """BLAS limited to one thread while any capped call runs (a process-wide setting: the first call
    in sets it, the last one out restores it, so concurrent worker threads never undo each other).
    Small matrix work (the ridge task's 77 x 77 eigendecompositions) runs 1.6-2x faster on one
    thread, and worker threads or processes then do not oversubscribe the cores."""

    def __init__(self):
        self._lock = threading.Lock()
        self._depth = 0
        self._limiter: Any = None

    def __enter__(self):
        from threadpoolctl import threadpool_limits

        with self._lock:
            if self._depth == 0:
                self._limiter = threadpool_limits(limits=1, user_api="blas")
            self._depth += 1

    def __exit__(self, *exc):
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self._limiter.restore_original_limits()
                self._limiter = None


_ONE_BLAS_THREAD = _OneBlasThread()


def run_capped(func, /, *args, **kwargs):
    """``func(*args, **kwargs)`` with BLAS on one thread (see :class:`_OneBlasThread`)."""
    with _ONE_BLAS_THREAD:
        return func(*args, **kwargs)


def process_mapper(workers: int = 1):
    """A ``mapper(func, items)`` for :func:`noisecore.experiments.run_experiment`: the items in order,
    computed on ``workers`` processes (joblib; 1 = here), each with BLAS on one thread."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")

    def mapper(func, items):
        if workers == 1:
            return (run_capped(func, item) for item in items)
        from joblib import Parallel, delayed

        return Parallel(n_jobs=workers, return_as="generator")(delayed(run_capped)(func, item) for item in items)

    return mapper


def pool_mapper(pool: ComputePool):
    """A ``mapper(func, items)`` that spreads the items over a :class:`ComputePool` (its threads or
    its Dask cluster), in order, each with BLAS on one thread."""

    def mapper(func, items):
        futures = [pool.future(run_capped, func, item) for item in items]
        return (future.result() for future in futures)

    return mapper
