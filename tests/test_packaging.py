import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    listed = set()
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("dependencies:", 1)[1].splitlines():
        item = line.strip()
        if item.startswith("- ") and not item.endswith(":"):
            name = _name(item[2:])
            if name not in {"python", "pip", "-e"}:
                listed.add(name)
    assert wanted == listed


def test_core_imports_numpy_and_scipy_only():
    allowed = {"numpy", "scipy", "math", "numbers", "dataclasses", "functools", "__future__", "collections",
               "typing", "itertools", "warnings", "time", "collections.abc"}
    for path in (ROOT / "noisecore").rglob("*.py"):
        for line in path.read_text().splitlines():
            match = re.match(r"\s*(?:from|import)\s+([\w.]+)", line)
            if match and not match.group(1).startswith("."):
                assert match.group(1).split(".")[0] in allowed, (path, line)
