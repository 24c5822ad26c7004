"""The table hub: the single writer between the referee and the browsers.

The referee (a worker thread), the host tablet (web requests) and the device's health checks all
write through one `TableHub`. Each write goes to the journal first (on disk when the journal
returns), then the hub rebuilds the public snapshot and publishes it to every subscriber with the
next version number. Browsers never read the journal themselves.

The journal's SQLite connection belongs to the thread that opened it, so the hub owns one writer
thread that opens the journal and runs every journal call; callers from any thread (or the event
loop's thread pool) hand their call to it and wait. That also serialises the writes.

`snapshot()` holds only what the whole table may see: never a card in a hand, a card drawn from the
stock or a penalty card. The hands spread at the end of a round are public once it has ended.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..rules.cards import parse_card, sorted_cards
from ..rules.engine import Game
from ..rules.events import Deal, Event, GameStart, RoundEnd, event_to_dict
from .journal import Flag, Journal, JournalError, utc_now

T = TypeVar("T")

MAX_QUEUE = 256  # changes a subscriber may fall behind before it is dropped (it reconnects and resyncs)
DEVICE_PUBLISH_INTERVAL_S = 1.0  # frame counters alone publish at most this often


class HubError(Exception):
    """A request the hub refuses before it reaches the journal; `status` is the HTTP status to answer."""

    status = 409


class NotFound(HubError):
    status = 404


class BadRequest(HubError):
    status = 422


@dataclass(frozen=True)
class Message:
    """One published version: `text` is the JSON `{"version", "change", "state"}` sent to browsers."""

    version: int
    text: str


@dataclass
class DeviceStatus:
    camera_ok: bool | None = None
    camera_outage_since: str | None = None
    camera_last_error: str | None = None
    frames_processed: int = 0
    recognizer_backend: str | None = None
    updated_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "camera_ok": self.camera_ok,
            "camera_outage_since": self.camera_outage_since,
            "camera_last_error": self.camera_last_error,
            "frames_processed": self.frames_processed,
            "recognizer_backend": self.recognizer_backend,
            "updated_at": self.updated_at,
        }


class Subscription:
    """A subscriber's queue of published messages on its own event loop; `None` means the hub closed."""

    def __init__(self, hub: TableHub, loop: asyncio.AbstractEventLoop) -> None:
        self.hub = hub
        self.loop = loop
        self.queue: asyncio.Queue[Message | None] = asyncio.Queue()
        self.closed = False
        self.overflowed = False

    def _put(self, msg: Message | None) -> None:
        # runs on the subscriber's loop
        if self.closed:
            return
        if msg is not None and self.queue.qsize() >= MAX_QUEUE:
            # a stalled client: drop it rather than grow without bound; it reconnects and gets a snapshot
            self.overflowed = True
            msg = None
        self.queue.put_nowait(msg)
        if msg is None:
            self.closed = True

    async def get(self) -> Message | None:
        return await self.queue.get()

    def close(self) -> None:
        self.closed = True
        self.hub._unsubscribe(self)


def public_line(line: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A record line with everything face-down removed: dealt hands, stock draws, penalty cards."""
    if line is None:
        return None
    out = dict(line)
    kind = out.get("type")
    if kind == "deal":
        out.pop("hands", None)
    elif kind == "draw" and out.get("from") == "stock":
        out.pop("card", None)
    elif kind == "buy":
        out.pop("penalty", None)
    return out


def _archive_name(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return path.with_name(f"{path.stem}.{stamp}{path.suffix}")


class TableHub:
    """The device's single writer: journal first, then publish to subscribers.

    `journal_path`: the journal of the current game (created if missing). A new game started over
    an existing one archives the old file beside it (`<stem>.<UTC time><suffix>`) and starts a fresh
    journal at the same path, so the path always holds the game in play.
    `images_dir`: where flag pictures given as bytes are written (default: `flag-images/` beside
    the journal).
    """

    def __init__(
        self,
        journal_path: str | os.PathLike[str],
        *,
        images_dir: str | os.PathLike[str] | None = None,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        self.journal_path = Path(journal_path)
        self.images_dir = Path(images_dir) if images_dir is not None else self.journal_path.parent / "flag-images"
        self.clock = clock
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="table-hub")
        self._writer_thread: threading.Thread | None = None
        self._journal: Journal | None = None
        self._subs: set[Subscription] = set()
        self._subs_lock = threading.Lock()
        self._cond = threading.Condition()
        self._version = 0
        self._message = Message(0, "{}")
        self._state: dict[str, Any] = {}
        self._events: tuple[tuple[int, dict[str, Any]], ...] = ()
        self._device = DeviceStatus()
        self._device_published = 0.0
        self._camera_view: tuple[bytes, str] | None = None
        self._first_dealer: str | None = None
        self._closed = False
        self._call(self._open)

    # ----- the writer thread -------------------------------------------------------------
    def _call(self, fn: Callable[[], T]) -> T:
        if threading.current_thread() is self._writer_thread:
            return fn()
        if self._closed:
            raise HubError("the table hub is closed")
        return self._executor.submit(fn).result()

    def _open(self) -> None:
        self._writer_thread = threading.current_thread()
        self._journal = Journal(self.journal_path, clock=self.clock)
        self._reload_events()
        self._publish({"kind": "open"})

    def _j(self) -> Journal:
        if self._journal is None:
            raise HubError("the table hub is closed")
        return self._journal

    def _reload_events(self) -> None:
        try:
            self._events = tuple((seq, event_to_dict(ev)) for seq, ev in self._j().accepted())
        except JournalError:
            self._events = ()

    def _game(self) -> tuple[Game | None, str | None]:
        try:
            return self._j().game, None
        except JournalError as e:
            return None, str(e)

    def close(self) -> None:
        """End every subscription and close the journal; later calls raise `HubError`."""
        if self._closed:
            return

        def shut() -> None:
            if self._journal is not None:
                self._journal.close()
                self._journal = None

        self._executor.submit(shut).result()
        self._closed = True
        self._executor.shutdown(wait=True)
        self.end_streams()

    # ----- publishing --------------------------------------------------------------------
    def _publish(self, change: dict[str, Any]) -> None:
        """Rebuild the snapshot and send it with the next version (writer thread only)."""
        self._version += 1
        state = self._build_state(self._version)
        text = json.dumps({"version": self._version, "change": change, "state": state}, separators=(",", ":"))
        msg = Message(self._version, text)
        with self._subs_lock:
            self._state = state
            self._message = msg
            subs = list(self._subs)
        for sub in subs:
            self._deliver(sub, msg)
        with self._cond:
            self._cond.notify_all()

    def _deliver(self, sub: Subscription, msg: Message | None) -> None:
        try:
            sub.loop.call_soon_threadsafe(sub._put, msg)
        except RuntimeError:  # its loop is closed: the client is gone
            self._unsubscribe(sub)

    def subscribe(self, loop: asyncio.AbstractEventLoop | None = None) -> tuple[Subscription, Message]:
        """A new subscription on `loop` (default: the running loop) and the current message; every
        later version reaches the subscription's queue, in order."""
        loop = loop if loop is not None else asyncio.get_running_loop()
        sub = Subscription(self, loop)
        with self._subs_lock:
            if self._closed:
                raise HubError("the table hub is closed")
            self._subs.add(sub)
            return sub, self._message

    def end_streams(self) -> None:
        """End every subscription (the web server is stopping); the hub itself stays open."""
        with self._subs_lock:
            subs = list(self._subs)
            self._subs.clear()
        for sub in subs:
            self._deliver(sub, None)

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._subs_lock:
            self._subs.discard(sub)

    @property
    def subscribers(self) -> int:
        with self._subs_lock:
            return len(self._subs)

    @property
    def version(self) -> int:
        return self._message.version

    def message(self) -> Message:
        """The latest published message (its text holds the full snapshot)."""
        return self._message

    def snapshot(self) -> dict[str, Any]:
        """The full public state as a JSON-able dict (a copy: change it freely)."""
        state: dict[str, Any] = json.loads(json.dumps(self._state))
        return state

    def wait_for_version(self, version: int, timeout: float = 5.0) -> bool:
        """Block until `version` is published; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._message.version >= version, timeout)

    # ----- the public state --------------------------------------------------------------
    def _build_state(self, version: int) -> dict[str, Any]:
        game, error = self._game() if self._journal is not None else (None, None)
        flags = [self._flag_dict(f) for f in self._j().open_flags()] if self._journal is not None else []
        last = self._events[-1][1] if self._events else None
        return {
            "version": version,
            "game": self._game_dict(game) if game is not None else None,
            "flags": flags,
            "device": self._device.as_dict(),
            "last_event": public_line(last),
            "events": len(self._events),
            "journal_error": error,
        }

    def _flag_dict(self, f: Flag) -> dict[str, Any]:
        return {
            "seq": f.seq,
            "reason": f.reason,
            "event": public_line(f.event_line),
            "at": f.at,
            "source": f.source,
            "has_image": f.image is not None,
            "status": f.status,
        }

    def _game_dict(self, game: Game) -> dict[str, Any]:
        p = game.profile
        totals = game.totals()
        leaders: list[str] = []
        if game.results:
            best = min(totals.values())
            leaders = [s for s in game.seats if totals[s] == best]
        next_round = game.expected_round()
        next_dealer = game.expected_dealer() if game.round is not None else self._first_dealer
        next_contract = None
        if next_round is not None:
            try:
                next_contract = p.contract(next_round).words()
            except Exception:  # a round past the profile's list cannot be dealt anyway
                next_contract = None
        return {
            "profile": p.name,
            "variants": list(p.variants),
            "seats": list(game.seats),
            "complete": game.complete,
            "winners": list(game.winners) if game.complete else [],
            "buys_allowed": p.buys_allowed,
            "buy_limit": p.buy_limit,
            "rounds_total": len(p.rounds),
            "contracts": [c.words() for c in p.rounds],
            "round": self._round_dict(game),
            "next_round": next_round,
            "next_dealer": next_dealer,
            "next_contract": next_contract,
            "scores": [{"round": r.round, "went_out": r.went_out, "scores": dict(r.scores)} for r in game.results],
            "totals": totals,
            "leaders": leaders,
            "tiebreak_players": list(game.tiebreak_players),
        }

    def _round_dict(self, game: Game) -> dict[str, Any] | None:
        r = game.round
        if r is None:
            return None
        shown: dict[str, list[str]] | None = None
        if r.over:
            if not r.observed:
                shown = {s: list(sorted_cards(r.hands[s])) for s in r.players}
            else:
                # an observed round's hands are known once they were spread (its round_end line)
                for _, line in reversed(self._events):
                    if line.get("type") == "round_end":
                        hands = line.get("hands")
                        if isinstance(hands, dict) and game.results and game.results[-1].round == r.number:
                            shown = {str(s): [str(c) for c in cs] for s, cs in hands.items()}
                        break
                    if line.get("type") == "deal":
                        break
        return {
            "number": r.number,
            "contract": r.contract.words(),
            "dealer": r.dealer,
            "players": list(r.players),
            "turn": None if r.over else r.turn,
            "phase": "over" if r.over else ("play" if r.drawn else "draw"),
            "over": r.over,
            "went_out": r.went_out,
            "observed": r.observed,
            "hand_counts": dict(r.counts),
            "opened": [s for s in r.players if s in r.opened],
            "melds": [{"owner": m.owner, "kind": m.kind, "cards": m.written()} for m in r.table],
            "discard_top": r.pile[-1] if r.pile else None,
            "discard_count": len(r.pile),
            "stock_count": r.stock_count,
            "buys": {s: r.buys.get(s, 0) for s in r.players},
            "shown_hands": shown,
        }

    # ----- reading -----------------------------------------------------------------------
    def history(self, public: bool = True) -> list[dict[str, Any]]:
        """The accepted events in order as `{"seq", "event"}`; `public` hides face-down cards."""
        return [{"seq": seq, "event": public_line(line) if public else dict(line)} for seq, line in self._events]

    def flags(self, open_only: bool = True) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            j = self._j()
            return [self._flag_dict(f) for f in (j.open_flags() if open_only else j.flags())]

        return self._call(read)

    def flag_image(self, flag_seq: int) -> tuple[bytes, str]:
        """The picture stored with flag `flag_seq` and its media type; `NotFound` if none."""

        def find() -> str | None:
            f = next((f for f in self._j().flags() if f.seq == flag_seq), None)
            if f is None:
                raise NotFound(f"there is no flag {flag_seq}")
            return f.image

        image = self._call(find)
        if image is None:
            raise NotFound(f"flag {flag_seq} has no picture")
        path = Path(image)
        try:
            data = path.read_bytes()
        except OSError:
            raise NotFound(f"the picture of flag {flag_seq} is missing") from None
        media = "image/png" if path.suffix.lower() == ".png" else "image/jpeg"
        return data, media

    def record_lines(self) -> list[str]:
        """The `.mayi.jsonl` lines of the game (everything, hands included: host only)."""
        return self._call(lambda: list(self._j().record_lines()))

    @property
    def game(self) -> Game | None:
        """A copy of the recorded game (hands included: for the referee, never for browsers); a property,
        as on Journal, so the referee writes through either."""
        return self._call(lambda: self._j().game)

    @property
    def first_dealer(self) -> str | None:
        """The first dealer chosen when the game was set up (None if not chosen, or after a restart)."""
        return self._first_dealer

    # ----- writing -----------------------------------------------------------------------
    def _append(self, ev: Event, source: str | None) -> int:
        seq = self._j().append_event(ev, source)
        self._events = self._events + ((seq, event_to_dict(ev)),)
        self._publish({"kind": "event", "seq": seq, "event": public_line(event_to_dict(ev))})
        return seq

    def append_event(self, ev: Event, source: str | None = None) -> int:
        """Journal `ev` (IllegalMove if the rules refuse it; nothing is written) and publish it."""
        return self._call(lambda: self._append(ev, source))

    def flag(
        self,
        ev: Event | None,
        reason: str,
        image: bytes | str | os.PathLike[str] | None = None,
        source: str | None = "camera",
    ) -> int:
        """Hold `ev` for the host with `reason`; `image` is the camera crop (JPEG bytes, or a path)."""
        path: str | os.PathLike[str] | None
        if isinstance(image, bytes):
            self.images_dir.mkdir(parents=True, exist_ok=True)
            target = self.images_dir / f"flag-{time.time_ns()}-{threading.get_ident()}.jpg"
            target.write_bytes(image)
            path = target
        else:
            path = image

        def write() -> int:
            seq = self._j().flag(ev, reason, path, source)
            self._publish({"kind": "flag", "seq": seq, "reason": reason})
            return seq

        return self._call(write)

    def _check_flag(self, flag_seq: int) -> None:
        f = next((f for f in self._j().flags() if f.seq == flag_seq), None)
        if f is None:
            raise NotFound(f"there is no flag {flag_seq}")
        if f.status != "open":
            raise HubError(f"flag {flag_seq} is {f.status} already")

    def confirm(self, flag_seq: int, ev: Event | None = None, source: str | None = "tablet") -> int:
        """Accept flag `flag_seq`'s event (or `ev`, the host's edit of it) as the next event."""

        def write() -> int:
            self._check_flag(flag_seq)
            seq = self._j().confirm(flag_seq, ev, source)
            self._reload_events()
            self._publish({"kind": "confirm", "flag": flag_seq, "seq": seq})
            return seq

        return self._call(write)

    def dismiss(self, flag_seq: int, reason: str = "", source: str | None = "tablet") -> int:
        def write() -> int:
            self._check_flag(flag_seq)
            seq = self._j().dismiss(flag_seq, reason, source)
            self._publish({"kind": "dismiss", "flag": flag_seq, "seq": seq})
            return seq

        return self._call(write)

    def replace(self, target: int, ev: Event, source: str | None = "tablet") -> int:
        """Swap accepted event `target` for `ev` (IllegalMove if the corrected game does not replay)."""

        def write() -> int:
            if not any(seq == target for seq, _ in self._events):
                raise NotFound(f"entry {target} is not an accepted event")
            seq = self._j().replace(target, ev, source)
            self._reload_events()
            self._publish({"kind": "replace", "target": target, "seq": seq})
            return seq

        return self._call(write)

    def undo(self, source: str | None = "tablet") -> int:
        def write() -> int:
            if not self._events:
                raise HubError("there is no event to undo")
            seq = self._j().undo(source)
            self._reload_events()
            self._publish({"kind": "undo", "seq": seq})
            return seq

        return self._call(write)

    # ----- host conveniences: each is one checked event --------------------------------
    def start_game(
        self,
        profile: str,
        seats: Sequence[str],
        variants: Sequence[str] = (),
        first_dealer: str | None = None,
        abandon: bool = False,
        source: str | None = "tablet",
    ) -> int:
        """Start a new game. A journal that already holds a game is archived first; a game still in
        play is only abandoned when `abandon` is true."""
        start = GameStart(profile, tuple(variants), tuple(seats), source=source)
        Game(start)  # IllegalMove for an unknown profile/variant or a seat count it does not allow
        if first_dealer is not None and first_dealer not in start.seats:
            raise BadRequest(f"the first dealer {first_dealer!r} is not one of the seats {', '.join(seats)}")

        def write() -> int:
            if self._events:
                game, _ = self._game()
                if game is not None and not game.complete and not abandon:
                    raise HubError(
                        "a game is in progress; finish it, or start the new game with abandon set to archive it"
                    )
                self._archive()
            self._first_dealer = first_dealer
            seq = self._j().append_event(start, source)
            self._events = ((seq, event_to_dict(start)),)
            self._publish({"kind": "game", "seq": seq})
            return seq

        return self._call(write)

    def _archive(self) -> None:
        self._j().close()
        self._journal = None
        target = _archive_name(self.journal_path)
        os.replace(self.journal_path, target)
        for extra in ("-wal", "-shm"):  # normally gone after the last connection closed
            side = self.journal_path.with_name(self.journal_path.name + extra)
            if side.exists():
                os.replace(side, target.with_name(target.name + extra))
        self._journal = Journal(self.journal_path, clock=self.clock)
        self._events = ()

    def start_round(self, upcard: str, dealer: str | None = None, source: str | None = "tablet") -> int:
        """Deal the next round as the camera sees it (no hands): the round number is the one due,
        the dealer the next seat (the chosen first dealer, or `dealer`, for round 1)."""

        card = parse_card(upcard)  # CardError (a ValueError) for a card that does not read

        def write() -> int:
            game, error = self._game()
            if game is None:
                raise HubError(error or "no game has been set up; start a game first")
            due = game.expected_round()
            if due is None:
                raise HubError(
                    "the game is over" if game.complete else "the round in play has not ended and been scored yet"
                )
            who = dealer or game.expected_dealer() or self._first_dealer
            if who is None:
                raise BadRequest("choose the first dealer")
            return self._append(Deal(due, who, card, None, source=source), source)

        return self._call(write)

    def end_round(self, hands: Mapping[str, Sequence[str]], source: str | None = "tablet") -> int:
        """Record the hands spread at the end of the round (`[]` for the seat that went out)."""
        ev = RoundEnd({s: tuple(parse_card(c) for c in cs) for s, cs in hands.items()}, source=source)
        return self.append_event(ev, source)

    # ----- the device ----------------------------------------------------------------------
    def update_device(
        self,
        *,
        camera_ok: bool | None = None,
        error: str | None = None,
        frames_processed: int | None = None,
        add_frames: int = 0,
        recognizer_backend: str | None = None,
    ) -> None:
        """Update the device status. A change in camera health, error or backend publishes at once;
        frame counts alone at most once a second (the referee may call this every frame)."""
        now = self.clock()

        def write() -> None:
            d = self._device
            important = False
            if camera_ok is not None and camera_ok != d.camera_ok:
                important = True
                d.camera_ok = camera_ok
                d.camera_outage_since = None if camera_ok else now
            if error is not None and error != d.camera_last_error:
                important = True
                d.camera_last_error = error
            if recognizer_backend is not None and recognizer_backend != d.recognizer_backend:
                important = True
                d.recognizer_backend = recognizer_backend
            if frames_processed is not None:
                d.frames_processed = frames_processed
            d.frames_processed += add_frames
            d.updated_at = now
            mono = time.monotonic()
            if important or mono - self._device_published >= DEVICE_PUBLISH_INTERVAL_S:
                self._device_published = mono
                self._publish({"kind": "device"})

        self._call(write)

    def set_camera_view(self, jpeg: bytes) -> None:
        """The latest annotated camera frame (host only: it can show hands)."""
        self._camera_view = (jpeg, self.clock())

    def camera_view(self) -> tuple[bytes, str] | None:
        return self._camera_view
