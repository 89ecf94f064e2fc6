"""Hand the room the view: the page's full address as text and as a QR code large enough to scan from
the back of a lecture hall, made on the server (``segno``: pure Python, no network).

The address is the served page's own (its query holds every setting, the open tab and the rewind's
release), so a scanned code opens the same view. The code is refreshed while it is shown.
"""

from __future__ import annotations

import html
import urllib.parse

import panel as pn
import segno

from .panes import CONTROL_TEXT_CSS, Text

__all__ = ["SharePanel", "loopback_warning", "qr_svg"]

# as large as the screen allows: 70% of the height on a projector, the width on a phone (the pane's own
# sheet: its shadow root holds the code)
QR_CSS = (
    "svg { display: block; width: min(70vh, 92vw, 640px); height: auto; margin: 6px auto; }"
    "p { text-align: center; overflow-wrap: anywhere; font-family: monospace; font-size: 1.1em; }"
)
COPY_JS = """
const text = link.value;
const done = (label) => { button.label = label; setTimeout(() => { button.label = 'Copy the address'; }, 2500); };
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(text).then(() => done('Copied'), () => done('Select the address to copy it'));
} else {
  done('Select the address to copy it');
}
"""


LOOPBACK = ("localhost", "127.", "[::1]", "0.0.0.0")
LOOPBACK_NOTE = (
    '<p role="note" style="font-family: inherit; color: #7a1010;">This is this computer\'s own address: other '
    "devices cannot open it. Serve the lab on the network (<code>--address 0.0.0.0</code>, see the serving "
    "guide) and open it by the computer's name or network address; the code then carries that.</p>"
)


def loopback_warning(address: str) -> str:
    """A note when ``address`` names this computer only (a student's phone cannot open it), else ""."""
    host = urllib.parse.urlsplit(address).netloc.rsplit("@", 1)[-1]
    return LOOPBACK_NOTE if host.startswith(LOOPBACK) else ""


def qr_svg(address: str) -> str:
    """``address`` as a QR code, an inline SVG with a title and a description for screen readers (error
    correction M: a projected code stays readable with a fifth of it lost to glare)."""
    if not isinstance(address, str) or not address:
        raise TypeError(f"address must be a non-empty text, got {address!r}")
    code = segno.make(address, error="m", boost_error=False)
    return code.svg_inline(
        omitsize=True,
        border=4,
        dark="#000000",
        light="#ffffff",
        title="QR code of this view's address",
        desc=f"Scanning it opens {address}",  # segno escapes it
    )


class SharePanel(pn.viewable.Viewer):
    """A Share button and what it opens: the address, a Copy button and the QR code. ``address`` returns
    the page's full address (None outside a served page)."""

    def __init__(self, address=None, **params):
        super().__init__(**params)
        self.address = address
        self.button = pn.widgets.Button(
            label="Share (QR code)",
            variant="outline",
            width=150,
            margin=(4, 10),
            description="Show this view's address as a QR code the room can scan, and copy it",
            css_classes=["noiselab-share-toggle"],
        )
        # what the button opens, built on first use (most pages never share): an empty column till then
        self.card = pn.Column(visible=False, sizing_mode="stretch_width", css_classes=["noiselab-share"])
        self.qr = self.link = None
        self.button.on_click(lambda _event: self.open())

    def _build(self) -> None:
        heading = Text(
            "**Scan to open this view** (every setting, the tab and the release are in the address).",
            sizing_mode="stretch_width",
        )
        self.qr = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[QR_CSS], css_classes=["noiselab-qr"])
        self.link = pn.widgets.TextInput(
            label="Address of this view", value="", sizing_mode="stretch_width", stylesheets=[CONTROL_TEXT_CSS]
        )
        copy = pn.widgets.Button(label="Copy the address", width=170, variant="outline")
        copy.js_on_click(args={"link": self.link, "button": copy}, code=COPY_JS)
        close = pn.widgets.Button(label="Close", width=90, variant="outline")
        close.on_click(lambda _event: self.hide())
        self.card.objects = [heading, self.qr, pn.Row(self.link, copy, close, sizing_mode="stretch_width")]

    def open(self) -> None:
        """Show the address and its QR code."""
        with pn.io.hold():
            if self.qr is None:
                self._build()
            self.card.visible = True
            self.refresh()

    def hide(self) -> None:
        self.card.visible = False

    def refresh(self) -> None:
        """Follow the page's address while the code is shown."""
        if not self.card.visible:
            return
        address = self.address() if self.address is not None else None
        if not address:
            self.link.value = ""
            self.qr.object = (
                "<p>Sharing needs the served app (python -m dashboard.serve): a notebook has no address.</p>"
            )
            return
        with pn.io.hold():
            self.link.value = address
            self.qr.object = qr_svg(address) + f"<p>{html.escape(address)}</p>" + loopback_warning(address)

    def __panel__(self):
        return self.card
