"""The ``noiselab`` command dispatches to the two programs and reports bad commands plainly."""

import subprocess
import sys

import pytest

from dashboard import cli
from noisecore import __version__


def test_version_and_help(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"noiselab {__version__}\n"
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "serve" in out and "experiments" in out


def test_unknown_command_is_named_with_exit_status_2(capsys):
    assert cli.main(["<b>launch</b>"]) == 2
    err = capsys.readouterr().err
    assert "unknown command '<b>launch</b>'" in err and "usage: noiselab" in err


@pytest.mark.parametrize("command", ["serve", "experiments"])
def test_subcommand_help_is_the_program_help(command, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    expected = "--num-procs" if command == "serve" else "--trials"
    assert expected in out


def test_experiments_refuses_a_bad_option_through_the_command():
    run = subprocess.run(
        [sys.executable, "-m", "dashboard.cli", "experiments", "--trials", "0"], capture_output=True, text=True
    )
    assert run.returncode == 2
    assert "--trials must be at least 1, got 0" in run.stderr
