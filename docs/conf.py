"""Sphinx configuration: Markdown pages (myst-parser), the API reference from numpydoc docstrings."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noisecore import __version__  # noqa: E402

project = "noiselab"
author = "the noiselab authors"
copyright = "2026, the noiselab authors"
version = release = __version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
]
source_suffix = {".md": "markdown"}
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
exclude_patterns = ["_build"]
suppress_warnings = ["myst.xref_missing"]  # links to repository files outside docs/

autosummary_generate = False
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_title = f"noiselab {version}"
html_static_path: list[str] = []


def _literal_bars(app, what, name, obj, options, lines):
    """Docstrings write absolute values as |x| (plain-text maths): keep the bars literal, not reST
    substitutions."""
    lines[:] = [re.sub(r"(?<!\\)\|", r"\\|", line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _literal_bars, priority=400)
