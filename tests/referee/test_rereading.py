"""Readings the rules settle (table/rereading.py): a card whose best reading the game contradicts is
taken as one of the recogniser's next readings when that one fits, and the host is told."""

from __future__ import annotations

from mayi_table.rules.cards import Card
from mayi_table.rules.engine import Game
from mayi_table.rules.events import Deal, Discard, Draw, Event, GameStart, LayOff, Open, RoundEnd
from mayi_table.rules.melds import Meld
from mayi_table.table.journal import Journal
from mayi_table.table.referee import Referee
from mayi_table.table.rereading import REREAD_MIN, repair, row_beyond
from mayi_table.vision.table_reading import SeenCard, SeenMeld

from .test_referee import START, Table, ann_goes_out, card, dealt, kinds, opened_and_round_played, row


def misread(name: str, *alternatives: tuple[str, float], x: float = 200, y: float = 450) -> SeenCard:
    c = card(name, x, y, conf=0.6)
    return SeenCard(c.card, c.confidence, c.box, c.anchor, c.corners, c.track, tuple(alternatives))


def row_with(names: list[str | SeenCard], y: float = 450) -> SeenMeld:
    cards = []
    for i, n in enumerate(names):
        if isinstance(n, SeenCard):
            cards.append(
                SeenCard(
                    n.card,
                    n.confidence,
                    (200 + 12 * i, y, 220 + 12 * i, y + 40),
                    (200 + 12 * i, y),
                    2,
                    n.track,
                    n.alternatives,
                )
            )
        else:
            cards.append(card(n, 200 + 12 * i, y))
    return SeenMeld(tuple(cards))


def test_an_open_refused_for_a_misread_card_is_taken_as_its_next_reading(journal: Journal) -> None:
    """petras §03: the contract is laid whole. A QH read as 5H (next reading QH) makes the engine refuse
    the open as read; the open is taken with QH at once, and the host is told what was renamed."""
    ref, table = dealt(journal)
    five = misread("5H", ("QH", 0.3), ("6H", 0.05))
    table.rows[0] = [row("7H", "7D", "7S", y=440), row_with(["QC", "QD", five], y=470)]
    ref.on_snapshot(table.snap(), table.t)
    r = ref.game.round
    assert r is not None and "Ann" in r.opened
    assert [list(m.cards) for m in r.table] == [["7H", "7D", "7S"], ["QC", "QD", "QH"]]
    assert len(ref.flags) == 1 and "read 5H as QH" in ref.flags[0].reason
    # the meld keeps reading 5H: it is QH there, not a lost card, and Ann's discard is journaled
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "")
    assert not any("no longer shows" in f.reason for f in ref.flags)


def test_a_melded_card_misread_later_is_read_as_the_meld_holds_it(journal: Journal) -> None:
    """petras §04: lay-offs go onto melds on the table. Ann's 7S later reads 5S (next reading 7S) while
    she lays 7C off: the meld is read as it holds its 7S (flagged once for the host) and the lay-off is
    taken, not held back as a lost meld's."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    queens = table.rows[0][1]
    table.rows[0] = [row_with(["7H", "7D", misread("5S", ("7S", 0.2)), "7C"], y=440), queens]
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("LayOff", "Ann", "")]
    assert journal.events()[-1] == LayOff("Ann", 0, ("7C",))
    assert len(ref.flags) == 1 and "read 5S as 7S" in ref.flags[0].reason
    table.discard("JS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "") and len(ref.flags) == 1


def test_a_lay_off_refused_as_read_is_taken_as_its_next_reading(journal: Journal) -> None:
    """petras §04: a lay-off must extend the meld. A 7C laid on Ann's 7s but read 4C (next reading 7C)
    is taken as 7C and flagged for the host."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    queens = table.rows[0][1]
    table.rows[0] = [row_with(["7H", "7D", "7S", misread("4C", ("7C", 0.25))], y=440), queens]
    ref.on_snapshot(table.snap(), table.t)
    assert journal.events()[-1] == LayOff("Ann", 0, ("7C",))
    assert len(ref.flags) == 1 and "read 4C as 7C" in ref.flags[0].reason


def test_a_card_laid_off_beside_its_look_alike_is_the_new_one() -> None:
    """petras §04, classic Gameplay 6: a lay-off extends a meld. 3C laid below a run 4C-7C but read as
    4C (next reading 3C) shows the row two 4C: the surer reading is the meld's 4C, and the unsure one,
    wherever it lies in the row, is the card laid off (whose next reading can then settle it)."""
    run = Meld("run", (Card("4C"), Card("5C"), Card("6C"), Card("7C")), ("4C", "5C", "6C", "7C"), "Ann", 4)
    laid = misread("4C", ("3C", 0.47))
    for names, new in ((["4C", laid, "5C", "6C", "7C"], 1), ([laid, "4C", "5C", "6C", "7C"], 0)):
        rest, beyond = row_beyond(run, row_with(names))
        assert not +rest and beyond == [new]


def test_a_refusal_no_next_reading_explains_stays_a_refusal(journal: Journal) -> None:
    """petras §03: an open that is not the contract is refused and flagged; next readings that do not
    make it one (or are too unlikely: under REREAD_MIN) change nothing."""
    ref, table = dealt(journal)
    five = misread("5H", ("6H", 0.3), ("QH", REREAD_MIN / 2))
    table.rows[0] = [row("7H", "7D", "7S", y=440), row_with(["QC", "QD", five], y=470)]
    ref.on_snapshot(table.snap(), table.t)
    r = ref.game.round
    assert r is not None and "Ann" not in r.opened
    assert len(ref.flags) == 1 and "the rules refuse it" in ref.flags[0].reason


def _game_at_ann_to_lay() -> Game:
    g = Game(GameStart("petras", (), ("Ann", "Bob", "Cy", "Dee")))
    g.apply(Deal(1, "Dee", Card("3D")))
    g.apply(Draw("Ann", "stock"))
    return g


def two_groups(names: list[str]) -> Event:
    return Open("Ann", (tuple(names[:3]), tuple(names[3:])))


def test_repair_takes_the_likeliest_accepted_renaming() -> None:
    """petras §03: of the renamings that make the contract (two groups in round 1), the likeliest is
    taken: QH at 0.4 rather than QS at 0.1; a card the engine needs no change for is left alone."""
    g = _game_at_ann_to_lay()
    cards = [card(n) for n in ("7H", "7D", "7S", "QC", "QD")] + [misread("5H", ("QS", 0.1), ("QH", 0.4))]
    found = repair(g, cards, two_groups)
    assert found is not None
    fixed, renaming = found
    assert fixed == Open("Ann", (("7H", "7D", "7S"), ("QC", "QD", "QH"))) and [n for _, n in renaming] == ["QH"]


def test_repair_renames_two_cards_when_one_is_not_enough() -> None:
    """petras §03: two misread cards of one group (2C and 3C for QC and QD): both renamed."""
    g = _game_at_ann_to_lay()
    cards = [card(n) for n in ("7H", "7D", "7S")]
    cards += [misread("2C", ("QC", 0.3)), misread("3C", ("QD", 0.2)), card("QH")]
    found = repair(g, cards, two_groups)
    assert found is not None and found[0] == Open("Ann", (("7H", "7D", "7S"), ("QC", "QD", "QH")))


def test_repair_leaves_jokers_in_lay_offs_alone() -> None:
    """petras §04: a joker laid on a run is written with its role, so a lay-off is never renamed into or
    out of a joker."""
    g = _game_at_ann_to_lay()
    g.apply(Open("Ann", (("7H", "7D", "7S"), ("QC", "QD", "QH"))))
    g.apply(Discard("Ann", Card("KS")))
    for seat, name in (("Bob", "KH"), ("Cy", "KD"), ("Dee", "KC")):
        g.apply(Draw(seat, "stock"))
        g.apply(Discard(seat, Card(name)))
    g.apply(Draw("Ann", "stock"))

    def lay_off(names: list[str]) -> Event:
        return LayOff("Ann", 0, tuple(names))

    assert repair(g, [misread("4C", ("JK", 0.4))], lay_off, jokers=False) is None
    found = repair(g, [misread("4C", ("7C", 0.4))], lay_off, jokers=False)
    assert found is not None and found[0] == LayOff("Ann", 0, ("7C",))


def test_a_hand_card_shown_more_often_than_the_decks_hold_is_taken_as_its_next_reading(journal: Journal) -> None:
    """petras §06 scores the cards left in hand, from two decks here: Ann's melds hold both 7H, so a 7H
    in Bob's spread hand is misread; its next reading 7D is taken (and flagged), and the round is scored."""
    ref, table = dealt(journal)
    opened_and_round_played(ref, table)
    ann_goes_out(ref, table)
    spread_hands(ref, table, misread("7H", ("7D", 0.3)))
    last = journal.events()[-1]
    assert isinstance(last, RoundEnd) and "7D" in last.hands["Bob"] and "7H" not in last.hands["Bob"]
    assert len(ref.flags) == 1 and "read 7H as 7D" in ref.flags[0].reason


def spread_hands(ref: Referee, table: Table, bobs_last: SeenCard) -> None:
    """Bob, Cy and Dee spread their ten cards each; Bob's last card is `bobs_last`."""
    hands: dict[str, list[str | SeenCard]] = {
        "Bob": ["2C", "2D", "2H", "2S", "3C", "3D", "3H", "3S", "4C", bobs_last],
        "Cy": ["4H", "4S", "5C", "5D", "5S", "6C", "6D", "6H", "6S", "8C"],
        "Dee": ["8D", "8H", "8S", "9C", "9D", "9H", "9S", "10C", "10D", "10H"],
    }
    for i, seat in ((1, "Bob"), (2, "Cy"), (3, "Dee")):
        table.rows[i] = [row_with(hands[seat], y=100 + 50 * i)]
    ref.on_snapshot(table.snap(), table.t)


def faint_referee(journal: Journal) -> tuple[Referee, Table]:
    """A referee told that readings under 0.5 are faint (the recogniser passes them on)."""
    ref = Referee(journal, START, "Dee", faint_below=0.5)
    table = Table()
    table.discard("3D")
    ref.on_snapshot(table.snap(), table.t)
    return ref, table


def test_a_card_read_faintly_is_taken_where_the_contract_needs_it(journal: Journal) -> None:
    """petras §03: the contract is laid whole. Ann's QH reads faintly (0.3): without it the open is no
    contract, with it it is, so it is taken with QH (flagged for the host); the meld keeps its QH while
    it reads faintly, and a faint 7C beside her 7s that the contract does not need stays no card."""
    ref, table = faint_referee(journal)
    faint_qh = card("QH", conf=0.3)
    table.rows[0] = [row_with(["7H", "7D", "7S", card("7C", conf=0.3)], y=440), row_with(["QC", "QD", faint_qh], y=470)]
    ref.on_snapshot(table.snap(), table.t)
    r = ref.game.round
    assert r is not None and [list(m.cards) for m in r.table] == [["7H", "7D", "7S"], ["QC", "QD", "QH"]]
    assert len(ref.flags) == 1 and "read faintly to complete the contract: QH" in ref.flags[0].reason
    table.discard("KS")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-1] == ("Discard", "Ann", "") and len(ref.flags) == 1


def test_faint_readings_elsewhere_are_no_cards(journal: Journal) -> None:
    """A faint KS in Bob's zone (a glint, a card's back) is neither a move nor a flag; Ann's discard is
    journaled as usual."""
    ref, table = faint_referee(journal)
    table.rows[1] = [row_with([card("KS", conf=0.3)], y=150)]
    table.discard("9C")
    ref.on_snapshot(table.snap(), table.t)
    assert kinds(journal)[-2:] == [("Draw", "Ann", "stock"), ("Discard", "Ann", "")] and not ref.flags


def test_hands_short_by_a_faint_reading_are_filled_by_it(journal: Journal) -> None:
    """petras §06 scores the cards left in hand: Bob shows 9 sure cards of his 10 and one faint one; the
    hand sizes settle it, and the round is scored with it (flagged for the host)."""
    ref, table = faint_referee(journal)
    opened_and_round_played(ref, table)
    ann_goes_out(ref, table)
    spread_hands(ref, table, card("4D", conf=0.3))
    last = journal.events()[-1]
    assert isinstance(last, RoundEnd) and "4D" in last.hands["Bob"] and len(last.hands["Bob"]) == 10
    assert len(ref.flags) == 1 and "read faintly to fill the hand sizes: 4D" in ref.flags[0].reason
