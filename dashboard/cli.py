"""The ``noiselab`` command: ``noiselab serve`` (the app) and ``noiselab experiments`` (the paper's
experiments to CSV and HTML), the same programs as ``python -m dashboard.serve`` and
``python -m dashboard.experiments_cli``."""

from __future__ import annotations

import sys

USAGE = """usage: noiselab {serve,experiments} [options]

  serve        serve the app (python -m dashboard.serve); see: noiselab serve --help
  experiments  run the experiments to CSV and HTML (python -m dashboard.experiments_cli);
               see: noiselab experiments --help
  --version    print the version
"""


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    command, rest = args[0], args[1:]
    if argv is None:  # run as the command (not called from code): its start-up steps before the imports
        from dashboard.launch import start_command

        start_command(serving=command == "serve")
    if command == "--version":
        from noisecore import __version__

        print(f"noiselab {__version__}")
        return 0
    if command == "serve":
        from dashboard import serve  # imported on demand: each command loads only what it needs

        serve.main(rest)
        return 0
    if command == "experiments":
        from dashboard import experiments_cli

        return experiments_cli.main(rest) or 0
    print(f"noiselab: unknown command {command[:40]!r}\n\n{USAGE}", file=sys.stderr, end="")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
