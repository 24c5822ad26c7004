"""End to end: the real `mayi-table demo` process (rendered film -> device loop -> referee -> hub -> web)
watched in Debian's Chromium through Playwright.

The demo runs with `--oracle` (cards read from the renderer's labels: no model) and films one round at
high speed. The test checks that the TV page updates by itself while the film plays (turn line, discard
pile, frame count), that the first meld appears on the table, and that the host page and the host API
need the PIN. Screenshots go to tests/web/screenshots/demo-*.png. Skipped only when /usr/bin/chromium
is absent; Playwright's own browser download is never used.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import log_in_host
from .test_browser import CHROMIUM, SHOTS, fits

REPO = Path(__file__).resolve().parents[2]
PIN = "4321"
ADDRESS = re.compile(r"scoreboard: (http://\S+?)/\s")

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt install chromium)")

# Collects, in the page, every distinct value the live scoreboard shows, without reloading it.
WATCH = """() => {
  window.__noReload = true;
  const seen = { turn: new Set(), top: new Set(), pile: new Set(), device: new Set() };
  window.__seen = seen;
  const look = () => {
    seen.turn.add(document.getElementById("turnline").innerText);
    const top = document.querySelector("#pile .card.big:not(.back)");
    if (top) seen.top.add(top.title || "empty");
    const count = document.querySelector("#pile .count");
    if (count) seen.pile.add(count.innerText);
    seen.device.add(document.getElementById("device").innerText);
  };
  look();
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Demo:
    """`python -m mayi_table.cli demo ...` as a child process; its standard output read on a thread."""

    def __init__(self, args: list[str], log: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mayi_table.cli", "demo", *args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self.lines: list[str] = []
        self.eof = False
        self._got = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._got:
                self.lines.append(line.rstrip("\n"))
                self._got.notify_all()
        with self._got:
            self.eof = True
            self._got.notify_all()

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        end = time.monotonic() + timeout
        with self._got:
            while True:
                for line in self.lines:
                    if m := pattern.search(line + "\n"):
                        return m
                left = end - time.monotonic()
                if left <= 0 or self.eof:
                    raise AssertionError(f"the demo did not print {pattern.pattern!r}: {self.output()}")
                self._got.wait(min(left, 0.5))

    def output(self) -> str:
        return "stdout:\n" + "\n".join(self.lines) + "\nstderr:\n" + Path(self.log.name).read_text()[-3000:]

    def interrupt(self, timeout: float) -> int | None:
        """Ctrl-C; the exit status, or None if it had to be killed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                return None
        return self.proc.returncode

    def close(self) -> None:
        self.interrupt(5)
        self.log.close()


def demo_seats(url: str) -> list[str]:
    import json
    from urllib.request import urlopen

    with urlopen(url + "/api/state", timeout=10) as r:
        seats: list[str] = json.load(r)["game"]["seats"]
    return seats


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    port = free_port()
    args = ["--oracle", "--rounds", "1", "--port", str(port), "--speed", "50", "--pin", PIN, "--players", "4"]
    d = Demo([*args, "--journal", str(tmp_path / "journal.sqlite3")], tmp_path / "demo.log")
    try:
        yield d
    finally:
        d.close()


def test_demo_on_the_scoreboard_and_host(demo: Demo, browser: object) -> None:
    SHOTS.mkdir(exist_ok=True)
    url = demo.wait_for(ADDRESS, timeout=30).group(1)

    # ----- the TV: the real game plays on it, live, without a reload ---------------------------------
    tv = browser.new_page(viewport={"width": 1920, "height": 1080})  # type: ignore[attr-defined]
    tv.goto(url + "/")
    tv.wait_for_selector(".seat", timeout=15000)
    tv.evaluate(WATCH)
    assert tv.locator(".seat").count() == 4
    seats = tv.eval_on_selector_all(".seat", "rows => rows.map((r) => r.dataset.seat)")
    assert seats == demo_seats(url)
    tv.wait_for_function("() => document.getElementById('title').innerText.startsWith('Round 1 - ')", timeout=20000)
    # turns pass, cards reach the discard pile, frames are counted: all pushed by /api/live
    tv.wait_for_function(
        "() => __seen.turn.size >= 4 && __seen.top.size >= 3 && __seen.pile.size >= 3 && __seen.device.size >= 3",
        timeout=40000,
    )
    seen = tv.evaluate("() => Object.fromEntries(Object.entries(__seen).map(([k, v]) => [k, [...v]]))")
    assert any(re.fullmatch(r"\S+ to (draw|play)", t) for t in seen["turn"]), seen["turn"]
    assert all(re.fullmatch(r"\d+ in pile", p) for p in seen["pile"]), seen["pile"]
    assert any("oracle" in d for d in seen["device"]), seen["device"]

    # the first meld reaches the table (the film's first contract is laid down about 20 s in)
    tv.wait_for_selector(".seat .melds .meld .card", timeout=60000)
    first = tv.locator(".seat:has(.meldno:text-is('1'))")
    owner = first.get_attribute("data-seat")
    assert first.locator(".meld").first.locator(".card").count() >= 3
    state = tv.request.get(url + "/api/state").json()
    assert state["game"]["round"]["melds"][0]["owner"] == owner
    assert state["game"]["round"]["number"] == 1 and not state["flags"]
    assert tv.evaluate("() => window.__noReload === true")
    assert fits(tv)
    tv.screenshot(path=str(SHOTS / "demo-scoreboard-1920x1080.png"))
    tv.set_viewport_size({"width": 768, "height": 1024})
    tv.wait_for_timeout(400)
    assert fits(tv)
    # the turn line stays readable on a portrait tablet (it once shrank to nothing beside the title)
    assert tv.locator("#turnline").bounding_box()["width"] > 200  # type: ignore[index]
    tv.screenshot(path=str(SHOTS / "demo-scoreboard-768x1024.png"))

    # ----- the host: nothing without the PIN ---------------------------------------------------------
    host = browser.new_page(viewport={"width": 768, "height": 1024})  # type: ignore[attr-defined]
    api = host.request
    assert api.post(url + "/api/host/undo").status == 401
    assert api.get(url + "/api/host/history").status == 401
    assert api.get(url + "/api/host/camera.jpg").status == 401
    assert api.post(url + "/api/host/undo", headers={"X-Host-Pin": "0000"}).status == 403
    with_pin = api.get(url + "/api/host/history", headers={"X-Host-Pin": PIN})
    assert with_pin.status == 200 and len(with_pin.json()) >= 2
    assert with_pin.json()[0]["event"]["type"] == "game"

    host.goto(url + "/host")
    log_in_host(host, PIN)
    host.wait_for_selector("#history li", timeout=15000)
    # the session cookie now opens the host API (and only in this browser context)
    assert api.get(url + "/api/host/session").status == 200
    cam = api.get(url + "/api/host/camera.jpg")
    assert cam.status == 200 and cam.headers["content-type"] == "image/jpeg"
    assert tv.request.get(url + "/api/host/camera.jpg").status == 401
    host.wait_for_selector("#camera:not([hidden])", timeout=10000)
    host.wait_for_function("() => document.getElementById('camera').naturalWidth > 0", timeout=10000)
    assert host.locator("#title").inner_text().startswith("Round 1 - ")
    host.screenshot(path=str(SHOTS / "demo-host-768x1024.png"), full_page=False)

    # the TV was never reloaded and never shows the camera
    assert tv.evaluate("() => window.__noReload === true")
    assert tv.locator("img[src*='camera']").count() == 0

    # ----- Ctrl-C stops the demo (mid-game or after it) ---------------------------------------------
    code = demo.interrupt(timeout=15)
    assert code == 0, f"the demo did not stop on SIGINT (status {code}): {demo.output()}"
    demo.wait_for(re.compile(r"^demo stopped: \d+ frames"), timeout=5)
    assert not any("still serving" in line for line in demo.lines), demo.output()
