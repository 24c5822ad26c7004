"""Live-update latency: time from an event being journaled to every connected browser having it.

Starts the app with uvicorn on a free port, connects N server-sent-event clients (httpx, asyncio),
journals events of a bot game one at a time from a thread (like the referee), and measures, per
event, the time from `append_event` returning (on disk) to the last client receiving that version.
A single client is measured in the same run, before the crowd, for the ratio. The clock starts when
`append_event` is called, so the figures include the journal's fsync'd write. All clients run in this
one process, sharing the CPU with the server: on a small machine their own parsing is part of the time.

    .venv/bin/python benchmarks/web.py [--clients 100] [--events 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))

from mayi_table.rules.simulate import play_game  # noqa: E402
from mayi_table.table.hub import TableHub  # noqa: E402
from mayi_table.web.app import create_app  # noqa: E402
from mayi_table.web.server import WebServer  # noqa: E402


async def client(
    url: str, received: dict[int, list[float]], ready: asyncio.Event, count: list[int], n: int, stop: asyncio.Event
) -> None:
    async with httpx.AsyncClient(timeout=None) as http, http.stream("GET", url + "/api/live") as r:
        data = None
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                data = line[6:]
            elif line == "" and data is not None:
                # the message starts {"version":N,...}: read only that, so 100 clients in one process stay cheap
                version = json.loads(data[: data.index(",")] + "}")["version"]
                received.setdefault(version, []).append(time.perf_counter())
                data = None
                if not ready.is_set():
                    count[0] += 1
                    if count[0] == n:
                        ready.set()
                if stop.is_set():
                    return


def journal(hub: TableHub, events: list, sent: dict[int, float], gap: float) -> None:
    for ev in events:
        t0 = time.perf_counter()
        hub.append_event(ev)  # journaled (fsync) and published before it returns
        sent[hub.version] = t0
        time.sleep(gap)


async def measure(url: str, hub: TableHub, events: list, clients: int, gap: float) -> list[float]:
    received: dict[int, list[float]] = {}
    ready = asyncio.Event()
    stop = asyncio.Event()
    count = [0]
    tasks = [asyncio.create_task(client(url, received, ready, count, clients, stop)) for _ in range(clients)]
    await asyncio.wait_for(ready.wait(), 60)
    sent: dict[int, float] = {}
    writer = threading.Thread(target=journal, args=(hub, events, sent, gap))
    writer.start()
    while writer.is_alive():
        await asyncio.sleep(0.05)
    last = hub.version
    deadline = time.perf_counter() + 30
    while len(received.get(last, [])) < clients and time.perf_counter() < deadline:
        await asyncio.sleep(0.02)
    stop.set()
    hub.end_streams()
    await asyncio.gather(*tasks, return_exceptions=True)
    out = []
    for version, t0 in sent.items():
        times = received.get(version, [])
        if len(times) < clients:
            raise SystemExit(f"version {version}: only {len(times)} of {clients} clients got it")
        out.append((max(times) - t0) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--gap", type=float, default=0.02, help="seconds between events (a real game: seconds)")
    args = ap.parse_args()
    events = play_game("petras", 4, 11).events  # a whole game: well over 1000 events
    with tempfile.TemporaryDirectory() as tmp:
        hub = TableHub(Path(tmp) / "journal.sqlite3")
        hub.append_event(events[0])
        server = WebServer(create_app(hub, "0000"), port=0, hub=hub)
        server.start()
        try:
            batch1 = events[1 : 1 + args.events]
            batch2 = events[1 + args.events : 1 + 2 * args.events]
            if len(batch2) < len(batch1):
                raise SystemExit(f"the bot game has only {len(events)} events; ask for fewer --events")
            one = asyncio.run(measure(server.url, hub, batch1, 1, args.gap))
            many = asyncio.run(measure(server.url, hub, batch2, args.clients, args.gap))
        finally:
            server.stop()
            hub.close()
    rows = [("1 client", one), (f"{args.clients} clients", many)]
    print(f"journal -> all clients have it (ms), {args.events} events each, {args.gap * 1000:.0f} ms apart, SSE")
    print(f"{'clients':<14}{'median':>10}{'p99':>10}{'max':>10}")
    for name, vals in rows:
        print(f"{name:<14}{statistics.median(vals):>10.2f}{pct(vals, 0.99):>10.2f}{max(vals):>10.2f}")
    print(
        f"ratio {args.clients}/1: median x{statistics.median(many) / statistics.median(one):.1f}, "
        f"p99 x{pct(many, 0.99) / pct(one, 0.99):.1f}"
    )


if __name__ == "__main__":
    main()
