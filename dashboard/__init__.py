"""The Panel app of noiselab (param models -> Viewer views -> one app factory)."""

import os
import signal
import sys


def _stopped_while_starting(_signum, _frame):
    # nothing has been started or written yet; an exception raised here could land inside a C extension's
    # import (numpy's), which turns it into an ImportError with a traceback: leave at once instead
    print("noiselab: stopped", file=sys.stderr, flush=True)
    os._exit(130)


# the commands (`python -m dashboard.serve`, `python -m dashboard.cli`, `python -m
# dashboard.experiments_cli`, `noiselab`) import this package first: Ctrl+C during the seconds their
# imports take then ends with one line, not a traceback from inside some import (each command installs
# its own handler once it runs). A library import (a notebook, the tests) is left alone.
COMMAND_MODULES = ("dashboard.serve", "dashboard.cli", "dashboard.experiments_cli")
_ARGV = getattr(sys, "orig_argv", [])
_MODULE = _ARGV[_ARGV.index("-m") + 1] if "-m" in _ARGV[:-1] else None
_CONSOLE_SCRIPT = os.path.basename(sys.argv[0] if sys.argv else "") == "noiselab"
if _MODULE in COMMAND_MODULES or _CONSOLE_SCRIPT:
    signal.signal(signal.SIGINT, _stopped_while_starting)


def _serving() -> bool:
    if _MODULE == "dashboard.serve":
        return True
    return _CONSOLE_SCRIPT and sys.argv[1:2] == ["serve"]


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError, AttributeError):
        return False


# The server runs on the C library's allocator (PYTHONMALLOC=malloc), which gives a closed page's memory
# back to the system at the server's periodic trim. With Python's own small-object allocator the freed
# blocks stay in its 1 MB arenas, which return only when wholly empty: after 200 page open/close cycles
# 99 MB of its arenas held nothing and the resident size had grown 11.5% (on this allocator: 0.1%).
# Set only for the serve command, on Linux with glibc, before any heavy import: the process runs itself
# again (same process id) with the variable set. A PYTHONMALLOC already set is kept.
if _serving() and "PYTHONMALLOC" not in os.environ and sys.platform.startswith("linux") and _glibc():
    if sys.executable and getattr(sys, "orig_argv", None):
        os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONMALLOC": "malloc"})
