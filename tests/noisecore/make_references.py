"""Compute the stored mpmath references (tests/noisecore/data/references.json) from tests/noisecore/oracles.py.

    python tests/noisecore/make_references.py

Runs every test that reads a stored reference (marker ``recompute``) with ``--write-oracles``: each
reference the tests ask for is computed with mpmath (never by noisecore), the tests check noisecore
against it as usual, and the file is rewritten with exactly the references asked for. To check the
stored file against mpmath without writing: ``python -m pytest --recompute-oracles -m recompute tests/noisecore``.
"""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))  # the checkout: `tests` and the packages import from it
    args = ["-p", "no:xdist", "-p", "no:cacheprovider", "--write-oracles", "-m", "recompute", "-q", str(HERE)]
    sys.exit(pytest.main(args))
