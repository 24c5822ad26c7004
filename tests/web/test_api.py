"""The JSON API over a real hub and journal: state, PIN, corrections through the engine, flags, records."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from mayi_table.rules.events import Discard, Draw, event_to_dict
from mayi_table.rules.record import replay_lines
from mayi_table.table.hub import TableHub
from mayi_table.web.app import HostAuth, create_app

from .conftest import PIN, bot_events

JPEG = b"\xff\xd8\xff\xe0fake-jpeg-crop\xff\xd9"


def keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys(v)}
    return set()


def feed(hub: TableHub, events: list) -> list[int]:
    return [hub.append_event(ev) for ev in events]


def test_state_before_a_game(client: TestClient) -> None:
    r = client.get("/api/state")
    assert r.status_code == 200
    body = r.json()
    assert body["game"] is None and body["flags"] == [] and body["events"] == 0
    assert client.get("/api/history").json() == []
    assert client.get("/").status_code == 200 and "scoreboard" in client.get("/").text
    assert client.get("/host").status_code == 200
    assert client.get("/static/common.js").status_code == 200


def test_state_shows_only_face_up_cards(hub: TableHub, client: TestClient) -> None:
    events = bot_events(seed=3, rounds=1)
    feed(hub, events[:40])  # a known game: the journal holds every hand and stock card
    state = client.get("/api/state").json()
    r = state["game"]["round"]
    assert r["number"] == 1 and r["contract"] == "two groups"
    assert r["shown_hands"] is None
    assert "hands" not in keys(state)  # no dealt hands anywhere in the public state
    game = hub.game
    assert game is not None and game.round is not None
    face_up = set(game.round.pile) | {c for m in game.round.table for c in m.cards}
    hidden = {c for h in game.round.hands.values() for c in h} - face_up
    text = json.dumps(state)
    assert hidden and not [c for c in hidden if f'"{c}"' in text]
    assert sum(r["hand_counts"].values()) > 0
    public = client.get("/api/history").json()
    assert all("hands" not in it["event"] for it in public)
    stock = [it["event"] for it in public if it["event"]["type"] == "draw" and it["event"]["from"] == "stock"]
    assert stock and all("card" not in ev for ev in stock)
    # once the round is over the spread hands are public
    feed(hub, events[40:])
    state = client.get("/api/state").json()
    assert state["game"]["round"]["over"] and state["game"]["round"]["shown_hands"] is not None
    assert state["game"]["scores"][0]["scores"][state["game"]["round"]["went_out"]] == 0


def test_controls_need_the_pin(client: TestClient) -> None:
    body = {"profile": "petras", "seats": ["Ann", "Bob", "Cy"]}
    assert client.post("/api/host/game", json=body).status_code == 401
    assert client.get("/api/host/record").status_code == 401
    assert client.get("/api/host/history", headers={"Authorization": "Bearer forged"}).status_code == 401
    r = client.post("/api/host/game", json=body, headers={"X-Host-PIN": "0000"})
    assert r.status_code == 403 and "wrong PIN" in r.json()["detail"]
    assert client.post("/api/host/game", json=body, headers={"X-Host-PIN": PIN}).status_code == 200
    login = client.post("/api/host/login", json={"pin": PIN})
    assert login.status_code == 200
    token = login.headers["X-Host-Token"]
    fresh = TestClient(client.app)  # no cookie: the bearer token alone is enough
    assert fresh.get("/api/host/session", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    client.post("/api/host/logout")
    assert client.get("/api/host/session").status_code == 401
    assert fresh.get("/api/host/session", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_wrong_pins_are_rate_limited(hub: TableHub) -> None:
    now = [1000.0]
    app = create_app(hub, PIN, auth=HostAuth(PIN, max_failures=5, window_s=60, clock=lambda: now[0]))
    client = TestClient(app)
    for _ in range(5):
        assert client.post("/api/host/login", json={"pin": "1111"}).status_code == 403
    r = client.post("/api/host/login", json={"pin": PIN})  # even the right PIN waits
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    assert client.post("/api/host/undo", headers={"X-Host-PIN": PIN}).status_code == 429
    now[0] += 61
    assert client.post("/api/host/login", json={"pin": PIN}).status_code == 200


def test_host_sets_up_deals_and_scores_an_observed_round(hub: TableHub, host: TestClient) -> None:
    events = bot_events(seed=5, rounds=1, observed=True)
    start, deal = events[0], events[1]
    r = host.post("/api/host/game", json={"profile": "petras", "seats": list(start.seats), "first_dealer": deal.dealer})
    assert r.status_code == 200, r.text
    assert host.get("/api/state").json()["game"]["next_dealer"] == deal.dealer
    assert host.post("/api/host/deal", json={"upcard": "ZZ"}).status_code == 422  # not a card
    r = host.post("/api/host/deal", json={"upcard": deal.upcard.lower()})
    assert r.status_code == 200, r.text
    assert r.json()["version"] == hub.version
    body = host.get("/api/state").json()["game"]["round"]
    assert body["dealer"] == deal.dealer and body["discard_top"] == deal.upcard
    feed(hub, events[2:-1])
    end = events[-1]
    hands = {s: list(h) for s, h in end.hands.items()}
    wrong = {**hands, start.seats[0]: hands[start.seats[0]] + ["JK"]}
    r = host.post("/api/host/round-end", json={"hands": wrong})
    assert r.status_code == 409  # the engine counts the cards each seat holds
    r = host.post("/api/host/round-end", json={"hands": hands})
    assert r.status_code == 200, r.text
    game = host.get("/api/state").json()["game"]
    assert game["scores"] and game["round"]["shown_hands"] == hands
    assert game["next_round"] == 2


def test_corrections_go_through_the_engine(hub: TableHub, host: TestClient) -> None:
    events = bot_events(seed=3, rounds=1)
    seqs = feed(hub, events[:30])
    before = host.get("/api/host/history").json()
    version = hub.version
    # find a discard and make it a card that seat does not hold
    i = next(k for k in range(29, 0, -1) if isinstance(events[k], Discard))
    ev = events[i]
    assert isinstance(ev, Discard)
    bad = event_to_dict(ev) | {"card": "JK" if ev.card != "JK" else "2C"}
    r = host.put(f"/api/host/events/{seqs[i]}", json={"event": bad})
    assert r.status_code == 409
    assert "no longer replays" in r.json()["detail"]
    assert hub.version == version and host.get("/api/host/history").json() == before  # nothing written
    # an unknown seat is a request that does not read: 422
    r = host.put(f"/api/host/events/{seqs[i]}", json={"event": event_to_dict(ev) | {"seat": "Zed"}})
    assert r.status_code == 422 and "unknown seat" in r.json()["detail"]
    assert host.put("/api/host/events/99999", json={"event": event_to_dict(ev)}).status_code == 404
    # a legal correction: the same event, from the tablet
    assert host.put(f"/api/host/events/{seqs[i]}", json={"event": event_to_dict(ev)}).status_code == 200
    # undo removes the last event; the one before becomes last
    r = host.post("/api/host/undo")
    assert r.status_code == 200
    after = host.get("/api/host/history").json()
    assert [it["seq"] for it in after] == seqs[:29]
    # an event out of turn is refused with the engine's reason
    last = hub.game
    assert last is not None and last.round is not None
    other = next(s for s in last.seats if s != last.round.turn)
    r = host.post("/api/host/events", json={"event": {"type": "draw", "seat": other, "from": "discard"}})
    assert r.status_code == 409 and r.json()["detail"]


def test_flag_confirm_and_dismiss(hub: TableHub, host: TestClient) -> None:
    events = bot_events(seed=3, rounds=1)
    feed(hub, events[:10])
    ev = events[10]
    seq = hub.flag(ev, "the camera is not sure", JPEG)
    state = host.get("/api/state").json()
    assert [f["seq"] for f in state["flags"]] == [seq]
    assert state["flags"][0]["has_image"] and state["flags"][0]["reason"] == "the camera is not sure"
    img = host.get(f"/api/flags/{seq}/image")
    assert img.status_code == 200 and img.content == JPEG and img.headers["content-type"] == "image/jpeg"
    assert host.get("/api/flags/12345/image").status_code == 404
    assert host.post("/api/host/flags/12345/confirm").status_code == 404
    r = host.post(f"/api/host/flags/{seq}/confirm", json={})
    assert r.status_code == 200, r.text
    assert host.get("/api/state").json()["flags"] == []
    assert host.get("/api/history").json()[-1]["seq"] == r.json()["seq"]
    again = host.post(f"/api/host/flags/{seq}/confirm")
    assert again.status_code == 409 and "confirmed already" in again.json()["detail"]
    # a flag with an edit the engine refuses stays open
    nxt = events[11]
    seq2 = hub.flag(nxt, "unreadable")
    seat = getattr(nxt, "seat", None)
    wrong_seat = next(s for s in events[0].seats if s != seat)
    r = host.post(f"/api/host/flags/{seq2}/confirm", json={"event": event_to_dict(Draw(wrong_seat, "discard"))})
    assert r.status_code == 409
    assert [f["seq"] for f in host.get("/api/flags").json()] == [seq2]
    assert host.post(f"/api/host/flags/{seq2}/dismiss", json={"reason": "a shadow"}).status_code == 200
    assert host.get("/api/flags").json() == []
    assert {f["status"] for f in host.get("/api/flags", params={"all": True}).json()} == {"confirmed", "dismissed"}


def test_record_download_replays(hub: TableHub, host: TestClient) -> None:
    events = bot_events(seed=7, rounds=2)
    feed(hub, events)
    r = host.get("/api/host/record")
    assert r.status_code == 200
    assert (
        r.headers["content-disposition"].startswith("attachment;") and ".mayi.jsonl" in r.headers["content-disposition"]
    )
    result, game = replay_lines(r.text.splitlines())
    assert result["ok"], result
    assert game is not None and len(game.results) == 2
    assert result["totals"] == host.get("/api/state").json()["game"]["totals"]


def test_new_game_over_a_game_in_play(hub: TableHub, host: TestClient, tmp_path: Path) -> None:
    feed(hub, bot_events(seed=3, rounds=1)[:20])
    body = {"profile": "classic", "variants": ["no-buy"], "seats": ["A", "B", "C"]}
    r = host.post("/api/host/game", json=body)
    assert r.status_code == 409 and "abandon" in r.json()["detail"]
    r = host.post("/api/host/game", json=body | {"abandon": True})
    assert r.status_code == 200, r.text
    state = host.get("/api/state").json()
    assert state["game"]["seats"] == ["A", "B", "C"] and state["game"]["buys_allowed"] is False
    assert state["events"] == 1
    archived = [p for p in tmp_path.iterdir() if p.name.startswith("journal.") and p.name != "journal.sqlite3"]
    assert any(p.suffix == ".sqlite3" for p in archived)
    # bad setups are refused with the reason
    assert host.post("/api/host/game", json=body | {"abandon": True, "seats": ["A"]}).status_code == 409
    assert host.post("/api/host/game", json=body | {"abandon": True, "seats": ["A", "A"]}).status_code == 422
    r = host.post("/api/host/game", json=body | {"abandon": True, "variants": ["turbo"]})
    assert r.status_code == 409 and "unknown variant" in r.json()["detail"]
    r = host.post("/api/host/game", json=body | {"abandon": True, "first_dealer": "Q"})
    assert r.status_code == 422


def test_bad_requests_are_4xx(host: TestClient) -> None:
    assert host.post("/api/host/deal", json={"upcard": "9S"}).status_code == 409  # no game yet
    assert host.post("/api/host/undo").status_code == 409
    r = host.post("/api/host/events", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    assert host.post("/api/host/events", json={"event": {"type": "draw"}}).status_code == 422
    assert host.post("/api/host/game", json={"profile": "poker", "seats": ["A", "B"]}).status_code == 422
    assert host.post("/api/host/login", json={"pin": PIN, "extra": 1}).status_code == 422


def test_live_once_sends_the_snapshot(hub: TableHub, client: TestClient) -> None:
    feed(hub, bot_events(seed=3, rounds=1)[:5])
    r = client.get("/api/live", params={"once": True})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    from .conftest import sse_messages

    (msg,) = list(sse_messages(iter(r.text.split("\n"))))
    assert msg["event"] == "snapshot" and int(msg["id"]) == hub.version
    assert msg["data"]["state"] == client.get("/api/state").json()


def test_camera_view_is_host_only(hub: TableHub, client: TestClient) -> None:
    assert client.get("/api/host/camera.jpg").status_code == 401
    client.post("/api/host/login", json={"pin": PIN})
    assert client.get("/api/host/camera.jpg").status_code == 404
    hub.set_camera_view(JPEG)
    r = client.get("/api/host/camera.jpg")
    assert r.status_code == 200 and r.content == JPEG
