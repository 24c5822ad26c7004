"""Shared pieces of the device-loop tests: one short rendered round (classic, seed 2: one buy, takes
from the pile) filmed exactly as `mayi-table run` films a `rendered` camera, and the events the
referee journals for it when fed directly (no threads, no device), as in tests/referee/test_end_to_end.py."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from mayi_table.demo import feed_film_item
from mayi_table.launch import film_for
from mayi_table.rules.events import Buy, GameStart, event_to_dict
from mayi_table.table.journal import Journal
from mayi_table.table.referee import Referee
from mayi_table.vision.render.game import GameFilm
from mayi_table.vision.table_reading import TableReader, Zones

PROFILE = "classic"
SEED = 2  # round 1 has a buy (a claim window decided by a button) and takes from the pile
SEATS = ["Ann", "Bob", "Cy", "Dee"]
SIZE = (960, 540)
ZONES = Zones.four_seats()


def round_film() -> GameFilm:
    """The film `build_from_config` makes for `device_config` with MAYI_TABLE_RENDERED_ROUNDS=1."""
    return film_for(PROFILE, SEED, len(SEATS), SIZE, ZONES, SEATS, rounds=1)


def reader() -> TableReader:
    # the config's reading defaults, as build_from_config passes them
    return TableReader(ZONES, stable_frames=3, inertia=3, min_confidence=0.0)


def events_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accepted events without their journal time (nor the game line's source: the host's tablet
    sets the game up on the device, the referee on a bare journal)."""
    return [
        {k: v for k, v in line.items() if k != "at" and not (k == "source" and line["type"] == "game")}
        for line in lines
    ]


def journal_events(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """(accepted events, the game's state, open flags) of the journal at `path`."""
    with Journal(path) as j:
        game = j.game
        assert game is not None
        return events_of([event_to_dict(ev) for _, ev in j.accepted()]), game.state_dict(), len(j.open_flags())


@dataclass
class DirectRun:
    film: GameFilm
    events: list[dict[str, Any]]
    state: dict[str, Any]
    journal: Path


@pytest.fixture(scope="session")
def direct_run(tmp_path_factory: pytest.TempPathFactory) -> DirectRun:
    """The round through the reader and referee directly: what the device must journal."""
    film = round_film()
    path = tmp_path_factory.mktemp("direct") / "j.sqlite3"
    journal = Journal(path)
    assert film.first_dealer is not None
    referee = Referee(journal, GameStart(PROFILE, (), film.seats), film.first_dealer)
    rd = reader()
    for item in film.items():
        feed_film_item(item, referee, rd)
    game = journal.game
    assert game is not None and len(game.results) == 1
    # the baseline itself is right: the true round, with its buy, and nothing flagged
    assert game.results[0].scores == film.run.game.results[0].scores
    assert any(isinstance(ev, Buy) for ev in film.run.events)
    assert not journal.open_flags()
    journal.close()
    events, state, _ = journal_events(path)
    return DirectRun(film, events, state, path)


def write_config(tmp_path: Path, port: int, journal: Path, **camera: Any) -> Path:
    """A device config whose camera is the rendered round (zones: the film's)."""
    cfg = {
        "profile": PROFILE,
        "seats": [{"name": s, "button": 5 + i, "led": 17 + i} for i, s in enumerate(SEATS)],
        "zones": {
            "seats": [[list(p) for p in poly] for poly in ZONES.seats],
            "stock": [list(p) for p in ZONES.stock],
            "discard": [list(p) for p in ZONES.discard],
        },
        "camera": {
            "source": "rendered",
            "seed": SEED,
            "profile": PROFILE,
            "players": len(SEATS),
            "width": SIZE[0],
            "height": SIZE[1],
            "speed": 100,
            **camera,
        },
        "web": {"host": "127.0.0.1", "port": port},
        "host_pin": "1234",
        "journal": {"path": str(journal)},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NotifyListener:
    """A systemd notification socket (AF_UNIX datagrams) that keeps what arrives, with the time."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.messages: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self.messages.append((time.monotonic(), data.decode()))

    def close(self) -> None:
        time.sleep(0.1)  # the last datagrams are in the socket's queue already
        self._stop.set()
        self._thread.join(2)
        self.sock.close()

    def with_line(self, line: str) -> list[float]:
        return [t for t, m in self.messages if line in m.split("\n")]
