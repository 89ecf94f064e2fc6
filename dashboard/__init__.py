"""The Panel app of noiselab (param models -> Viewer views -> one app factory)."""

import signal
import sys


def _stopped_while_starting(_signum, _frame):
    print("noiselab: stopped", file=sys.stderr, flush=True)
    raise SystemExit(130)


# `python -m dashboard.serve` imports this package first: Ctrl+C during the seconds its imports take
# then ends with one line, not a traceback from inside some import (the server installs its own handler)
_ARGV = getattr(sys, "orig_argv", [])
if "-m" in _ARGV[:-1] and _ARGV[_ARGV.index("-m") + 1] == "dashboard.serve":
    signal.signal(signal.SIGINT, _stopped_while_starting)
