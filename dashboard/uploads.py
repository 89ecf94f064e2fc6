"""Uploaded files: the size limit, stated once, and what the browser and the server check.

A ``FileInput`` sends the whole file base64-encoded (4 bytes for every 3) in one websocket message, and
Bokeh's server closes the connection on a message over its ``websocket_max_message_size``. The limit
below keeps the largest accepted file's message under Bokeh's default (20 MiB), so ``panel serve``
agrees with it without a flag, and ``dashboard.serve`` sets that same size explicitly. The browser
checks a file's size before sending it (:data:`SIZE_CHECK_JS`); a larger file never leaves it.
"""

from __future__ import annotations

from dashboard.escape import plain

__all__ = [
    "MAX_UPLOAD_BYTES",
    "SIZE_CHECK_JS",
    "TOO_LARGE_TYPE",
    "WEBSOCKET_MAX_MESSAGE_BYTES",
    "message_bytes",
    "upload_problem",
]

MAX_UPLOAD_BYTES = 15_000_000  # the largest file accepted (15 MB)
WEBSOCKET_MAX_MESSAGE_BYTES = 20 * 2**20  # Bokeh's default, set explicitly by dashboard.serve
MESSAGE_OVERHEAD = 64 * 1024  # the message's JSON around the file: ids, file name, MIME type
TOO_LARGE_TYPE = "application/x-noiselab-too-large"  # the browser's note that it kept a file back


def message_bytes(size: int) -> int:
    """The most a websocket message carrying a file of ``size`` bytes takes (base64 and its JSON)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"size must be a whole number of bytes >= 0, got {size!r}")
    return 4 * ((size + 2) // 3) + MESSAGE_OVERHEAD


if message_bytes(MAX_UPLOAD_BYTES) > WEBSOCKET_MAX_MESSAGE_BYTES:  # pragma: no cover - a constants check
    raise RuntimeError("MAX_UPLOAD_BYTES does not fit in one websocket message")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


def upload_problem(content: bytes | None, filename: str | None, mime_type: str | None) -> str | None:
    """Why an upload is refused before it is read (Markdown, the file name shown as text), or None.

    Parameters
    ----------
    content : bytes or None
        The file as received (None or empty for an empty file or one the browser kept back).
    filename : str or None
        The name the browser gave.
    mime_type : str or None
        The type the browser gave; :data:`TOO_LARGE_TYPE` with ``;size=N`` for a file the browser
        kept back as too large.

    Returns
    -------
    str or None
        A sentence naming the problem, or None if the file may be read.

    Raises
    ------
    TypeError
        If ``content`` is not bytes or None.
    """
    if content is not None and not isinstance(content, bytes | bytearray):
        raise TypeError(f"content must be bytes or None, got {type(content).__name__}")
    name = plain(filename or "The file", limit=80)
    limit = _megabytes(MAX_UPLOAD_BYTES)
    if isinstance(mime_type, str) and mime_type.startswith(TOO_LARGE_TYPE):
        size = mime_type.rpartition("size=")[2]
        shown = _megabytes(int(size)) if size.isdigit() and len(size) < 16 else "too large"
        return f"**{name}** is {shown}; files up to {limit} are accepted. It was not sent. Choose a smaller file."
    if not content:
        return f"**{name}** is empty: choose a CSV file with a header row and numeric rows."
    if len(content) > MAX_UPLOAD_BYTES:
        return f"**{name}** is {_megabytes(len(content))}; files up to {limit} are accepted. Choose a smaller file."
    return None


# Runs once per page: every file input checks sizes before reading a file, and reports a file over the
# limit by its name and size only (Bokeh's FileInput view reads and sends whatever is chosen).
SIZE_CHECK_JS = f"""
const FileInput = Bokeh.Models.get('FileInput');
const view = FileInput && FileInput.prototype.default_view;
if (view && !view.prototype.__noiselab_size_check) {{
  const load = view.prototype.load_files;
  view.prototype.load_files = async function (files) {{
    for (const file of files) {{
      if (file.size > {MAX_UPLOAD_BYTES}) {{
        this.input_el.value = '';
        this.model.setv({{value: '', filename: file.name, mime_type: '{TOO_LARGE_TYPE};size=' + file.size}});
        return;
      }}
    }}
    return load.call(this, files);
  }};
  view.prototype.__noiselab_size_check = true;
}}
"""
