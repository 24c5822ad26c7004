"""The write-ahead journal: every accepted event, flag and correction, in one SQLite file.

The referee writes here before anything changes state or reaches a browser (DESIGN.md "Write
ahead"): `append_event` checks the event against the journal's own copy of the game, commits it
(WAL, synchronous=FULL: on disk when the call returns), and only then returns its sequence number;
the referee applies the event after that. On start, `rebuild()` replays the accepted events through
the engine and gives back the exact game state; `open_flags()` lists what still waits for the host.

The journal is append-only. Nothing recorded is updated or deleted (the database refuses it with
triggers); a correction is a new entry that says what it corrects:

- `event`: an accepted event; the payload is its game-record line (`event_to_dict`).
- `flag`: an event the camera is unsure of, or the engine rejected, held for the host with a
  reason and an optional picture. `confirm` accepts a flag's event (or the host's edit of it) as the
  next event; `dismiss` closes it with nothing accepted.
- `replace`: the host swaps an accepted event for another, in its place.
- `undo`: the host removes the last accepted event.

Each entry has a sequence number (`seq`, never reused), its kind, a JSON payload, the ISO time it
was written and its source (`camera`, `button`, `tablet`, `correction`). An accepted event is known by
the `seq` of the entry that brought it in (an `event` or a `confirm`); `replace` names that `seq`.

Every correction is checked before it is written: the corrected history must replay through the
engine. A database that cannot be read gives a `JournalError` naming the file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Iterator, Literal

from ..rules.engine import Game, IllegalMove
from ..rules.events import SOURCES, Event, GameStart, RecordError, event_from_dict, event_to_dict
from ..rules.record import dumps_event

APPLICATION_ID = 0x4D415949  # "MAYI": marks the file as a May I? journal
SCHEMA_VERSION = 1

EntryKind = Literal["event", "flag", "confirm", "dismiss", "replace", "undo"]
KINDS: tuple[str, ...] = ("event", "flag", "confirm", "dismiss", "replace", "undo")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS entries (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    kind    TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in KINDS)})),
    payload TEXT NOT NULL,
    at      TEXT NOT NULL,
    source  TEXT
);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
BEGIN SELECT RAISE(ABORT, 'the journal is append-only: entries are never updated'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
BEGIN SELECT RAISE(ABORT, 'the journal is append-only: entries are never deleted'); END;
PRAGMA application_id = {APPLICATION_ID};
PRAGMA user_version = {SCHEMA_VERSION};
"""


class JournalError(Exception):
    """The journal file cannot be opened, read or written, or does not hold a journal."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Entry:
    """One row of the journal, as written."""

    seq: int
    kind: str
    payload: dict[str, Any]
    at: str
    source: str | None


@dataclass(frozen=True)
class Flag:
    """Something held for the host: `event` (None when there was nothing readable to record,
    or its line no longer reads), `reason`, and an optional picture of what the camera saw."""

    seq: int
    event: Event | None
    event_line: dict[str, Any] | None
    reason: str
    image: str | None
    at: str
    source: str | None
    status: Literal["open", "confirmed", "dismissed"] = "open"


@dataclass
class _History:
    """The journal read back: the accepted events in order (by the seq that brought each in) and the flags."""

    accepted: list[tuple[int, dict[str, Any]]]
    flags: dict[int, Flag]
    last_seq: int


class Journal:
    """A game's write-ahead journal in the SQLite file `path` (created if missing).

    `clock` gives the ISO time written with each entry (default: now, UTC).
    """

    def __init__(self, path: str | os.PathLike[str], clock: Callable[[], str] = utc_now) -> None:
        self.path = Path(path)
        self.clock = clock
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
            self._setup(self._conn)
        except sqlite3.Error as e:
            self.close()
            raise self._error(e) from None
        self._game: Game | None = None
        self._broken: str | None = None
        try:
            self._history = self._read()
        except BaseException:
            self.close()
            raise
        self._game, self._broken = self._replay_or_error(self._history.accepted)

    # ----- opening -----------------------------------------------------------------------
    def _error(self, e: BaseException, doing: str = "open") -> JournalError:
        text = str(e)
        if isinstance(e, sqlite3.DatabaseError) and "not a database" in text:
            text = "the file is not an SQLite database (corrupt, or some other file)"
        return JournalError(f"cannot {doing} the journal {self.path}: {text}")

    def _setup(self, conn: sqlite3.Connection) -> None:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id != APPLICATION_ID and tables - {"sqlite_sequence"}:
            raise JournalError(
                f"cannot open the journal {self.path}: it is an SQLite database, but not a May I? journal "
                f"(it holds tables {', '.join(sorted(tables))})"
            )
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id == APPLICATION_ID and version > SCHEMA_VERSION:
            raise JournalError(
                f"cannot open the journal {self.path}: it was written by a newer version (schema {version}, "
                f"this one reads {SCHEMA_VERSION})"
            )
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"cannot open the journal {self.path}: SQLite refused WAL mode (got {mode!r})")
        conn.execute("PRAGMA synchronous = FULL")
        if app_id != APPLICATION_ID:
            conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise JournalError(f"cannot open the journal {self.path}: the database is damaged ({check})")

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JournalError(f"the journal {self.path} is closed")
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def pragmas(self) -> dict[str, Any]:
        """The durability settings in force on this connection: `journal_mode` and `synchronous`
        (2 is FULL)."""
        db = self._db()
        return {
            "journal_mode": db.execute("PRAGMA journal_mode").fetchone()[0],
            "synchronous": db.execute("PRAGMA synchronous").fetchone()[0],
        }

    # ----- reading ---------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """Every entry, in order: the full audit trail."""
        try:
            rows = self._db().execute("SELECT seq, kind, payload, at, source FROM entries ORDER BY seq").fetchall()
        except sqlite3.Error as e:
            raise self._error(e, "read") from None
        out: list[Entry] = []
        for seq, kind, payload, at, source in rows:
            try:
                data = json.loads(payload)
            except (TypeError, ValueError) as e:
                raise JournalError(f"the journal {self.path} is damaged: entry {seq} is not JSON ({e})") from None
            if not isinstance(data, dict):
                raise JournalError(f"the journal {self.path} is damaged: entry {seq} is not a JSON object")
            out.append(Entry(seq, kind, data, at, source))
        return out

    def _read(self) -> _History:
        accepted: list[tuple[int, dict[str, Any]]] = []
        flags: dict[int, Flag] = {}
        last = 0

        def bad(e: Entry, why: str) -> JournalError:
            return JournalError(f"the journal {self.path} is damaged: entry {e.seq} ({e.kind}) {why}")

        for e in self.entries():
            last = e.seq
            p = e.payload
            if e.kind == "event":
                accepted.append((e.seq, p))
            elif e.kind == "flag":
                line = p.get("event")
                image = p.get("image")
                flags[e.seq] = Flag(
                    e.seq,
                    None,
                    line if isinstance(line, dict) else None,
                    str(p.get("reason", "")),
                    image if isinstance(image, str) else None,
                    e.at,
                    e.source,
                )
            elif e.kind in ("confirm", "dismiss"):
                f = flags.get(p.get("flag", -1))
                if f is None or f.status != "open":
                    raise bad(e, f"closes flag {p.get('flag')!r}, which is not an open flag")
                flags[f.seq] = dataclasses.replace(f, status="confirmed" if e.kind == "confirm" else "dismissed")
                if e.kind == "confirm":
                    if not isinstance(p.get("event"), dict):
                        raise bad(e, "holds no event")
                    accepted.append((e.seq, p["event"]))
            elif e.kind == "replace":
                target = p.get("target")
                i = next((k for k, (s, _) in enumerate(accepted) if s == target), None)
                if i is None or not isinstance(p.get("event"), dict):
                    raise bad(e, f"replaces event {target!r}, which is not an accepted event")
                accepted[i] = (accepted[i][0], p["event"])
            elif e.kind == "undo":
                if not accepted or accepted[-1][0] != p.get("target"):
                    raise bad(e, f"undoes event {p.get('target')!r}, which is not the last accepted event")
                accepted.pop()
            else:
                raise bad(e, "has an unknown kind")
        seats = _seats_of(accepted)
        for seq, f in flags.items():
            flags[seq] = _with_event(f, seats)
        return _History(accepted, flags, last)

    def _replay_or_error(self, accepted: list[tuple[int, dict[str, Any]]]) -> tuple[Game | None, str | None]:
        try:
            return _replay(accepted), None
        except _ReplayFailure as e:
            return None, f"the journal {self.path} does not replay: {e}"

    def rebuild(self) -> Game | None:
        """Read the journal again and replay its accepted events (corrections applied) through the
        engine: the exact game it records, or None before the game line. A history that does not
        replay (an event the engine now refuses) is a `JournalError` naming the entry; undo or
        replace that event to go on."""
        self._history = self._read()
        self._game, self._broken = self._replay_or_error(self._history.accepted)
        if self._broken is not None:
            raise JournalError(self._broken)
        return self._game.copy() if self._game is not None else None

    def events(self) -> list[Event]:
        """The accepted events in order, corrections applied."""
        return [ev for _, ev in self.accepted()]

    def accepted(self) -> list[tuple[int, Event]]:
        """The accepted events with the seq each is known by (the seq `replace` names)."""
        seats = _seats_of(self._history.accepted)
        out: list[tuple[int, Event]] = []
        for seq, line in self._history.accepted:
            try:
                out.append((seq, event_from_dict(line, seats if out else None)))
            except RecordError as e:
                raise JournalError(f"the journal {self.path} is damaged: event {seq} does not read ({e})") from None
        return out

    def open_flags(self) -> list[Flag]:
        """The flags the host has not confirmed or dismissed, oldest first."""
        return [f for f in self._history.flags.values() if f.status == "open"]

    def flags(self) -> list[Flag]:
        return list(self._history.flags.values())

    @property
    def game(self) -> Game | None:
        """A copy of the game the journal records (None before the game line)."""
        self._check_intact()
        return self._game.copy() if self._game is not None else None

    def __len__(self) -> int:
        return len(self._history.accepted)

    # ----- writing ---------------------------------------------------------------------
    def _write(self, kind: EntryKind, payload: dict[str, Any], source: str | None) -> tuple[int, str]:
        if source is not None and source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        db = self._db()
        at = self.clock()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                cur = db.execute(
                    "INSERT INTO entries (kind, payload, at, source) VALUES (?, ?, ?, ?)", (kind, text, at, source)
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise self._error(e, "write to") from None
        seq = cur.lastrowid
        assert seq is not None
        self._history.last_seq = seq
        return seq, at

    def _check_intact(self) -> None:
        if self._broken is not None:
            raise JournalError(self._broken + "; undo or replace the event it stops at first")

    def append_event(self, ev: Event, source: str | None = None) -> int:
        """Check `ev` against the recorded game and commit it; return its seq once it is on disk.

        An event the rules refuse raises `IllegalMove` and writes nothing (flag it instead).
        `source` defaults to the event's own.
        """
        self._check_intact()
        line = event_to_dict(ev)
        new = _next_game(self._game, ev)
        seq, _ = self._write("event", line, source if source is not None else ev.source)
        self._history.accepted.append((seq, line))
        self._game = new
        return seq

    def flag(
        self,
        ev: Event | None,
        reason: str,
        image: str | os.PathLike[str] | None = None,
        source: str | None = "camera",
    ) -> int:
        """Hold `ev` (or None: nothing readable) for the host, with `reason` and a picture's path."""
        line = event_to_dict(ev) if ev is not None else None
        picture = os.fspath(image) if image is not None else None
        seq, at = self._write("flag", {"event": line, "reason": reason, "image": picture}, source)
        self._history.flags[seq] = Flag(seq, ev, line, reason, picture, at, source)
        return seq

    def _open_flag(self, flag_seq: int) -> Flag:
        f = self._history.flags.get(flag_seq)
        if f is None:
            raise JournalError(f"entry {flag_seq} of the journal {self.path} is not a flag")
        if f.status != "open":
            raise JournalError(f"flag {flag_seq} is {f.status} already")
        return f

    def confirm(self, flag_seq: int, ev: Event | None = None, source: str | None = "tablet") -> int:
        """The host confirms flag `flag_seq`: its event (or `ev`, the host's edit) is accepted as
        the next event. Checked like `append_event`; returns the seq the event is known by."""
        self._check_intact()
        f = self._open_flag(flag_seq)
        chosen = ev if ev is not None else f.event
        if chosen is None:
            raise JournalError(f"flag {flag_seq} holds no readable event; give the event to accept")
        line = event_to_dict(chosen)
        new = _next_game(self._game, chosen)
        seq, _ = self._write("confirm", {"flag": flag_seq, "event": line}, source)
        self._history.accepted.append((seq, line))
        self._history.flags[flag_seq] = dataclasses.replace(f, status="confirmed")
        self._game = new
        return seq

    def dismiss(self, flag_seq: int, reason: str = "", source: str | None = "tablet") -> int:
        """The host closes flag `flag_seq` with nothing accepted."""
        f = self._open_flag(flag_seq)
        seq, _ = self._write("dismiss", {"flag": flag_seq, "reason": reason}, source)
        self._history.flags[flag_seq] = dataclasses.replace(f, status="dismissed")
        return seq

    def replace(self, target: int, ev: Event, source: str | None = "tablet") -> int:
        """The host replaces accepted event `target` (the seq it is known by) with `ev`, in its place.

        The corrected history must replay through the engine (else `IllegalMove`, nothing written).
        """
        accepted = list(self._history.accepted)
        i = next((k for k, (s, _) in enumerate(accepted) if s == target), None)
        if i is None:
            raise JournalError(f"entry {target} is not an accepted event of the journal {self.path}")
        line = event_to_dict(ev)
        accepted[i] = (target, line)
        game = _replay_checked(accepted)
        seq, _ = self._write("replace", {"target": target, "event": line}, source)
        self._history.accepted = accepted
        self._game, self._broken = game, None
        return seq

    def undo(self, source: str | None = "tablet") -> int:
        """The host removes the last accepted event; the one it removed stays in the trail."""
        accepted = list(self._history.accepted)
        if not accepted:
            raise JournalError(f"the journal {self.path} holds no event to undo")
        target, line = accepted.pop()
        game = _replay_checked(accepted)
        seq, _ = self._write("undo", {"target": target, "event": line}, source)
        self._history.accepted = accepted
        self._game, self._broken = game, None
        return seq

    # ----- export ------------------------------------------------------------------------
    def record_lines(self) -> Iterator[str]:
        """The `.mayi.jsonl` lines of the accepted events (without newlines)."""
        for ev in self.events():
            yield dumps_event(ev)

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Write the game record of the accepted events to `path` (the lines `write_record`
        writes), atomically: a reader sees the old file or the whole new one."""
        out = Path(path)
        text = "".join(line + "\n" for line in self.record_lines())
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, out)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return out


# ----- replaying ---------------------------------------------------------------------------
class _ReplayFailure(Exception):
    pass


def _seats_of(accepted: list[tuple[int, dict[str, Any]]]) -> tuple[str, ...] | None:
    if not accepted:
        return None
    seats = accepted[0][1].get("seats")
    if accepted[0][1].get("type") == "game" and isinstance(seats, list):
        return tuple(str(s) for s in seats)
    return None


def _with_event(f: Flag, seats: tuple[str, ...] | None) -> Flag:
    ev: Event | None = None
    if f.event_line is not None:
        try:
            ev = event_from_dict(f.event_line, None if f.event_line.get("type") == "game" else seats)
        except RecordError:
            ev = None
    return dataclasses.replace(f, event=ev)


def _next_game(game: Game | None, ev: Event) -> Game:
    """The game after `ev`, leaving `game` alone; `IllegalMove` if the rules refuse it."""
    if game is None:
        if not isinstance(ev, GameStart):
            raise IllegalMove("the first event of a game must be its game line")
        return Game(ev)
    new = game.copy()
    new.apply(ev)
    return new


def _replay(accepted: list[tuple[int, dict[str, Any]]]) -> Game | None:
    game: Game | None = None
    seats: tuple[str, ...] | None = None
    for seq, line in accepted:
        try:
            ev = event_from_dict(line, seats)
            if isinstance(ev, GameStart):
                if game is not None:
                    raise IllegalMove("the game line may only be the first line")
                game = Game(ev)
                seats = ev.seats
            elif game is None:
                raise IllegalMove("the first event of a game must be its game line")
            else:
                game.apply(ev)
        except (IllegalMove, RecordError) as e:
            raise _ReplayFailure(f"event {seq} ({line.get('type')}): {e}") from None
    return game


def _replay_checked(accepted: list[tuple[int, dict[str, Any]]]) -> Game | None:
    try:
        return _replay(accepted)
    except _ReplayFailure as e:
        raise IllegalMove(f"after this correction the game no longer replays: {e}") from None
