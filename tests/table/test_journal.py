"""The write-ahead journal: durable settings, rebuild by replay, corrections, flags, export, crashes.

DESIGN.md "Write ahead": every accepted event goes to the SQLite journal (WAL, synchronous=FULL)
before it changes state; the game state can always be rebuilt by replaying the journal; nothing
already recorded is lost.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mayi_table.rules.cards import Card
from mayi_table.rules.engine import Game, IllegalMove
from mayi_table.rules.events import Deal, Discard, Draw, Event, GameStart
from mayi_table.rules.record import replay_lines, result_of, write_record
from mayi_table.rules.simulate import play_game
from mayi_table.table.journal import Journal, JournalError

DEVICE = Path(__file__).resolve().parents[2] / "device"
SEATS = ("A", "B", "C", "D")


def observed_events() -> list[Event]:
    """A short observed game: A and B each draw from the stock and discard."""
    return [
        GameStart("petras", (), SEATS),
        Deal(1, "D", Card("KD"), None),
        Draw("A", "stock"),
        Discard("A", Card("7H"), source="camera"),
        Draw("B", "stock"),
        Discard("B", Card("8H"), source="camera"),
    ]


def played(events: list[Event]) -> Game:
    assert isinstance(events[0], GameStart)
    game = Game(events[0])
    for ev in events[1:]:
        game.apply(ev)
    return game


def fill(path: Path, events: list[Event]) -> list[int]:
    with Journal(path) as j:
        return [j.append_event(ev) for ev in events]


def same_game(a: Game | None, b: Game) -> None:
    assert a is not None
    assert a.state_dict() == b.state_dict()
    assert result_of(a) == result_of(b)
    assert a.accounted() == b.accounted()


# ------------------------------------------------------------------ durability settings


def test_wal_and_synchronous_full_are_set(tmp_path: Path) -> None:
    """DESIGN.md Write ahead: WAL and synchronous=FULL (2), on the journal's connection; WAL is
    also recorded in the file, so any other reader sees it."""
    path = tmp_path / "game.mayi.db"
    with Journal(path) as j:
        assert j.pragmas() == {"journal_mode": "wal", "synchronous": 2}
        j.append_event(observed_events()[0])
        other = sqlite3.connect(path)
        try:
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            other.close()


def test_append_returns_after_the_commit(tmp_path: Path) -> None:
    """DESIGN.md Write ahead: when `append_event` returns, another connection already sees the entry."""
    path = tmp_path / "g.db"
    with Journal(path) as j:
        seq = j.append_event(observed_events()[0])
        other = sqlite3.connect(path)
        try:
            rows = other.execute("SELECT seq, kind FROM entries").fetchall()
        finally:
            other.close()
        assert rows == [(seq, "event")]


# ------------------------------------------------------------------ rebuild


def test_events_survive_closing_and_reopening(tmp_path: Path) -> None:
    """DESIGN.md "What the device does" 5: on restart the device resumes exactly where it was."""
    path = tmp_path / "g.db"
    events = observed_events()
    seqs = fill(path, events)
    assert seqs == sorted(set(seqs))
    with Journal(path) as j:
        assert j.events() == events
        assert [s for s, _ in j.accepted()] == seqs
        assert [e.source for e in j.events()][3] == "camera"
        same_game(j.rebuild(), played(events))
        assert j.open_flags() == []


@pytest.mark.parametrize(("profile", "seed"), [("petras", 3), ("classic", 8)])
def test_rebuild_equals_the_game_played_directly(tmp_path: Path, profile: str, seed: int) -> None:
    """DESIGN.md Principles: the game state can always be rebuilt by replaying the journal. A whole
    simulated game, journaled event by event, rebuilds to the same state and results."""
    run = play_game(profile, 4, seed)
    path = tmp_path / "g.db"
    fill(path, run.events)
    with Journal(path) as j:
        rebuilt = j.rebuild()
        same_game(rebuilt, run.game)
        assert rebuilt is not None and rebuilt.complete and rebuilt.winners == run.game.winners
        same_game(j.game, run.game)


def test_an_empty_journal_rebuilds_to_nothing(tmp_path: Path) -> None:
    with Journal(tmp_path / "g.db") as j:
        assert j.rebuild() is None and j.events() == [] and len(j) == 0


def test_an_illegal_event_is_refused_and_nothing_written(tmp_path: Path) -> None:
    """Write ahead: the journal holds only events the rules accept; a refused one is flagged instead."""
    path = tmp_path / "g.db"
    events = observed_events()
    fill(path, events[:3])
    with Journal(path) as j:
        with pytest.raises(IllegalMove, match="must draw|turn"):
            j.append_event(Draw("C", "stock"))
        with pytest.raises(IllegalMove):
            j.append_event(GameStart("petras", (), SEATS))
        assert len(j.entries()) == 3
    with Journal(tmp_path / "other.db") as j2, pytest.raises(IllegalMove, match="game line"):
        j2.append_event(events[1])


# ------------------------------------------------------------------ corrections


def test_undo_removes_the_last_event_and_keeps_the_trail(tmp_path: Path) -> None:
    """DESIGN.md "What the device does" 4: the host corrects on the tablet; nothing recorded is lost:
    the undone event stays in the audit trail, the corrected history rebuilds."""
    path = tmp_path / "g.db"
    events = observed_events()
    seqs = fill(path, events)
    with Journal(path) as j:
        j.undo()
        assert j.events() == events[:-1]
        same_game(j.rebuild(), played(events[:-1]))
        j.append_event(Discard("B", Card("9C")))
    with Journal(path) as j:
        assert j.events() == [*events[:-1], Discard("B", Card("9C"))]
        kinds = [e.kind for e in j.entries()]
        assert kinds == ["event"] * 6 + ["undo", "event"]
        undo = j.entries()[6]
        assert undo.payload["target"] == seqs[-1] and undo.payload["event"]["card"] == "8H"
        assert j.entries()[5].payload["card"] == "8H"  # the undone event is still there
        state = j.rebuild()
        assert state is not None and state.state_dict()["discard_top"] == "9C"


def test_replace_swaps_an_event_in_its_place(tmp_path: Path) -> None:
    """The host replaces a misread event (the camera saw 7H, it was 9C); later events still apply."""
    path = tmp_path / "g.db"
    events = observed_events()
    seqs = fill(path, events)
    with Journal(path) as j:
        j.replace(seqs[3], Discard("A", Card("9C"), source="correction"))
    with Journal(path) as j:
        fixed = [*events[:3], Discard("A", Card("9C")), *events[4:]]
        assert j.events() == fixed
        same_game(j.rebuild(), played(fixed))
        assert [s for s, _ in j.accepted()] == seqs  # the event keeps its place and its seq
        assert j.entries()[3].payload["card"] == "7H"  # the original stays in the trail
        assert j.entries()[-1].kind == "replace"


def test_a_correction_that_breaks_the_history_is_refused(tmp_path: Path) -> None:
    """A replacement after which the game no longer replays is refused; nothing is written."""
    path = tmp_path / "g.db"
    seqs = fill(path, observed_events())
    with Journal(path) as j:
        with pytest.raises(IllegalMove, match="no longer replays"):
            j.replace(seqs[2], Draw("C", "stock"))
        with pytest.raises(JournalError, match="not an accepted event"):
            j.replace(99, Draw("A", "stock"))
        assert len(j.entries()) == len(seqs)
    with Journal(tmp_path / "empty.db") as j2, pytest.raises(JournalError, match="no event to undo"):
        j2.undo()


def test_entries_are_append_only(tmp_path: Path) -> None:
    """DESIGN.md Clear errors: nothing already recorded is lost or rewritten; the database itself
    refuses updates and deletes."""
    path = tmp_path / "g.db"
    fill(path, observed_events())
    db = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("UPDATE entries SET payload = '{}' WHERE seq = 1")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("DELETE FROM entries")
    finally:
        db.close()
    with Journal(path) as j:
        assert j.events() == observed_events()


# ------------------------------------------------------------------ flags


def test_flags_are_held_for_the_host_and_survive_a_restart(tmp_path: Path) -> None:
    """DESIGN.md "What the device does" 2: an event the engine rejects, or the camera is unsure of,
    is shown with the picture of what the camera saw; the host confirms it or dismisses it."""
    path = tmp_path / "g.db"
    events = observed_events()
    fill(path, events[:3])
    unsure = Discard("A", Card("7H"), source="camera")
    rejected = Discard("C", Card("5S"), source="camera")
    with Journal(path) as j:
        f1 = j.flag(unsure, "the camera is unsure: 7H or 7D?", image=tmp_path / "frame-0001.jpg")
        f2 = j.flag(rejected, "it is A's turn, not C's (petras §04)")
        f3 = j.flag(None, "a card on the pile cannot be read")
        assert [f.seq for f in j.open_flags()] == [f1, f2, f3]
        assert len(j) == 3  # a flag is not an accepted event
    with Journal(path) as j:
        flags = j.open_flags()
        assert [f.event for f in flags] == [unsure, rejected, None]
        assert flags[0].image == str(tmp_path / "frame-0001.jpg") and flags[1].image is None
        assert flags[1].reason.startswith("it is A's turn")
        with pytest.raises(IllegalMove):
            j.confirm(f2)  # still illegal: the flag stays open
        seq = j.confirm(f1)
        j.dismiss(f2, "C only touched the pile")
        with pytest.raises(JournalError, match="confirmed already"):
            j.confirm(f1)
        with pytest.raises(JournalError, match="not a flag"):
            j.dismiss(1)
        with pytest.raises(JournalError, match="no readable event"):
            j.confirm(f3)
        assert [f.seq for f in j.open_flags()] == [f3]
        assert [s for s, _ in j.accepted()][-1] == seq
    with Journal(path) as j:
        assert [f.seq for f in j.open_flags()] == [f3]
        assert {f.seq: f.status for f in j.flags()} == {f1: "confirmed", f2: "dismissed", f3: "open"}
        assert j.events() == events[:4]
        same_game(j.rebuild(), played(events[:4]))
        j.confirm(f3, Draw("B", "stock"))  # the host says what it was
        assert j.open_flags() == []
        assert j.events()[-1] == Draw("B", "stock")


def test_a_confirmed_flag_can_be_replaced_and_undone(tmp_path: Path) -> None:
    """Corrections name an accepted event by the seq that brought it in, a confirm's too."""
    path = tmp_path / "g.db"
    events = observed_events()
    fill(path, events[:3])
    with Journal(path) as j:
        seq = j.confirm(j.flag(Discard("A", Card("7D")), "unsure"))
        j.replace(seq, Discard("A", Card("7H")))
        assert j.events() == events[:4]
        j.undo()
        assert j.events() == events[:3]
    with Journal(path) as j:
        assert j.events() == events[:3]


# ------------------------------------------------------------------ export


def test_export_writes_the_game_record_that_replays(tmp_path: Path) -> None:
    """GAME_RECORD.md: the journal's export is the `.mayi.jsonl` record (the lines write_record
    writes), which `mayi-table replay` checks to the same result."""
    run = play_game("petras", 4, 21)
    path = tmp_path / "g.db"
    fill(path, run.events)
    out = tmp_path / "night.mayi.jsonl"
    with Journal(path) as j:
        assert j.export(out) == out
    direct = tmp_path / "direct.mayi.jsonl"
    write_record(run.events, direct)
    assert out.read_text(encoding="utf-8") == direct.read_text(encoding="utf-8")
    with open(out, encoding="utf-8") as f:
        result, game = replay_lines(f)
    assert result["ok"] and result == result_of(run.game)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_export_follows_the_corrections(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    events = observed_events()
    seqs = fill(path, events)
    with Journal(path) as j:
        j.replace(seqs[3], Discard("A", Card("9C")))
        j.undo()
        j.export(tmp_path / "r.mayi.jsonl")
    text = (tmp_path / "r.mayi.jsonl").read_text(encoding="utf-8")
    result, _ = replay_lines(text.splitlines())
    assert result["ok"] and result["state"]["discard_top"] == "9C" and len(text.splitlines()) == 5


# ------------------------------------------------------------------ errors and crashes


def test_a_garbage_file_is_a_clear_error(tmp_path: Path) -> None:
    """DESIGN.md Clear errors: a corrupt or foreign file gives a JournalError naming it, never a
    bare traceback, and the file is left as it was."""
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(random.Random(1).randbytes(8192))
    before = garbage.read_bytes()
    with pytest.raises(JournalError, match="garbage.db.*not an SQLite database"):
        Journal(garbage)
    assert garbage.read_bytes() == before

    foreign = tmp_path / "foreign.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="foreign.db.*not a May I\\? journal"):
        Journal(foreign)

    good = tmp_path / "good.db"
    fill(good, play_game("petras", 4, 2).events[:200])
    broken = tmp_path / "broken.db"
    data = good.read_bytes()
    broken.write_bytes(data[:100] + random.Random(2).randbytes(len(data) - 100))
    with pytest.raises(JournalError, match="broken.db"):
        Journal(broken).rebuild()

    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal(tmp_path)  # a directory
    with pytest.raises(JournalError, match="missing"):
        Journal(tmp_path / "missing" / "g.db")


CHILD = textwrap.dedent(
    """
    import sys
    from mayi_table.rules.simulate import play_game
    from mayi_table.table.journal import Journal

    path, seed = sys.argv[1], int(sys.argv[2])
    journal = Journal(path)
    for ev in play_game("petras", 4, seed).events:
        seq = journal.append_event(ev)
        print(seq, flush=True)  # acknowledged: committed before it was printed
    """
)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_killed_writer_leaves_a_clean_prefix(tmp_path: Path, seed: int) -> None:
    """DESIGN.md "What the device does" 5: power can fail at any moment. A writer killed with SIGKILL
    at a random point leaves a journal that opens cleanly and holds a prefix of the events, every
    acknowledged one included, none twice."""
    rng = random.Random(seed)
    events = play_game("petras", 4, seed).events
    path = tmp_path / "g.db"
    script = tmp_path / "writer.py"
    script.write_text(CHILD, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(DEVICE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    kill_after = rng.randint(1, 120)
    child = subprocess.Popen(
        [sys.executable, str(script), str(path), str(seed)], stdout=subprocess.PIPE, text=True, env=env
    )
    acked: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            acked.append(int(line))
            if len(acked) >= kill_after:
                break
        child.send_signal(signal.SIGKILL)  # mid-write or between writes
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert len(acked) == kill_after
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
    with Journal(path) as j:
        got = j.events()
        seqs = [s for s, _ in j.accepted()]
        assert len(seqs) == len(set(seqs)) and seqs == sorted(seqs)
        assert len(got) >= len(acked) and set(acked) <= set(seqs)
        assert got == events[: len(got)]
        same_game(j.rebuild(), played(events[: len(got)]))
        j.append_event(events[len(got)])  # and the game goes on
    with Journal(path) as j:
        assert j.events() == events[: len(got) + 1]
