"""A figure's save button whose PNG carries the plot's title and its description.

Bokeh's own SaveTool writes the canvas only: a saved plot reached a screen reader as an untitled image.
This tool is Bokeh's public ``CustomAction`` with a ``CustomJS`` callback: it takes the same canvas
export Bokeh's SaveTool takes (``PlotView.export().to_blob()``) and adds PNG ``iTXt`` text chunks (UTF-8):
``Title``, ``Description`` (the words a screen reader hears for the plot, headline included) and
``Software``, which image viewers, file managers and the W3C's image-description tools read.
"""

from __future__ import annotations

from bokeh.models import CustomAction, CustomJS

from noisecore import __version__

__all__ = ["SAVE_PNG_JS", "png_save_tool", "set_png_text"]

SAVE_PNG_JS = """
(async () => {
  const view = Bokeh.index.find_one(fig);
  if (view == null) { return; }
  const blob = await view.export().to_blob();
  const png = new Uint8Array(await blob.arrayBuffer());
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) { c = (c & 1) ? (0xEDB88320 ^ (c >>> 1)) : (c >>> 1); }
    table[n] = c >>> 0;
  }
  const crc32 = (bytes) => {
    let c = 0xFFFFFFFF;
    for (const b of bytes) { c = table[(c ^ b) & 0xFF] ^ (c >>> 8); }
    return (c ^ 0xFFFFFFFF) >>> 0;
  };
  const encoder = new TextEncoder();
  // iTXt: keyword, 0, compression flag 0, method 0, language tag "", 0, translated keyword "", 0, UTF-8 text
  const chunk = (keyword, text) => {
    const body = new Uint8Array([...encoder.encode('iTXt' + keyword), 0, 0, 0, 0, 0, ...encoder.encode(text)]);
    const out = new Uint8Array(body.length + 8);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, body.length - 4);
    out.set(body, 4);
    dv.setUint32(body.length + 4, crc32(body));
    return out;
  };
  const meta = [chunk('Title', title), chunk('Description', description), chunk('Software', software)];
  const head = 8 + 25;  // the signature, then IHDR (13 bytes of data, 12 of length, type and CRC)
  const parts = [png.subarray(0, head), ...meta, png.subarray(head)];
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob(parts, {type: 'image/png'}));
  link.download = filename + '.png';
  link.dispatchEvent(new MouseEvent('click'));
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
})();
"""


def png_save_tool(fig) -> CustomAction:
    """A save button for ``fig`` (Bokeh's save icon) writing a PNG with its title and description."""
    title = fig.title.text if fig.title is not None else "plot"
    callback = CustomJS(
        args={
            "fig": fig,
            "title": title,
            "description": "",
            "software": f"noiselab {__version__}",
            "filename": "noiselab-plot",
        },
        code=SAVE_PNG_JS,
    )
    return CustomAction(
        icon="save", description="Save as PNG (with the plot's title and description)", callback=callback
    )


def set_png_text(tool: CustomAction, *, filename: str | None = None, description: str | None = None) -> None:
    """Change what the next saved PNG is named and says (sent only when it differs)."""
    args = dict(tool.callback.args)
    if filename is not None:
        args["filename"] = filename
    if description is not None:
        args["description"] = description
    if args != tool.callback.args:
        tool.callback.args = args
