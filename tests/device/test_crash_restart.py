"""Crash safety: the real device process (`mayi-table run` on a config whose camera is the rendered
round) is SIGKILLed at several points of the round, once with a claim window open, and restarted each
time; the film resumes where the device was (its position file). The journal ends with exactly the
events of an uninterrupted run: none lost, none doubled."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable

import yaml

from mayi_table.launch import ORACLE_ENV, ROUNDS_ENV, film_position_file

from .conftest import DirectRun, free_port, journal_events, write_config

DEVICE_DIR = Path(__file__).resolve().parents[2] / "device"


def _start(config: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
    env.update({ORACLE_ENV: "1", ROUNDS_ENV: "1"})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(DEVICE_DIR), os.environ.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "mayi_table.cli", "run", "--config", str(config), "--log-level", "warning"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _events_served(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=1) as r:
            return int(json.load(r)["events"])
    except OSError:
        return -1  # not serving yet


def _kill_when(
    proc: subprocess.Popen[bytes], cond: Callable[[], bool], delay: float = 0.0, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None:
            out = proc.stdout.read().decode() if proc.stdout else ""
            raise AssertionError(f"the device ended (status {proc.returncode}) before it was killed:\n{out}")
        assert time.monotonic() < deadline, "the device did not get there in time"
        time.sleep(0.01)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL


def _moment(position: Path) -> int:
    try:
        return int(position.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1


def _set_speed(config: Path, speed: float) -> None:
    cfg = yaml.safe_load(config.read_text())
    cfg["camera"]["speed"] = speed
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_sigkilled_device_resumes_without_losing_or_doubling_an_event(tmp_path: Path, direct_run: DirectRun) -> None:
    port = free_port()
    journal = tmp_path / "journal.sqlite3"
    config = write_config(tmp_path, port, journal)
    position = film_position_file(journal)
    want = direct_run.events
    buy = next(i for i, e in enumerate(want) if e["type"] == "buy")
    assert want[buy - 1]["type"] == "discard"

    def journal_so_far() -> list[dict[str, object]]:
        events, _, flags = journal_events(journal)
        assert flags == 0
        assert events == want[: len(events)], "the journal went off the uninterrupted run's events"
        return events

    # 1: killed while the claim window on the discard before the buy is open (slower film: the window
    # lasts over a second of wall time, so the poll cannot miss it)
    _set_speed(config, 2)
    _kill_when(_start(config), lambda: _events_served(port) >= buy)
    assert len(journal_so_far()) == buy, "not killed inside the claim window"
    _set_speed(config, 10)

    # 2-4: killed at random moments of the rest of the round, a little way into each
    rng = random.Random(20260529)
    moments = len(direct_run.film.moments)
    kills = 1
    for target in sorted(rng.sample(range(6, moments - 1), 3)):
        if _moment(position) >= target:
            continue
        proc = _start(config)
        _kill_when(proc, lambda t=target: _moment(position) >= t, delay=rng.uniform(0, 0.3))  # type: ignore[misc]
        kills += 1
        journal_so_far()
    assert kills >= 3

    proc = _start(config)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out.decode()
    events, state, flags = journal_events(journal)
    assert events == want
    assert state == direct_run.state
    assert flags == 0
