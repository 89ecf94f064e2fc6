"""Compute the stored mpmath references (tests/noisecore/data/references.json) from tests/noisecore/oracles.py.

    python tests/noisecore/make_references.py [pytest options, e.g. -n 2 --durations=0]

Runs every test that reads a stored reference (marker ``recompute``) with ``--write-oracles``: each
reference the tests ask for is computed with mpmath (never by noisecore), the tests check noisecore
against it as usual, and each process writes what it computed to a part file; the script then joins
the parts into the stored file (exactly the references asked for). To check the stored file against
mpmath without writing: ``python -m pytest --recompute-oracles -m recompute tests/noisecore``.
"""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))  # the checkout: `tests` and the packages import from it
    from tests.noisecore.references import DATA, read, write

    parts = sorted(DATA.parent.glob(f"{DATA.stem}.*.part.json"))
    for part in parts:
        part.unlink()
    args = ["-p", "no:cacheprovider", "--write-oracles", "-m", "recompute", "-q", str(HERE)]
    status = pytest.main(args + sys.argv[1:])
    if status != 0:
        sys.exit(f"the tests failed (pytest exit status {status}): {DATA} is unchanged")
    values = {}
    for part in sorted(DATA.parent.glob(f"{DATA.stem}.*.part.json")):
        values.update(read(part))
        part.unlink()
    write(values, DATA)
    print(f"{len(values)} references written to {DATA}")
