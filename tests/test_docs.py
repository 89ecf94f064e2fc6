"""The README stays a short front page whose commands and code run, and every local link in it and in
the docs points at a file that exists."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _local_links(path):
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#", 1)[0]


def test_readme_is_short_and_holds_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/python -m dashboard.serve" in text
    assert (
        'python3 -m venv .venv && .venv/bin/pip install -e ".[test,ui]" && .venv/bin/python -m pytest -n auto' in text
    )


def test_readme_python_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
        assert run.returncode == 0, run.stderr


def test_local_links_resolve():
    pages = [README, ROOT / "CHANGELOG.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = [
        f"{page.name}: {target}"
        for page in pages
        for target in _local_links(page)
        if not (page.parent / target).exists()
    ]
    assert not missing, missing


def test_ci_runs_the_readme_test_command():
    command = re.search(r"\.venv/bin/python -m pytest[^\n]*", README.read_text()).group(0)
    ci = (ROOT / ".ci" / "run").read_text()
    assert command.replace(".venv/", ".ci/venv/") in ci.splitlines()


def test_readme_figures_are_what_the_code_returns():
    """Each line of the README's core example whose comment starts with a number returns that number (to
    the digits shown): the comments are claims too (the audit found "pays 0.3, not 0.5", a plain sum)."""
    code = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]
    namespace: dict = {}
    checked = 0
    for line in code.splitlines():
        statement, _, comment = line.partition("  # ")
        shown = re.match(r"(?:an Arete .*E\|Z\| about )?([0-9]+\.[0-9]+)", comment)
        if shown and not statement.startswith(("from ", "import ")) and "=" not in statement.split("(")[0]:
            value = eval(statement, namespace)
            value = value[-1] if isinstance(value, tuple) else value
            digits = len(shown.group(1).split(".")[1])
            assert round(float(value), digits) == float(shown.group(1)), (line, value)
            checked += 1
        else:
            exec(line, namespace)
    assert checked >= 4
