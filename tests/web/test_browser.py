"""The pages in a real browser (Debian's Chromium through Playwright) against a live server and a bot game.

Skipped only when /usr/bin/chromium is absent (apt package `chromium`); Playwright's own browser
download is never used. Screenshots of `/` and `/host` at 1920x1080 and 768x1024 go to
tests/web/screenshots/.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mayi_table.table.hub import TableHub
from mayi_table.web.server import WebServer

from .conftest import CHROMIUM, PIN, Feeder, bot_events, log_in_host

SHOTS = Path(__file__).resolve().parent / "screenshots"
SIZES = {"1920x1080": (1920, 1080), "768x1024": (768, 1024)}

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt install chromium)")


def crop_jpeg() -> bytes:
    """A stand-in for the camera crop of a flag: a card-like picture, really a JPEG."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (240, 160), (20, 90, 50))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((70, 15, 170, 145), 8, fill=(250, 250, 250), outline=(0, 0, 0))
    d.text((80, 22), "7H?", fill=(200, 0, 0))
    out = io.BytesIO()
    img.save(out, "JPEG")
    return out.getvalue()


def fits(page: object) -> bool:
    return bool(
        page.evaluate(  # type: ignore[attr-defined]
            "() => document.documentElement.scrollHeight <= innerHeight + 1"
            " && document.documentElement.scrollWidth <= innerWidth + 1"
        )
    )


def test_scoreboard_and_host_live(hub: TableHub, server: WebServer, browser: object) -> None:
    SHOTS.mkdir(exist_ok=True)
    events = bot_events(seed=3, rounds=2)
    flag_at = next(i for i, ev in enumerate(events) if i > 60 and type(ev).__name__ == "Discard")
    hub.update_device(camera_ok=True, recognizer_backend="ncnn", frames_processed=1200)
    feeder = Feeder(hub, events, delay=0.04, flag_at=flag_at, image=crop_jpeg()).start()
    try:
        tv = browser.new_page(viewport={"width": 1920, "height": 1080})  # type: ignore[attr-defined]
        tv.goto(server.url + "/")
        tv.wait_for_selector(".seat", timeout=15000)
        assert tv.locator(".seat").count() == 4
        first = tv.locator("#turnline").inner_text()
        tv.wait_for_function(f"() => document.getElementById('turnline').innerText !== {first!r}", timeout=15000)
        assert tv.locator("#title").inner_text().startswith("Round 1 - two groups")
        # the flag appears, with the camera crop, and the game waits for the host
        tv.wait_for_selector("#flags .flag img", timeout=30000)
        assert "Check this, host" in tv.locator("#flags").inner_text()
        tv.wait_for_function("() => [...document.querySelectorAll('#flags img')].every(i => i.naturalWidth > 0)")
        assert fits(tv)
        tv.screenshot(path=str(SHOTS / "scoreboard-1920x1080.png"))
        tv.set_viewport_size({"width": 768, "height": 1024})
        tv.wait_for_timeout(300)
        assert fits(tv)
        tv.screenshot(path=str(SHOTS / "scoreboard-768x1024.png"))

        host = browser.new_page(viewport={"width": 1920, "height": 1080})  # type: ignore[attr-defined]
        host.goto(server.url + "/host")
        log_in_host(host, PIN)
        host.wait_for_selector(f"#flagbox .flag[data-seq='{feeder.flag_seq}']", timeout=15000)
        host.wait_for_selector("#history li")
        host.screenshot(path=str(SHOTS / "host-1920x1080.png"), full_page=False)
        host.click(f"#flagbox .flag[data-seq='{feeder.flag_seq}'] button.confirm")
        # the TV clears the flag and the game goes on
        tv.wait_for_selector("#flags", state="hidden", timeout=15000)
        fed = feeder.fed
        host.wait_for_function("() => document.getElementById('flagbox').children.length === 0", timeout=15000)
        feeder.thread.join(60)
        assert feeder.error is None and feeder.fed == len(events) and feeder.fed > fed
        tv.wait_for_function("() => document.querySelectorAll('.sheet tbody tr').length === 2", timeout=15000)
        tv.set_viewport_size({"width": 1920, "height": 1080})
        tv.wait_for_timeout(300)
        assert fits(tv)
        tv.screenshot(path=str(SHOTS / "scoreboard-round-over-1920x1080.png"))
        assert tv.locator("svg.chart polyline").count() == 4
        # the TV never shows the camera view
        assert tv.locator("img[src*='camera']").count() == 0
        host.set_viewport_size({"width": 768, "height": 1024})
        host.wait_for_timeout(300)
        host.screenshot(path=str(SHOTS / "host-768x1024.png"), full_page=False)
    finally:
        feeder.close()
