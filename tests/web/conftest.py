"""Fixtures for the web tests: a hub on a temporary journal, the app, a live uvicorn server, bot games."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from mayi_table.rules.events import Event
from mayi_table.rules.record import as_observed
from mayi_table.rules.simulate import play_game
from mayi_table.table.hub import TableHub
from mayi_table.web.app import create_app
from mayi_table.web.server import WebServer

PIN = "2468"
CHROMIUM = os.environ.get("MAYI_CHROMIUM", "/usr/bin/chromium")  # Debian's, never Playwright's download


def bot_events(seed: int = 3, rounds: int = 1, observed: bool = False) -> list[Event]:
    """A deterministic bot game of 4 (its first `rounds` rounds), as the camera would record it if `observed`."""
    events = play_game("petras", 4, seed, stop_after_round=rounds).events
    return as_observed(events) if observed else events


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[TableHub]:
    h = TableHub(tmp_path / "journal.sqlite3")
    yield h
    h.close()


@pytest.fixture
def app(hub: TableHub) -> FastAPI:
    return create_app(hub, PIN)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


@pytest.fixture
def host(client: TestClient) -> TestClient:
    """The client logged in as the host (session cookie)."""
    r = client.post("/api/host/login", json={"pin": PIN})
    assert r.status_code == 200, r.text
    return client


@pytest.fixture
def server(hub: TableHub) -> Iterator[WebServer]:
    srv = WebServer(create_app(hub, PIN), host="127.0.0.1", port=0, hub=hub)
    srv.start()
    yield srv
    srv.stop()


class Feeder:
    """Plays a bot game into the hub from a thread with small delays, like the referee would.
    At `flag_at` (an index into the events) it flags that event instead and waits for the host."""

    def __init__(
        self, hub: TableHub, events: list[Event], delay: float, flag_at: int | None = None, image: bytes | None = None
    ) -> None:
        self.hub = hub
        self.events = events
        self.delay = delay
        self.flag_at = flag_at
        self.image = image
        self.flag_seq: int | None = None
        self.fed = 0
        self.error: BaseException | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            for i, ev in enumerate(self.events):
                if self.stop.is_set():
                    return
                if i == self.flag_at:
                    self.flag_seq = self.hub.flag(ev, "is this the card discarded?", self.image)
                    while not self.stop.is_set() and any(f["seq"] == self.flag_seq for f in self.hub.flags()):
                        time.sleep(0.05)
                else:
                    self.hub.append_event(ev)
                self.fed = i + 1
                if self.stop.wait(self.delay):
                    return
        except BaseException as e:  # reported by the test that owns the feeder
            self.error = e

    def start(self) -> Feeder:
        self.thread.start()
        return self

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


def sse_messages(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Parse a server-sent event stream into {"event", "id", "data"} dicts."""
    import json

    msg: dict[str, Any] = {}
    for line in lines:
        if line == "":
            if "data" in msg:
                msg["data"] = json.loads(msg["data"])
                yield msg
            msg = {}
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            msg[key] = value[1:] if value.startswith(" ") else value


def log_in_host(page: Any, pin: str) -> None:
    """On an open /host page: a wrong PIN is refused and keeps the controls hidden, the right one opens them."""
    page.wait_for_selector("#login:not([hidden])")
    assert page.locator("#controls").is_hidden()
    page.fill("#pin", "9999")
    page.click("#login button")
    page.wait_for_function("() => document.getElementById('loginmsg').innerText.includes('wrong PIN')")
    assert page.locator("#controls").is_hidden()
    page.fill("#pin", pin)
    page.click("#login button")
    page.wait_for_selector("#controls:not([hidden])")


@pytest.fixture
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()
