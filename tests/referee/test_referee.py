"""The referee on constructed snapshots: each event kind, claims, flags with pictures, resync, restart."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mayi_table.rules.events import Discard, GameStart, LayOff, Open, RoundEnd
from mayi_table.table.journal import Journal
from mayi_table.table.referee import Referee
from mayi_table.vision.table_reading import SeenCard, SeenMeld, TableSnapshot

SEATS = ("Ann", "Bob", "Cy", "Dee")
START = GameStart("petras", (), SEATS)
IMAGE = np.full((540, 960, 3), 90, np.uint8)
_track = iter(range(1, 10_000))


def card(name: str, x: float = 500, y: float = 270, conf: float = 1.0, track: int | None = None) -> SeenCard:
    return SeenCard(name, conf, (x, y, x + 20, y + 40), (x, y), 2, track if track is not None else next(_track))


def row(*names: str, y: float = 450, conf: float = 1.0) -> SeenMeld:
    return SeenMeld(tuple(card(n, 200 + 12 * i, y, conf) for i, n in enumerate(names)))


class Table:
    """Builds snapshots: seats' rows and a discard pile whose top keeps its track while unchanged."""

    def __init__(self) -> None:
        self.rows: list[list[SeenMeld]] = [[] for _ in SEATS]
        self.top: SeenCard | None = None
        self.t = 0.0

    def discard(self, name: str | None, conf: float = 1.0) -> None:
        self.top = card(name, 500 + (self.t % 7) * 9, 270, conf) if name else None

    def snap(self) -> TableSnapshot:
        self.t += 1.0
        discard = (self.top,) if self.top else ()
        return TableSnapshot(self.t, int(self.t), tuple(tuple(r) for r in self.rows), discard, self.top, (), IMAGE)


def dealt(journal: Journal, faint_below: float = 0.0) -> tuple[Referee, Table]:
    ref = Referee(journal, START, "Dee", faint_below=faint_below)
    table = Table()
    table.discard("3D")
    ref.on_snapshot(table.snap(), table.t)
    assert ref.game.round is not None and ref.game.round.pile == ["3D"]
    return ref, table


def opened_and_round_played(ref: Referee, table: Table) -> None:
    """Ann opens with two groups (7H 7D 7S, QC QD QH) and discards KS; Bob, Cy and Dee draw and discard."""
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    for name in ("KH", "KD", "KC"):
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)


def ann_goes_out(ref: Referee, table: Table) -> None:
    """After `opened_and_round_played`: Ann lays off her last cards but one and goes out discarding JS."""
    table.rows[0] = [row("7H", "7D", "7S", "7C", "7C", "7H", y=440), row("QC", "QD", "QH", "QS", y=470)]
    table.discard("JS")
    ref.on_snapshot(table.snap(), table.t)


def kinds(journal: Journal) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for ev in journal.events()[1:]:
        out.append((type(ev).__name__, getattr(ev, "seat", ""), getattr(ev, "source_pile", "")))
    return out


def test_discard_implies_a_stock_draw(journal: Journal) -> None:
    ref, table = dealt(journal)
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("Discard", "Ann", "")]
    assert ref.game.round is not None and ref.game.round.turn == "Bob"
    assert not ref.flags


def test_take_from_the_pile_seen_by_the_camera(journal: Journal) -> None:
    ref, table = dealt(journal)
    upcard = table.top
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    table.top = upcard  # Bob took KS: the upcard shows again, where it lay
    ref.on_snapshot(table.snap(), table.t + 5)
    table.discard("9C")
    ref.on_snapshot(table.snap(), table.t + 5)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "discard"), ("Discard", "Bob", "")]
    assert not ref.flags


def test_buy_through_the_claim_window(journal: Journal) -> None:
    ref, table = dealt(journal)
    upcard = table.top
    table.discard("KS")
    ref.on_snapshot(table.snap(), 10.0)  # the window on KS opens at 10.0
    ref.on_press("Cy", 10.5)  # Cy claims; Bob (to act) does not take it
    table.top = upcard
    ref.on_snapshot(table.snap(), 11.0)  # the card leaves while the window decides: wait for it
    assert kinds(journal)[-1] == ("Discard", "Ann", "")
    ref.tick(13.5)  # the window closes: Cy buys
    assert ("Buy", "Cy", "") in kinds(journal)
    r = ref.game.round
    assert r is not None and r.counts["Cy"] == 12 and r.pile == ["3D"] and r.turn == "Bob"
    assert not ref.flags


def test_open_and_layoff(journal: Journal) -> None:
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert [k[0] for k in kinds(journal)[-3:]] == ["Draw", "Open", "Discard"]
    # round about to Ann again: Bob, Cy and Dee discard, then Ann lays off 7C onto her first meld
    for name in ("5C", "6C", "8C"):
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
    table.rows[0] = [row("7H", "7D", "7S", "7C", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("2S")
    ref.on_snapshot(table.snap(), table.t)
    events = journal.events()
    assert type(events[-2]).__name__ == "LayOff" and events[-2].meld == 0 and events[-2].cards == ("7C",)  # type: ignore[union-attr]
    assert not ref.flags


def test_a_card_read_late_in_the_turn_a_seat_opened_is_part_of_its_open(journal: Journal) -> None:
    """petras §04: no lay-off on the turn one opens. Ann lays 7H 7D 7S 7C and QC QD QH QS; the 7C
    and the QS are first read a snapshot late, with her discard (petras film 2000 round 4: a QS of
    Dee's QS QH QH QC). They were laid with the open, so the open holds them; a lay-off on a later
    turn stays one."""
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    ref.on_snapshot(table.snap(), table.t)
    assert [k[0] for k in kinds(journal)[-2:]] == ["Draw", "Open"]
    table.rows[0] = [row("7H", "7D", "7S", "7C", y=440), row("QC", "QD", "QH", "QS", y=470)]
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert [k[0] for k in kinds(journal)[-3:]] == ["Draw", "Open", "Discard"]
    opening = journal.events()[-2]
    assert isinstance(opening, Open) and opening.melds == (("7H", "7D", "7S", "7C"), ("QC", "QD", "QH", "QS"))
    assert not ref.flags
    for name in ("5C", "6C", "8C"):  # Bob, Cy and Dee draw and discard
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
    table.rows[0] = [row("7H", "7D", "7S", "7C", "7H", y=440), row("QC", "QD", "QH", "QS", y=470)]
    table.discard("2S")
    ref.on_snapshot(table.snap(), table.t)
    lay = journal.events()[-2]
    assert isinstance(lay, LayOff) and lay.meld == 0 and lay.cards == ("7H",)
    assert not ref.flags


def test_rejected_event_is_flagged_with_a_picture_and_not_applied(journal: Journal) -> None:
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S")]  # round 1 needs two groups: one is refused
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    flags = journal.open_flags()
    assert len(flags) == 1 and "two groups" in flags[0].reason and flags[0].event is not None
    assert flags[0].image is not None and Path(flags[0].image).read_bytes()[:2] == b"\xff\xd8"  # a JPEG
    r = ref.game.round
    assert r is not None and not r.table and r.turn == "Bob"  # the discard still went through
    # resync: the refused row stays on the table; the next snapshots do not flag it again
    table.discard("9C")
    ref.on_snapshot(table.snap(), table.t)
    assert len(journal.open_flags()) == 1 and kinds(journal)[-1] == ("Discard", "Bob", "")


def test_unsure_reading_is_flagged_not_applied(journal: Journal) -> None:
    ref, table = dealt(journal)
    table.discard("KS", conf=0.2)
    ref.on_snapshot(table.snap(), table.t)
    flags = journal.open_flags()
    assert any("unsure" in f.reason and "KS" in f.reason for f in flags)
    assert ref.game.round is not None and ref.game.round.pile == ["3D"]
    table.discard("KS")  # the same card read surely on the next snapshot: not flagged again, not applied
    assert ref.last_picture is not None


def test_unexplained_cards_are_flagged_once(journal: Journal) -> None:
    ref, table = dealt(journal)
    table.rows[2] = [row("4H", "4D", "4S", y=60)]  # Cy's zone, but it is Ann's turn
    ref.on_snapshot(table.snap(), table.t)
    assert len(journal.open_flags()) == 1 and "no move explains" in journal.open_flags()[0].reason
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert len(journal.open_flags()) == 1 and kinds(journal)[-1] == ("Discard", "Ann", "")


def test_restart_from_the_journal_gives_the_same_state(journal: Journal, tmp_path: Path) -> None:
    ref, table = dealt(journal)
    for name in ("KS", "9C", "4D"):
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
    journal.close()
    again = Journal(tmp_path / "j.sqlite3")
    rebuilt = Referee(again, START, "Dee")
    assert rebuilt.game.state_dict() == ref.game.state_dict()
    table.discard("5H")
    rebuilt.on_snapshot(table.snap(), table.t)
    assert kinds(again)[-1] == ("Discard", "Dee", "")
    with pytest.raises(ValueError, match="not this"):
        Referee(again, GameStart("classic", (), SEATS), "Dee")


def test_discard_onto_an_identical_card(journal: Journal) -> None:
    """Another card of the top card's name (the reader gave it a new track) is a discard."""
    ref, table = dealt(journal)
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    table.discard("KS")  # Bob drew from the stock and threw the other KS onto it
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
    assert ref.game.round is not None and ref.game.round.pile == ["3D", "KS", "KS"]
    assert not ref.flags


def test_discard_of_the_name_under_the_top_after_a_take(journal: Journal) -> None:
    """The seat that took the top card discards a card named like the one under it: a discard, not a
    second take (petras seed 11, round 1)."""
    ref, table = dealt(journal)
    jd = card("JD", 520, 270)
    for c in (card("7C", 500, 270), jd, card("6D", 540, 270)):  # Ann, Bob, Cy
        table.top = c
        ref.on_snapshot(table.snap(), table.t)
    ref.on_press("Dee", table.t + 0.5)  # Dee takes 6D as its draw
    assert kinds(journal)[-1] == ("Draw", "Dee", "discard")
    table.top = jd
    ref.on_snapshot(table.snap(), table.t + 1)
    seven = card("7C", 505, 272)
    snap = TableSnapshot(table.t + 2, 99, tuple(tuple(r) for r in table.rows), (jd, seven), seven, (), IMAGE)
    ref.on_snapshot(snap, table.t + 2)
    assert kinds(journal)[-1] == ("Discard", "Dee", "")
    assert ref.game.round is not None and ref.game.round.pile[-2:] == ["JD", "7C"]
    assert not ref.flags


def test_joker_laid_off_below_a_run_takes_the_low_end() -> None:
    """Which joker of the row is the new one is unknown; where the meld's block lies says its role
    (classic seed 8, round 2: JK onto 9S JK(10S) JS QS KS is the 8S)."""
    from mayi_table.rules.melds import read_meld
    from mayi_table.rules.profiles import make_profile
    from mayi_table.table.referee import _layoff_cards

    meld = read_meld(["9S", "JK:10S", "JS", "QS", "KS"], make_profile("classic"), kind="run", run_min=4)[0]
    add = [card("JK")]
    for names in (("JK", "9S", "JK", "JS", "QS", "KS"), ("KS", "QS", "JS", "JK", "9S", "JK")):
        r = SeenMeld(tuple(card(n) for n in names))
        assert _layoff_cards(meld, r, add) == ("JK:8S",)
    high = SeenMeld(tuple(card(n) for n in ("9S", "JK", "JS", "QS", "KS", "JK")))
    assert _layoff_cards(meld, high, add) == ("JK:AS",)


def test_an_open_refused_for_a_misread_card_is_taken_when_read_right(journal: Journal) -> None:
    """petras §03: the contract is laid whole. A QH read as 5H makes the engine refuse the open; when
    the next snapshot reads it right, the open is taken with both rows (the first row, set aside
    after the refusal, included)."""
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "5H", y=470)]
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1 and "the rules refuse it" in ref.flags[0].reason
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1
    r = ref.game.round
    assert r is not None and "Ann" in r.opened and len(r.table) == 2
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "") and len(ref.flags) == 1


def test_a_misread_meld_card_is_flagged_once_and_play_goes_on(journal: Journal) -> None:
    """A melded 7S read as 5S: the lay-off it looks like is flagged (once, not at every snapshot), and
    the next seats' draws and discards are journaled meanwhile (referee: flag, never guess)."""
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert [k[0] for k in kinds(journal)[-3:]] == ["Draw", "Open", "Discard"] and not ref.flags
    table.rows[0] = [row("7H", "7D", "5S", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("9C")  # Bob's discard, seen in the same snapshot as the misreading
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1 and "no longer shows 7S" in ref.flags[0].reason
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
    for seat, name in (("Cy", "4H"), ("Dee", "JD")):
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
        assert kinds(journal)[-1] == ("Discard", seat, "")
    assert len(ref.flags) == 1
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]  # read right again
    table.discard("2C")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "") and len(ref.flags) == 1


def test_lost_meld_and_cleared_table_are_flagged_and_followed_by_flags(journal: Journal) -> None:
    """The referee notices when its journal no longer explains the table: melds gone (flagged once),
    the table cleared while the round is unfinished, and every deal after that until a resync."""
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert [k[0] for k in kinds(journal)[-3:]] == ["Draw", "Open", "Discard"] and not ref.flags
    table.rows[0] = [row("QC", "QD", "QH", y=470)]
    ref.on_snapshot(table.snap(), table.t)
    ref.on_snapshot(table.snap(), table.t)  # the same reading again: not flagged twice
    assert len(ref.flags) == 1 and "no longer shows" in ref.flags[0].reason
    table.rows[0] = []
    table.discard(None)
    ref.on_snapshot(table.snap(), table.t)  # cleared while round 1 is in play
    assert len(ref.flags) == 2 and "cleared" in ref.flags[1].reason and ref.lost
    events = len(journal.events())
    table.discard("5H")  # the next deal's upcard
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 3 and "new deal" in ref.flags[2].reason
    assert len(journal.events()) == events  # nothing is journaled while the referee is lost
    ref.resync()
    assert not ref.lost


def test_melds_without_a_seen_deal_are_flagged(journal: Journal) -> None:
    ref = Referee(journal, START, "Dee")
    table = Table()
    table.rows[1] = [row("7H", "7D", "7S", y=300)]
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1 and "no deal of round 1" in ref.flags[0].reason
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1


def test_the_name_under_the_top_discarded_onto_the_pile_is_no_take(journal: Journal) -> None:
    """Bob drew from the stock (unseen) and throws a 9C onto KS while the 9C under KS still shows:
    a discard, not a take of KS."""
    ref, table = dealt(journal)
    nine = card("9C", 480, 260)
    table.top = nine
    ref.on_snapshot(table.snap(), table.t)  # Ann discards 9C
    ks = card("KS", 490, 262)
    table.top = ks
    ref.on_snapshot(table.snap(), table.t)  # Bob discards KS
    other = card("9C", 500, 268)
    corner = SeenCard("KS", 1.0, (492.0, 264.0, 498.0, 274.0), (495.0, 269.0), 1, ks.track + 10_000)
    snap = TableSnapshot(table.t + 1, 99, tuple(tuple(r) for r in table.rows), (nine, corner, other), other, (), IMAGE)
    ref.on_snapshot(snap, table.t + 1)  # Cy: the KS under the new 9C shows one corner (a new track)
    assert kinds(journal)[-2:] == [("Draw", "Cy", "stock"), ("Discard", "Cy", "")]
    assert not ref.flags


def _one_corner(name: str, x: float, conf: float) -> SeenCard:
    return SeenCard(name, conf, (x, 300.0, x + 6, 310.0), (x + 3, 305.0), 1, next(_track))


@pytest.mark.parametrize(
    ("misread", "sure"), [(("JK", 0.5), ("7C", 1.0)), (("8C", 0.72), ("3H", 0.88)), (("JK", 0.85), ("7C", 0.85))]
)
def test_an_unsure_lone_corner_on_the_pile_beside_its_top_is_no_discard(
    journal: Journal, misread: tuple[str, float], sure: tuple[str, float]
) -> None:
    """Ann discards 5H; while Bob lays nothing, a card under it (or its own corner) reads JK 0.5 by one
    corner and the reader makes it the top. The 5H still lies where it was: no discard (petras film
    2000, round 1); so for an unsure reading of another name (an 8C 0.72; a 3D 0.72 in petras film
    2000, round 2). A fairly sure one there (a 3H 0.88, classic film 2001, round 7) is a discard whose
    other index was missed."""
    ref, table = dealt(journal)
    five = card("5H", 480, 260)
    table.top = five
    ref.on_snapshot(table.snap(), table.t)
    phantom = _one_corner(misread[0], 530, misread[1])
    snap = TableSnapshot(table.t + 1, 99, tuple(tuple(r) for r in table.rows), (five, phantom), phantom, (), IMAGE)
    ref.on_snapshot(snap, table.t + 1)
    assert kinds(journal)[-1] == ("Discard", "Ann", "")
    thrown = _one_corner(sure[0], 530, sure[1])
    snap = TableSnapshot(table.t + 2, 100, tuple(tuple(r) for r in table.rows), (five, thrown), thrown, (), IMAGE)
    ref.on_snapshot(snap, table.t + 2)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]


def test_two_unsure_corners_reading_one_new_name_on_the_pile_are_a_discard(journal: Journal) -> None:
    """Bob throws an AC on Ann's 5H; its two indices, not paired, read AC 0.86 and AC 0.7 by one
    corner each, and the 5H still shows: the readings agree, so it is Bob's discard (classic film
    2001, round 3)."""
    ref, table = dealt(journal)
    five = card("5H", 480, 260)
    table.top = five
    ref.on_snapshot(table.snap(), table.t)
    upper, lower = _one_corner("AC", 530, 0.86), _one_corner("AC", 570, 0.7)
    snap = TableSnapshot(table.t + 1, 99, tuple(tuple(r) for r in table.rows), (five, upper, lower), lower, (), IMAGE)
    ref.on_snapshot(snap, table.t + 1)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
    last = journal.events()[-1]
    assert isinstance(last, Discard) and last.card == "AC"


@pytest.mark.parametrize(
    ("misread", "pair", "pressed"),
    [
        (("JK", 0.62), False, False),
        (("8C", 0.72), False, False),
        (("JK", 0.59), True, False),
        (("JK", 0.59), True, True),
    ],
)
def test_a_take_is_seen_when_the_card_under_shows_again_beside_a_misread_corner(
    journal: Journal, misread: tuple[str, float], pair: bool, pressed: bool
) -> None:
    """Cy takes Bob's JH (by hand, or by his button); the 10S under it shows again where it lay, and a
    covered card's corner reads JK 0.62 (or 8C 0.72), or its marks read as a JK pair 0.59, which the
    reader makes the top: a take, not a discard (petras film 2000, round 2)."""
    ref, table = dealt(journal)
    ten = card("10S", 480, 260)
    table.top = ten
    ref.on_snapshot(table.snap(), table.t)  # Ann discards 10S
    table.top = card("JH", 490, 262)
    ref.on_snapshot(table.snap(), table.t)  # Bob discards JH
    if pressed:
        ref.on_press("Cy", table.t + 0.5)
    phantom = card(misread[0], 540, 300, conf=misread[1]) if pair else _one_corner(misread[0], 540, misread[1])
    snap = TableSnapshot(table.t + 1, 99, tuple(tuple(r) for r in table.rows), (ten, phantom), phantom, (), IMAGE)
    ref.on_snapshot(snap, table.t + 1)  # Cy took JH
    assert kinds(journal)[-1] == ("Draw", "Cy", "discard")
    assert not ref.flags


def test_long_press_after_the_last_round_is_scored_flags_nothing(journal: Journal) -> None:
    """The seat that went out holds its button after the game's last round was scored already."""
    from mayi_table.rules.simulate import play_game

    run = play_game("petras", 4, 5, seats=SEATS)
    for ev in run.events:
        journal.append_event(ev)
    ref = Referee(journal, START, "Dee")
    assert ref.game.complete
    ref.on_snapshot(Table().snap(), 1.0)
    ref.on_press("Ann", 2.0, long=True)
    assert not ref.flags


def test_another_card_named_like_the_one_under_the_top_is_a_discard(journal: Journal) -> None:
    """Bob drew from the stock (unseen) and threw a 3D onto KS, which hides KS and the upcard 3D: the
    3D on top lies elsewhere than the upcard did, so it is a discard, not a take of KS (classic seed
    1000, round 3)."""
    ref, table = dealt(journal)
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    table.top = card("3D", 530, 300)
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
    assert not ref.flags


@pytest.mark.parametrize(
    "turn, moves",
    [(-1.95, [("Draw", "Cy", "stock"), ("Discard", "Cy", "")]), (4.4, [("Draw", "Cy", "discard")])],
)
def test_a_card_named_like_the_one_under_the_top_turned_otherwise_is_a_discard(
    journal: Journal, turn: float, moves: list[tuple[str, str, str]]
) -> None:
    """Ann's QH lies turned 4.9 degrees; Bob throws 9D on it; Cy draws from the stock and throws another
    QH that lands 7 px from where the first lay but turned -2.0 degrees: a card left lying keeps its
    turn, so this QH is Cy's discard, not the first QH uncovered by a take of 9D (classic film 2000,
    round 3). The first QH shown again as it lay (4.4 degrees) is a take."""
    ref, table = dealt(journal)
    table.top = replace(card("QH", 1112, 492), box=(1112, 492, 1192, 586), orientation=4.86)
    ref.on_snapshot(table.snap(), table.t)  # Ann discards QH
    table.top = card("9D", 1100, 480)
    ref.on_snapshot(table.snap(), table.t)  # Bob discards 9D
    table.top = replace(card("QH", 1119, 486), box=(1119, 486, 1189, 589), orientation=turn)
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-len(moves) :] == moves and not ref.flags


def test_a_card_laid_off_where_a_flagged_phantom_was_named_alike_is_a_move(journal: Journal) -> None:
    """A JK misread beside Ann's melds is flagged and set aside (petras §04 lay-offs stand on it): while
    it shows in its place it stays aside, even under a new track; the real JK Ann lays off on her
    meld later is her lay-off, not the phantom come back."""
    ref, table = dealt(journal)
    table.rows[0] = [row("7H", "7D", "7S", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert [k[0] for k in kinds(journal)[-3:]] == ["Draw", "Open", "Discard"] and not ref.flags
    melds = list(table.rows[0])
    table.rows[0] = melds + [SeenMeld((card("JK", 700, 380),))]  # Bob's turn: a phantom by Ann's melds
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1 and "no move explains: JK" in ref.flags[0].reason
    table.rows[0] = melds + [SeenMeld((card("JK", 703, 382),))]  # read again, a new track, same place
    table.discard("9C")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Bob", "") and len(ref.flags) == 1
    for seat, name in (("Cy", "4H"), ("Dee", "JD")):
        table.rows[0] = melds  # the phantom is gone
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
        assert kinds(journal)[-1] == ("Discard", seat, "")
    table.rows[0] = [row("7H", "7D", "7S", "JK", y=440), melds[1]]
    table.discard("2C")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-3:] == [("Draw", "Ann", "stock"), ("LayOff", "Ann", ""), ("Discard", "Ann", "")]
    assert len(ref.flags) == 1


def test_a_misread_meld_card_at_round_end_is_not_counted_in_a_hand(journal: Journal) -> None:
    """petras §06 scores the cards left in hand: Ann went out, and at the spread her meld row reads
    QC QD 5H QS for QC QD QH QS. The 5H lies in the meld's row where its QH is missing, so it is the
    QH misread, not a card of Ann's hand; the round is scored with the hands the other rows show."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    ann_goes_out(ref, table)
    r = ref.game.round
    assert r is not None and r.over and r.went_out == "Ann" and not ref.flags
    hands = {
        "Bob": ("2C", "2D", "2H", "2S", "3C", "3D", "3H", "3S", "4C", "4D"),
        "Cy": ("4H", "4S", "5C", "5D", "5S", "6C", "6D", "6H", "6S", "8C"),
        "Dee": ("8D", "8H", "8S", "9C", "9D", "9H", "9S", "10C", "10D", "10H"),
    }
    table.rows[0] = [row("7H", "7D", "7S", "7C", "7C", "7H", y=440), row("QC", "QD", "5H", "QS", y=470)]
    for i, seat in ((1, "Bob"), (2, "Cy"), (3, "Dee")):
        table.rows[i] = [row(*hands[seat], y=100 + 50 * i)]
    ref.on_snapshot(table.snap(), table.t)
    last = journal.events()[-1]
    assert isinstance(last, RoundEnd) and not ref.flags
    assert last.hands["Ann"] == () and sorted(last.hands["Cy"]) == sorted(hands["Cy"])


def test_a_lay_off_seen_while_its_meld_is_misread_is_taken_when_the_meld_reads_right(journal: Journal) -> None:
    """petras §04: Ann lays a 7C off on her 7s while the camera reads her 7S as 5S. The lay-off waits
    (flagged once, as the meld's lost card); the meld reads right before she discards, and the lay-off
    is hers."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    queens = table.rows[0][1]
    table.rows[0] = [row("7H", "7D", "5S", "7C", y=440), queens]
    ref.on_snapshot(table.snap(), table.t)
    assert len(ref.flags) == 1 and "no longer shows 7S" in ref.flags[0].reason
    assert kinds(journal)[-1] == ("Discard", "Dee", "")
    table.rows[0] = [row("7H", "7D", "7S", "7C", y=440), queens]
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("LayOff", "Ann", "")]
    table.discard("JS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "") and len(ref.flags) == 1


def round_two(journal: Journal) -> tuple[Referee, Table]:
    """Round 1 played out (Ann goes out, the others' hands spread) and round 2 dealt (1 group + 1
    run; Ann deals, so Bob plays first)."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    ann_goes_out(ref, table)
    hands = {
        "Bob": ("2C", "2D", "2H", "2S", "3C", "3D", "3H", "3S", "4C", "4D"),
        "Cy": ("4H", "4S", "5C", "5D", "5S", "6C", "6D", "6H", "6S", "8C"),
        "Dee": ("8D", "8H", "8S", "9C", "9D", "9H", "9S", "10C", "10D", "10H"),
    }
    for i, seat in ((1, "Bob"), (2, "Cy"), (3, "Dee")):
        table.rows[i] = [row(*hands[seat], y=100 + 50 * i)]
    ref.on_snapshot(table.snap(), table.t)
    assert isinstance(journal.events()[-1], RoundEnd)
    table.rows = [[] for _ in SEATS]
    table.discard("KD")
    ref.on_snapshot(table.snap(), table.t)
    r = ref.game.round
    assert r is not None and r.number == 2 and r.turn == "Bob"
    return ref, table


def test_a_reading_inside_a_runs_row_is_no_lay_off(journal: Journal) -> None:
    """A run grows at either end only (petras §04, RULES "either end of a run"; jokers never move).
    Bob's run 2S 3S 4S JK 6S reads an AC 0.51 between its JK and 6S while Cy draws (petras film 2001
    round 2, where it was renamed AS and laid off): a mark of the run misread, flagged as unexplained
    and never laid off. An AS Bob lays beyond its low end later is a lay-off."""
    ref, table = round_two(journal)
    table.rows[1] = [row("2S", "3S", "4S", "JK", "6S", y=140), row("9C", "9D", "9H", y=170)]
    table.discard("KC")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Open", "Bob", ""), ("Discard", "Bob", "")]
    run, group = table.rows[1]
    inside = card("AC", 200 + 12 * 3.5, 140, conf=0.51)
    table.rows[1] = [SeenMeld((*run.cards[:4], inside, run.cards[4])), group]
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Bob", "")
    assert any("no move explains" in f.reason and "AC" in f.reason for f in ref.flags)
    table.rows[1] = [run, group]
    for name in ("QH", "QS", "QD"):  # Cy, Dee and Ann draw and discard
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
    table.rows[1] = [SeenMeld((card("AS", 200 - 12, 140), *run.cards)), group]
    table.discard("JD")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-3:] == [("Draw", "Bob", "stock"), ("LayOff", "Bob", ""), ("Discard", "Bob", "")]


@pytest.mark.parametrize("thrown_name", ["5C", "KS"])
def test_a_card_thrown_on_the_top_that_the_reader_took_for_a_card_under_it_is_the_discard(
    journal: Journal, thrown_name: str
) -> None:
    """Ann discards a 4C; Bob throws a card on it, which changes the 4C's pixels, so the reader gives
    the 4C a new track (as for another 4C put there) and makes it the top, the thrown card's sure lone
    corner being taken for a card under the pile (petras film 2000 round 4: a 5C on a 4C; classic film
    2000 round 3: a JS on a KD, a JS lying deeper in the pile). The thrown card is Bob's discard, not
    another 4C, and it stays the top while the reader shows the 4C; a take of it uncovers the 4C."""
    ref, table = dealt(journal)
    if thrown_name == "KS":  # a card of the thrown card's name deeper in the pile
        table.discard("KS")
        ref.on_snapshot(table.snap(), table.t)
        table.discard("9D")
        ref.on_snapshot(table.snap(), table.t)
        table.discard("9H")
        ref.on_snapshot(table.snap(), table.t)
        table.discard("9S")
        ref.on_snapshot(table.snap(), table.t)  # Ann again
    four = card("4C", 480, 260)
    table.top = four
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "")
    rows = tuple(tuple(r) for r in table.rows)
    changed, thrown = card("4C", 480, 260), _one_corner(thrown_name, 540, 0.98)  # a new track for the 4C
    for k in range(2):  # the reader shows it so while nothing moves
        ref.on_snapshot(
            TableSnapshot(table.t + 1 + k, 99 + k, rows, (changed, thrown), changed, (), IMAGE), table.t + 1
        )
        assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
        last = journal.events()[-1]
        assert isinstance(last, Discard) and last.card == thrown_name
    ref.on_snapshot(TableSnapshot(table.t + 3, 101, rows, (changed,), changed, (), IMAGE), table.t + 3)
    assert kinds(journal)[-1] == ("Draw", "Cy", "discard")
    assert not ref.flags


@pytest.mark.parametrize(
    ("moved", "phantom", "lone", "corner", "sure", "discarded", "shown"),
    [
        (False, False, False, "6H", 0.87, "6H", False),
        (True, False, False, "6H", 0.87, "4D", False),
        (True, False, False, "6H", 0.99, "4D", False),
        (False, True, False, "6H", 0.87, "4D", False),
        (False, False, True, "6H", 0.87, "4D", False),
        (False, False, False, "3D", 0.87, "4D", False),
        (False, False, False, "QH", 0.99, "4D", True),
    ],
)
def test_a_fairly_sure_corner_on_a_top_that_did_not_move_is_the_card_thrown_on_it(
    journal: Journal, moved: bool, phantom: bool, lone: bool, corner: str, sure: float, discarded: str, shown: bool
) -> None:
    """Bob throws a 6H on the 4D on top (Dee, in the film); its upper index is lost in a box over the indices stacked
    under it (read JK 0.78), its lower one reads 6H 0.87, and the 4D, its pixels changed, gets a new
    track (petras film 2000 round 6). The 4D lies where and as it lay, so it is the same card and the
    6H is the discard. A 4D that moved may be another 4D thrown there; a joker's reading alone is no
    card thrown; a 4D seen by one corner does not tell its turn, so it may be another 4D too (an AC
    thrown on an AC, petras film 2002 round 2); a corner naming the 3D under the 4D is the 3D's index
    seen again, not a card thrown (a 9D 0.55 beside that second AC). A 4D that moved is another 4D
    however sure the new corner beside it (a QD 0.99 beside a second QH, petras film 2001 round 5). A
    corner read where the last snapshot read one of its name is a covered card's index, its pixels
    changed by the throw: the top is another 4D thrown where the first lay (a QH's index beside a second
    8C thrown 3 degrees from the first, classic film 1001 round 7)."""
    ref, table = dealt(journal)
    four = replace(card("4D", 480, 260), box=(1132, 478, 1197, 584), orientation=-5.1)
    if lone:
        four = replace(four, box=(1132, 478, 1143, 496), corners=1, orientation=None)
    table.top = four
    peeking = _one_corner(corner, 1169, sure)
    if shown:  # the covered card's index shows beside the first 4D
        ref.on_snapshot(replace(table.snap(), discard=(four, peeking)), table.t)
    else:
        ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "")
    again = replace(four, track=next(_track))
    if moved:
        again = replace(again, box=(1140, 470, 1205, 576), orientation=2.0)
    stacked = _one_corner("JK", 1112, 0.78)
    thrown = [stacked] if phantom else [stacked, replace(peeking, track=next(_track))]
    rows = tuple(tuple(r) for r in table.rows)
    ref.on_snapshot(TableSnapshot(table.t + 1, 99, rows, (again, *thrown), again, (), IMAGE), table.t + 1)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
    last = journal.events()[-1]
    assert isinstance(last, Discard) and last.card == discarded


def test_a_joker_laid_below_a_runs_joker_is_a_lay_off_whichever_reads_surer(journal: Journal) -> None:
    """petras §04: Bob lays a JK below his run 3C JK 5C 6C (petras film 2002 round 6: JK as the 2C).
    The run's own JK reads less sure than the new one, so the row's inner JK is the one beyond the
    meld; two jokers may swap roles, so it is no misread mark inside the run but the lay-off."""
    ref, table = round_two(journal)
    table.rows[1] = [row("3C", "JK", "5C", "6C", y=140), row("9C", "9D", "9H", y=170)]
    table.discard("KC")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Open", "Bob", ""), ("Discard", "Bob", "")]
    run, group = table.rows[1]
    for name in ("QH", "QS", "QD"):  # Cy, Dee and Ann draw and discard
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
    inner = replace(run.cards[1], confidence=0.8)
    table.rows[1] = [SeenMeld((card("JK", 200 - 12, 140), run.cards[0], inner, *run.cards[2:])), group]
    table.discard("JD")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-3:] == [("Draw", "Bob", "stock"), ("LayOff", "Bob", ""), ("Discard", "Bob", "")]
    lay = journal.events()[-2]
    assert isinstance(lay, LayOff) and lay.cards == ("JK:2C",)
    assert not ref.flags


@pytest.mark.parametrize(("alternatives", "beside", "discarded"), [((("9H", 0.1),), None, "9H"), ((), "9C", "9C")])
def test_a_discard_the_rules_refuse_is_read_as_another_card_that_came_with_it(
    journal: Journal, alternatives: tuple[tuple[str, float], ...], beside: str | None, discarded: str
) -> None:
    """petras §05 (observed: a card whose every copy lies face up cannot be thrown): Bob's card is read
    7H 0.87 by one index with both 7H already on Ann's melds. It is his discard of its next reading, else
    of the card read new beside it, faint or not (classic film 2000 round 3: a 9C whose upper index read
    JK 0.87 with the joker in play, its lower one 9C 0.49), flagged; refused, Cy's discard would be given
    to Bob."""
    ref, table = dealt(journal, faint_below=0.5)  # the 9C 0.49 is a faint reading
    opened_and_round_played(ref, table)
    table.rows[0] = [row("7H", "7D", "7S", "7H", y=440), row("QC", "QD", "QH", y=470)]
    table.discard("9S")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-3:] == [("Draw", "Ann", "stock"), ("LayOff", "Ann", ""), ("Discard", "Ann", "")]
    misread = replace(_one_corner("7H", 540, 0.87), alternatives=alternatives)
    pile = (misread, _one_corner(beside, 560, 0.49)) if beside else (misread,)
    rows = tuple(tuple(r) for r in table.rows)
    for k in range(2):  # the reader shows it so while nothing moves
        ref.on_snapshot(TableSnapshot(table.t + 1 + k, 99 + k, rows, pile, misread, (), IMAGE), table.t + 1 + k)
        assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
        last = journal.events()[-1]
        assert isinstance(last, Discard) and last.card == discarded
    assert [f.event for f in ref.flags] == [None] and discarded in ref.flags[0].reason
    table.t += 3
    table.discard("5D")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Cy", "stock"), ("Discard", "Cy", "")]


def test_a_card_thrown_over_one_index_of_the_top_is_the_discard_and_stays_the_top(journal: Journal) -> None:
    """petras §05: Bob throws a 10S on Ann's KH and covers its other index: the reader sees the KH by the
    index it led with, where it lay, on a new track, and the 10S by one corner, 0.61, beside it (classic
    film 2001 round 7). The 10S is Bob's discard, not a second KH. Cy's AS bought off the pile, the
    reader again takes the KH's index, on its track from before the 10S came, for the top, with the 10S
    still read beside it on a new track: the 10S still lies there; no one took it or threw a KH."""
    ref, table = dealt(journal)
    kh = replace(card("KH", 1113, 490), box=(1113, 490, 1203, 604), anchor=(1136, 504), orientation=-9.7)
    table.top = kh
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("Discard", "Ann", "")]
    index = replace(kh, box=(1130, 493, 1143, 516), anchor=(1136.2, 504.6), corners=1, orientation=None)
    index = replace(index, track=next(_track))
    ten = replace(_one_corner("10S", 1170, 0.61), box=(1168, 560, 1180, 580), anchor=(1174, 570))
    rows = tuple(tuple(r) for r in table.rows)
    ref.on_snapshot(TableSnapshot(10.0, 99, rows, (index, ten), index, (), IMAGE), 10.0)
    assert kinds(journal)[-2:] == [("Draw", "Bob", "stock"), ("Discard", "Bob", "")]
    assert journal.events()[-1] == Discard("Bob", "10S", source="camera")
    ace = replace(card("AS", 1120, 480), box=(1120, 480, 1200, 590), orientation=3.0)
    ref.on_snapshot(TableSnapshot(20.0, 100, rows, (ace,), ace, (), IMAGE), 20.0)  # Cy's AS: a window opens
    assert journal.events()[-1] == Discard("Cy", "AS", source="camera")
    ref.on_press("Ann", 20.5)  # Ann claims the AS; Dee, to act, does not take it
    ref.tick(23.5)  # while arms cover the pile
    assert kinds(journal)[-1] == ("Buy", "Ann", "")
    again = replace(ten, track=next(_track), confidence=0.67)
    for k in range(2):
        ref.on_snapshot(TableSnapshot(24.0 + k, 102 + k, rows, (index, again), index, (), IMAGE), 24.0 + k)
        assert kinds(journal)[-1] == ("Buy", "Ann", "")  # nothing taken, nothing thrown
    nine = replace(card("9D", 1115, 485), box=(1115, 485, 1195, 592), orientation=1.0)
    ref.on_snapshot(TableSnapshot(26.0, 104, rows, (nine, again), nine, (), IMAGE), 26.0)
    assert kinds(journal)[-2:] == [("Draw", "Dee", "stock"), ("Discard", "Dee", "")]
    r = ref.game.round
    assert r is not None and r.pile == ["3D", "KH", "10S", "9D"]
    assert not ref.flags


def test_a_lay_off_on_one_meld_while_another_meld_of_the_seat_misreads_is_taken(journal: Journal) -> None:
    """petras §04: Ann lays a 7C off on her 7s while her queens' QH goes unread (classic film 2000 round
    6: a 3S laid off on a run while the joker of the seat's other run read nothing). A card misread
    shows as lost and new in its own meld's row, so the 7C is no misreading of the QH: the lay-off is
    journaled, and the lost QH flagged for the host."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    table.rows[0] = [row("7H", "7D", "7S", "7C", y=440), row("QC", "QD", y=470)]
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("LayOff", "Ann", "")]
    assert len(ref.flags) == 1 and "no longer shows QH" in ref.flags[0].reason
    table.discard("JS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "") and len(ref.flags) == 1


def test_the_card_under_the_top_showing_more_after_a_take_by_button_is_no_discard(journal: Journal) -> None:
    """classic Gameplay 3: Dee takes Cy's 10C with her button. The 10C lay on Bob's 4H, which lies on
    Ann's 4C; with the 10C gone the 4C, read by one corner before, shows both (on a new track: an arm
    went over it) and the reader takes it for the top, the 4H still read by its corner (classic film
    2000 round 7). Dee has thrown nothing yet: her discard is the QS that comes next."""
    ref, table = dealt(journal)
    four = card("4C", 1091, 484)
    four = replace(four, box=(1091, 484, 1185, 605), anchor=(1100, 495))
    hearts = replace(card("4H", 1118, 470), box=(1118, 470, 1210, 590), anchor=(1126, 488))
    ten = replace(card("10C", 1130, 480), box=(1130, 480, 1215, 600), anchor=(1190, 580))
    rows = tuple(tuple(r) for r in table.rows)
    four_corner = replace(four, box=(1109, 490, 1120, 509), corners=1, track=next(_track))
    hearts_corner = replace(hearts, box=(1120, 479, 1132, 500), corners=1, track=next(_track))
    piles = [(four,), (four_corner, hearts), (four_corner, hearts_corner, ten)]
    for k, pile in enumerate(piles):  # Ann, Bob, Cy
        ref.on_snapshot(TableSnapshot(10.0 * (k + 1), 10 + k, rows, pile, pile[-1], (), IMAGE), 10.0 * (k + 1))
    assert [type(e).__name__ for e in journal.events()[-6:]] == ["Draw", "Discard"] * 3
    ref.on_press("Dee", 30.5)  # Dee takes the 10C as her draw
    assert kinds(journal)[-1] == ("Draw", "Dee", "discard")
    shown = replace(four, track=next(_track))
    ref.on_snapshot(TableSnapshot(31.0, 13, rows, (hearts_corner, shown), shown, (), IMAGE), 31.0)
    assert kinds(journal)[-1] == ("Draw", "Dee", "discard")
    queen = replace(card("QS", 1100, 470), box=(1100, 470, 1190, 590))
    ref.on_snapshot(TableSnapshot(32.0, 14, rows, (queen, shown), queen, (), IMAGE), 32.0)
    assert journal.events()[-1] == Discard("Dee", "QS", source="camera")
    r = ref.game.round
    assert r is not None and r.pile == ["3D", "4C", "4H", "QS"]


def test_a_card_thrown_on_the_top_covering_a_lone_corner_of_its_name_is_the_discard(journal: Journal) -> None:
    """petras §05: Cy throws a 9C, Dee a 4D on it that leaves the 9C's corner showing; Ann, who has
    drawn and laid off, throws another 9C on the 4D, covering that corner (the reader gives the 4D a
    new track). No take happened since the last snapshot, so this is Ann's discard, not the 9C under
    the top showing more (petras film 2000 round 5)."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)  # Ann opens and throws KS, Bob KH, Cy KD, Dee KC
    for name in ("5S", "8H"):  # Ann, Bob
        table.discard(name)
        ref.on_snapshot(table.snap(), table.t)
    old = replace(card("9C"), box=(559, 238, 603, 296), anchor=(597, 288), orientation=5.5)
    corner = replace(old, box=(595, 281, 601, 291), corners=1, track=next(_track), orientation=None)
    four = replace(card("4D"), box=(553, 238, 596, 296), anchor=(557, 246), orientation=4.3)

    def show(*pile: SeenCard) -> None:
        table.t += 1.0
        rows = tuple(tuple(r) for r in table.rows)
        ref.on_snapshot(TableSnapshot(table.t, int(table.t), rows, pile, pile[0], (), IMAGE), table.t)

    show(old)  # Cy
    show(four, corner)  # Dee
    table.rows[0][0] = row("7H", "7D", "7S", "7C", y=440)
    show(four, corner)  # Ann draws and lays off the 7C
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("LayOff", "Ann", "")]
    new = replace(card("9C"), box=(554, 239, 600, 298), anchor=(594, 290), orientation=-8.2)
    four_corner = replace(four, box=(555, 243, 560, 253), corners=1, track=next(_track), orientation=None)
    show(new, four_corner)
    assert journal.events()[-1] == Discard("Ann", "9C", source="camera")
    r = ref.game.round
    assert r is not None and r.pile[-3:] == ["9C", "4D", "9C"]
    # Bob takes the 9C by his button and throws it back where it lay: the reader gives it its track from
    # before, older than the 4D's new one, and reads it whole; it is Bob's discard
    ref.on_press("Bob", table.t + 0.5)
    assert kinds(journal)[-1] == ("Draw", "Bob", "discard")
    shown = replace(four, track=next(_track))
    show(shown, replace(corner, track=next(_track)))
    show(new, replace(shown, box=four_corner.box, corners=1, track=next(_track), orientation=None))
    assert journal.events()[-1] == Discard("Bob", "9C", source="camera")
    assert r.pile[-3:] == ["9C", "4D", "9C"] and r.turn == "Cy"


def test_a_card_taken_and_thrown_back_where_it_lay_is_the_takers_discard(journal: Journal) -> None:
    """petras §04: the seat to act takes the top discard as its draw, and may throw the same card. Bob
    throws a 9S over Ann's 4H, seen by one corner beside the 4H's whole face; Cy takes it by her
    button and throws it back where it lay. The reader gives the 9S its track from before (it lies as
    it lay) and the 4H, whose pixels the throw changed, a new one: that is Cy's discard of the 9S,
    not a second 4H (petras film 1002 round 7)."""
    ref, table = dealt(journal)
    four = replace(card("4H", 1118, 473), box=(1118, 473, 1208, 590), anchor=(1126, 488), orientation=3.0)
    table.top = four
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("Discard", "Ann", "")]
    rows = tuple(tuple(r) for r in table.rows)

    def show(t: float, *pile: SeenCard) -> None:
        ref.on_snapshot(TableSnapshot(t, int(t), rows, pile, pile[0], (), IMAGE), t)

    nine = replace(_one_corner("9S", 1165, 1.0), box=(1165, 580, 1177, 600), anchor=(1171, 590))
    show(10.0, replace(four, track=next(_track)), nine)
    assert journal.events()[-1] == Discard("Bob", "9S", source="camera")
    ref.on_press("Cy", 10.5)  # Cy takes the 9S as her draw
    assert kinds(journal)[-1] == ("Draw", "Cy", "discard")
    show(11.0, replace(four, track=next(_track)))
    assert kinds(journal)[-1] == ("Draw", "Cy", "discard")
    show(12.0, replace(four, track=next(_track)), nine)  # thrown back: the 9S on its old track
    assert journal.events()[-1] == Discard("Cy", "9S", source="camera")
    r = ref.game.round
    assert r is not None and r.pile == ["3D", "4H", "9S"] and r.turn == "Dee"
    assert not ref.flags
