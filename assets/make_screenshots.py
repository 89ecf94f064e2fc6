"""Regenerate the README's screenshots from the served app, at the default settings.

    python assets/make_screenshots.py          # needs Debian's chromium and the `ui` extra

It serves the app with the README's command on a free port, opens it in headless Chromium at a
phone, a projector and a desktop size, and writes the PNG files next to this script.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
SIZES = {"phone": (390, 844), "projector": (1024, 768), "desktop": (1440, 900)}
READY = (
    "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].get_model_by_name('rewind-now') "
    "&& Bokeh.documents[0].get_model_by_name('rewind-now').data.t.length > 0"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_http(url: str, attempts: int = 240) -> None:
    for _ in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer")


def shoot(page, url: str, path: Path, *, tab: str | None = None, wait_text: str | None = None) -> None:
    page.goto(url)
    page.wait_for_function(READY, timeout=60_000)
    if tab:
        page.get_by_text(tab, exact=True).first.click()
    if wait_text:
        page.get_by_text(wait_text, exact=False).first.wait_for(timeout=120_000)
    page.wait_for_timeout(1500)  # let the plots settle after their data arrive
    page.screenshot(path=str(path))
    print("wrote", path.relative_to(HERE.parent))


def main() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen([sys.executable, "-m", "dashboard.serve", "--port", str(port)])
    try:
        wait_http(url)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            for name, (width, height) in SIZES.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                shoot(page, url, HERE / f"screen-{name}.png", wait_text="composed exactly")
                page.close()
            page = browser.new_page(viewport={"width": 1440, "height": 1100})
            # each tab's first screen at the shared defaults (term spans split a sentence: short waits)
            for tab, name, wait in (
                (None, "rewind", "whose interval leaves out"),
                ("Privacy boundaries", "boundaries", "stopping whenever you like"),
                ("Low-privacy noise", "noise-defaults", "where the Arete wins"),
                ("RAT stopping", "rat", "of runs meet it"),
                ("Experiments", "experiments", "Checked on public"),
            ):
                shoot(page, url, HERE / f"screenshot-{name}.png", tab=tab, wait_text=wait)
            shoot(
                page, url + "?eps=10", HERE / "screenshot-noise.png", tab="Low-privacy noise", wait_text="has expected"
            )
            page.close()
            # the Share button's QR code in presenter mode, as a lecture hall sees it
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            shoot(page, url + "?present=1", HERE / "presenter-1024x768.png", wait_text="whose interval leaves out")
            page.get_by_role("button", name="Share (QR code)").click()
            page.locator(".noiselab-qr svg").first.wait_for(timeout=60_000)
            page.wait_for_timeout(800)
            page.screenshot(path=str(HERE / "share-qr-1024x768.png"))
            print("wrote assets/share-qr-1024x768.png")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
