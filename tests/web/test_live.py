"""Live updates over a real uvicorn server: snapshot on connect, each change in order, reconnect catch-up."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from mayi_table.table.hub import TableHub
from mayi_table.web.app import create_app
from mayi_table.web.server import WebServer, WebServerError

from .conftest import PIN, bot_events, sse_messages


def test_stream_snapshot_then_changes_then_reconnect(hub: TableHub, server: WebServer) -> None:
    events = bot_events(seed=3, rounds=1)
    hub.append_event(events[0])
    with httpx.Client(base_url=server.url, timeout=10) as http:
        with http.stream("GET", "/api/live") as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            msgs = sse_messages(r.iter_lines())
            first = next(msgs)
            assert first["event"] == "snapshot" and first["data"]["version"] == hub.version
            assert first["data"]["state"]["game"]["seats"] == list(events[0].seats)
            start = hub.version
            threading.Thread(target=lambda: [hub.append_event(ev) for ev in events[1:6]]).start()
            got = [next(msgs) for _ in range(5)]
            assert [m["data"]["version"] for m in got] == list(range(start + 1, start + 6))
            assert all(m["event"] == "change" and int(m["id"]) == m["data"]["version"] for m in got)
            assert got[-1]["data"]["change"]["kind"] == "event"
            assert got[-1]["data"]["state"]["events"] == 6
        # while disconnected the game goes on; a reconnect catches up with a fresh snapshot
        for ev in events[6:9]:
            hub.append_event(ev)
        with http.stream("GET", "/api/live", headers={"Last-Event-ID": str(start + 5)}) as r:
            snap = next(sse_messages(r.iter_lines()))
            assert snap["event"] == "snapshot" and snap["data"]["version"] == hub.version
            assert snap["data"]["state"]["events"] == 9
            assert snap["data"]["state"] == http.get("/api/state").json()


def test_many_async_subscribers_see_every_version_in_order(hub: TableHub) -> None:
    events = bot_events(seed=3, rounds=1)[:30]

    async def main() -> list[list[int]]:
        subs = [hub.subscribe() for _ in range(5)]
        base = subs[0][1].version
        writer = threading.Thread(target=lambda: [hub.append_event(ev) for ev in events])
        writer.start()

        async def collect(sub) -> list[int]:  # type: ignore[no-untyped-def]
            seen = []
            while len(seen) < len(events):
                msg = await asyncio.wait_for(sub.get(), 10)
                assert msg is not None
                seen.append(msg.version - base)
            sub.close()
            return seen

        out = await asyncio.gather(*(collect(s) for s, _ in subs))
        writer.join()
        return out

    for seen in asyncio.run(main()):
        assert seen == list(range(1, len(events) + 1))
    assert hub.subscribers == 0


def test_server_ready_and_stop(hub: TableHub) -> None:
    srv = WebServer(create_app(hub, PIN), port=0, hub=hub)
    assert not srv.ready
    srv.start()
    try:
        assert srv.ready and srv.port > 0
        assert httpx.get(srv.url + "/healthz", timeout=5).json()["ok"] is True
        # the port is taken now: a second server says so instead of failing silently
        with pytest.raises(WebServerError, match="cannot serve"):
            WebServer(create_app(hub, PIN), port=srv.port).start()
        # an open stream does not keep the server from stopping
        with httpx.Client(base_url=srv.url, timeout=10) as http, http.stream("GET", "/api/live") as r:
            next(r.iter_lines())
            srv.stop()
    finally:
        srv.stop()
    assert not srv.ready


def test_device_status_is_published(hub: TableHub) -> None:
    v = hub.version
    hub.update_device(camera_ok=True, recognizer_backend="ncnn")
    assert hub.version == v + 1
    hub.update_device(add_frames=3)  # frame counts alone wait for the next second
    hub.update_device(camera_ok=False, error="no frames for 5 s")
    dev = hub.snapshot()["device"]
    assert dev["camera_ok"] is False and dev["camera_outage_since"] is not None
    assert dev["camera_last_error"] == "no frames for 5 s" and dev["frames_processed"] == 3
    assert dev["recognizer_backend"] == "ncnn"
    hub.update_device(camera_ok=True)
    assert hub.snapshot()["device"]["camera_outage_since"] is None
