import pytest

from .references import References


@pytest.fixture(scope="session")
def _references(request):
    config = request.config
    write = config.getoption("--write-oracles")
    if write and hasattr(config, "workerinput"):
        raise pytest.UsageError("--write-oracles writes one file: run it without -n (make_references.py does)")
    mode = "write" if write else "recompute" if config.getoption("--recompute-oracles") else "stored"
    references = References(mode)
    yield references
    if mode == "write":
        references.write()


@pytest.fixture
def reference(_references):
    """Stored mpmath references (tests/noisecore/references.py); `--recompute-oracles` recomputes them."""
    return _references
