import pytest

from .references import DATA, References

LIVE = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def _references(request):
    config = request.config
    write = config.getoption("--write-oracles")
    mode = "write" if write else "recompute" if config.getoption("--recompute-oracles") else "stored"
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    # written to one part per process (pytest-xdist workers): make_references.py joins them
    references = References(mode, part=DATA.with_name(f"{DATA.stem}.{worker}.part.json"))
    config.stash[LIVE] = references.live
    return references


@pytest.fixture
def reference(_references):
    """Stored mpmath references (tests/noisecore/references.py); `--recompute-oracles` recomputes them."""
    return _references


def pytest_terminal_summary(terminalreporter, config):
    live = config.stash.get(LIVE, [])
    if live:
        terminalreporter.section("mpmath references computed live (not in tests/noisecore/data)")
        terminalreporter.line(f"{len(live)} references; store them: python tests/noisecore/make_references.py")
        for name in live[:20]:
            terminalreporter.line(f"  {name}")
