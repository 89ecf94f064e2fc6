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
if _MODULE in COMMAND_MODULES or os.path.basename(sys.argv[0] if sys.argv else "") == "noiselab":
    signal.signal(signal.SIGINT, _stopped_while_starting)
