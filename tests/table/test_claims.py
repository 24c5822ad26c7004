"""Claim windows over the "May I?" buttons: priority, the free draw, limits, bounce and timing.

Each test cites the rule it checks: petras §04-§05 (seed 000/002), classic Gameplay 4, 8-9 (seeds
001/003/004), and RULES.md "Decisions where the seeds are silent". Times are injected: nothing sleeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mayi_table.rules.cards import RANKS, Card
from mayi_table.rules.engine import Game, IllegalMove
from mayi_table.rules.events import Buy, Deal, Discard, Draw, GameStart
from mayi_table.table.claims import ClaimDesk, ClaimError, ClaimWindow, Debouncer, Decision, Press

SEATS = ("A", "B", "C", "D")
# every natural card but the upcard, twice (two decks): the discards of a test, in order
DISCARDS = [Card(r + s) for s in "SHDC" for r in RANKS if r + s != "KD"] * 2


def observed_game(profile: str = "petras", variants: tuple[str, ...] = ()) -> Game:
    """An observed round 1 (hands unknown, counts tracked; a buy names no penalty card), dealt by D:
    A is first to act and the pile holds the upcard KD."""
    game = Game(GameStart(profile, variants, SEATS))
    game.apply(Deal(1, "D", Card("KD"), None))
    return game


class Table:
    """An observed game and a stream of distinct discards."""

    def __init__(self, profile: str = "petras", variants: tuple[str, ...] = ()) -> None:
        self.game = observed_game(profile, variants)
        self._cards = iter(DISCARDS)

    def turn(self, card: str | None = None) -> str:
        """The player to act draws from the stock and discards; returns the discarder."""
        r = self.game.round
        assert r is not None
        seat = r.turn
        self.game.apply(Draw(seat, "stock"))
        self.game.apply(Discard(seat, Card(card) if card else next(self._cards)))
        return seat


def after_a_discard(profile: str = "petras", variants: tuple[str, ...] = ()) -> Table:
    """A has drawn and discarded 7H: B is to act, the pile is KD 7H."""
    t = Table(profile, variants)
    t.turn("7H")
    return t


def decide(desk: ClaimDesk, presses: list[tuple[str, float]], until: float) -> Decision:
    """Feed presses in order, then let the window close; exactly one decision comes out."""
    out: list[Decision] = []
    for seat, t in presses:
        desk.on_press(seat, t)
        d = desk.poll(t)
        if d is not None:
            out.append(d)
    d = desk.poll(until)
    if d is not None:
        out.append(d)
    assert len(out) == 1, out
    assert desk.poll(until) is None  # handed out once
    return out[0]


def legal(game: Game, ev: Draw | Buy | None) -> bool:
    assert ev is not None
    try:
        game.copy().apply(ev)
    except IllegalMove:
        return False
    return True


# ------------------------------------------------------------------ priority


@pytest.mark.parametrize("profile", ["petras", "classic"])
def test_nearest_clockwise_after_the_discarder_wins_not_the_fastest(profile: str) -> None:
    """petras §05 ("priorité au plus proche tour suivant horaire, pas au plus bruyant"); classic
    Gameplay 8 ("the first claimant in turn order, nearest the active player clockwise")."""
    t = after_a_discard(profile)
    desk = ClaimDesk(t.game, length_s=3.0)
    desk.on_discard(10.0)
    d = decide(desk, [("D", 10.1), ("C", 12.9)], until=13.0)
    assert (d.kind, d.seat, d.card) == ("buy", "C", "7H")
    assert d.presses == (Press("D", 10.1), Press("C", 12.9))
    assert d.why("D") is not None and "C was nearer" in (d.why("D") or "")
    assert d.decided_at == 13.0 and d.lit == "C" and desk.lit == "C"
    assert legal(t.game, d.event())
    assert d.event() == Buy("C", None, source="button")


def test_the_winner_s_led_goes_out_after_lit_s() -> None:
    """DESIGN.md "What the device does" 3: the winner's LED lights; LEDs are data here."""
    t = after_a_discard()
    desk = ClaimDesk(t.game, length_s=3.0, lit_s=2.0)
    desk.on_discard(0.0)
    assert desk.lit is None
    decide(desk, [("D", 0.5)], until=3.0)
    assert desk.lit_at(4.9) == "D"
    assert desk.lit_at(5.0) is None


@pytest.mark.parametrize("profile", ["petras", "classic"])
def test_the_next_player_s_press_takes_the_discard_free_before_any_claim(profile: str) -> None:
    """petras §04-§05: the player to act has priority on the discard, free, no penalty; classic
    Gameplay 4, 8 and RULES.md Decisions: the next player taking the discard as its draw is never a
    buy. B's press decides the window at once, even after earlier claims by C and D."""
    t = after_a_discard(profile)
    desk = ClaimDesk(t.game, length_s=3.0)
    desk.on_discard(0.0)
    desk.on_press("C", 0.2)
    desk.on_press("D", 0.3)
    out = desk.on_press("B", 1.0)
    assert out.status == "take"
    d = desk.poll(1.0)
    assert d is not None and (d.kind, d.seat, d.card, d.decided_at) == ("draw", "B", "7H", 1.0)
    assert {s for s, _ in d.passed_over} == {"C", "D"}
    assert "player to act comes first" in (d.why("C") or "")
    assert d.event() == Draw("B", "discard", source="button")
    assert desk.on_press("C", 1.5).status == "ignored"  # the window is decided
    assert desk.poll(5.0) is None
    t.game.apply(d.event())  # type: ignore[arg-type]
    r = t.game.round
    assert r is not None and r.counts["B"] == 11 and r.buys["B"] == 0 and r.drawn


def test_the_discarder_cannot_claim_its_own_discard() -> None:
    """classic Gameplay 8 ("when another player discards"), RULES.md ("a player who is not taking its
    turn may claim"): A's press on the card A just threw is passed over."""
    t = after_a_discard()
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [("A", 0.1), ("D", 0.2)], until=10.0)
    assert (d.kind, d.seat) == ("buy", "D")
    assert "A discarded 7H" in (d.why("A") or "")


def test_nobody_claims() -> None:
    """petras §05 / classic Gameplay 8: without a claim the discard stays for the player to act."""
    t = after_a_discard()
    desk = ClaimDesk(t.game, length_s=2.0)
    desk.on_discard(0.0)
    assert desk.poll(1.99) is None
    d = decide(desk, [], until=2.0)
    assert (d.kind, d.seat, d.reason) == ("none", None, "nobody claimed 7H")
    assert d.event() is None and desk.lit is None


# ------------------------------------------------------------------ limits


def classic_with_three_buys_for_c() -> Table:
    """A classic round where C has bought 3 times (each after A's discard), and A has just discarded again."""
    t = Table("classic")
    for _ in range(3):
        t.turn()  # A
        t.game.apply(Buy("C"))
        for _ in range(3):
            t.turn()  # B, C, D
    t.turn("7H")  # A
    r = t.game.round
    assert r is not None and r.buys["C"] == 3 and r.turn == "B"
    return t


def test_classic_fourth_buy_is_refused_and_passes_to_the_next_claimant() -> None:
    """classic Gameplay 9: three buys per player per round; further claims are refused, so the
    next claimant clockwise gets the card."""
    t = classic_with_three_buys_for_c()
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [("C", 0.1), ("D", 0.2)], until=5.0)
    assert (d.kind, d.seat) == ("buy", "D")
    assert "C has used all 3 buys" in (d.why("C") or "")
    assert legal(t.game, d.event())


def test_classic_fourth_buy_alone_grants_nothing() -> None:
    """classic Gameplay 9: the refused claimant gets nothing; the discard stays for the player to act."""
    t = classic_with_three_buys_for_c()
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [("C", 0.1)], until=5.0)
    assert (d.kind, d.seat, d.reason) == ("none", None, "no claimant may buy 7H")
    assert "all 3 buys" in (d.why("C") or "")


def test_no_buy_variant_refuses_every_claim_but_the_free_draw_stands() -> None:
    """classic Common variants, no-buy: no May I? at all; the next player still draws the discard."""
    t = after_a_discard("classic", ("no-buy",))
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [("C", 0.1)], until=5.0)
    assert d.kind == "none" and "without buying" in (d.why("C") or "")
    t2 = after_a_discard("classic", ("no-buy",))
    desk2 = ClaimDesk(t2.game)
    desk2.on_discard(0.0)
    assert decide(desk2, [("B", 0.1)], until=5.0).kind == "draw"


def test_no_buy_when_no_penalty_card_can_be_had() -> None:
    """petras §05: if the penalty card is unavailable even after recycling, the buy is not completed:
    the claimant is passed over."""
    t = Table("petras")
    r = t.game.round
    assert r is not None
    r.stock_count = 0  # as the engine test does: an empty stock, nothing below the top to recycle
    t.game.apply(Draw("A", "discard"))
    t.game.apply(Discard("A", Card("7H")))
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [("C", 0.1)], until=5.0)
    assert d.kind == "none" and "no penalty card" in (d.why("C") or "")


def test_petras_same_buyer_not_twice_in_a_row_across_windows() -> None:
    """petras §05: after a buy, the newly exposed discard opens a new window; another seat may buy it,
    the same buyer may not buy twice in a row. After someone else has bought, it may buy again."""
    t = Table("petras")
    for _ in range(4):
        t.turn()  # A B C D: four discards on the pile
    t.turn("7H")  # A again; B to act
    game = t.game
    desk = ClaimDesk(game)
    desk.on_discard(0.0)
    d1 = decide(desk, [("C", 0.1)], until=3.0)
    assert (d1.kind, d1.seat, d1.card) == ("buy", "C", "7H")
    game.apply(d1.event())  # type: ignore[arg-type]
    w2 = desk.on_event(d1.event(), 3.1)  # type: ignore[arg-type]
    r = game.round
    assert r is not None and w2 is not None and w2.card == r.pile[-1] and w2.discarder is None
    d2 = decide(desk, [("C", 3.2), ("D", 3.3)], until=6.1)
    assert (d2.kind, d2.seat) == ("buy", "D")
    assert "twice in a row" in (d2.why("C") or "")
    game.apply(d2.event())  # type: ignore[arg-type]
    desk.on_event(d2.event(), 6.2)  # type: ignore[arg-type]
    d3 = decide(desk, [("D", 6.3), ("C", 6.4)], until=9.2)
    assert (d3.kind, d3.seat) == ("buy", "C")  # D is refused now; C may buy again
    assert "twice in a row" in (d3.why("D") or "")


def test_classic_the_same_buyer_may_buy_the_newly_exposed_discard() -> None:
    """classic does not address consecutive buys (RULES.md table): the same buyer may buy again."""
    t = Table("classic")
    for _ in range(4):
        t.turn()
    t.turn("7H")
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d1 = decide(desk, [("C", 0.1)], until=3.0)
    t.game.apply(d1.event())  # type: ignore[arg-type]
    desk.on_event(d1.event(), 3.0)  # type: ignore[arg-type]
    d2 = decide(desk, [("C", 3.2), ("D", 3.3)], until=6.0)
    assert (d2.kind, d2.seat) == ("buy", "C")


# ------------------------------------------------------------------ simultaneity, bounce, timing


@pytest.mark.parametrize("order", [("D", "C"), ("C", "D")])
def test_simultaneous_claims_go_by_priority_not_arrival_order(order: tuple[str, str]) -> None:
    """petras §05 / classic Gameplay 8: presses at the same instant are settled by seat priority."""
    t = after_a_discard()
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [(order[0], 0.5), (order[1], 0.5)], until=3.0)
    assert (d.kind, d.seat) == ("buy", "C")


def test_simultaneous_with_the_player_to_act_is_its_draw() -> None:
    """petras §05 ("actif prioritaire"); RULES.md Decisions: the next player's draw beats any claim."""
    t = after_a_discard("classic")
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    d = decide(desk, [("C", 0.5), ("B", 0.5)], until=3.0)
    assert (d.kind, d.seat) == ("draw", "B")


def test_debouncer_drops_contact_bounce_per_seat() -> None:
    """DESIGN.md Principles: debounce is pure code. A press within bounce_s of the seat's last
    accepted press is bounce; other seats are unaffected."""
    db = Debouncer(bounce_s=0.05)
    assert db.accept(Press("C", 1.0))
    assert not db.accept(Press("C", 1.0))
    assert not db.accept(Press("C", 1.04))
    assert db.accept(Press("D", 1.01))
    assert db.accept(Press("C", 1.06))
    with pytest.raises(ValueError):
        Debouncer(-1)


def test_a_double_press_counts_once() -> None:
    """petras §05 / classic Gameplay 8: one claim per seat; a bouncing or repeated press counts once."""
    t = after_a_discard()
    desk = ClaimDesk(t.game, bounce_s=0.05)
    desk.on_discard(0.0)
    assert desk.on_press("D", 0.10).status == "claim"
    assert desk.on_press("D", 0.12).status == "bounce"
    assert desk.on_press("D", 0.50).status == "repeat"
    d = decide(desk, [], until=3.0)
    assert d.presses == (Press("D", 0.10),) and d.seat == "D"


def test_presses_before_and_after_the_window_are_ignored() -> None:
    """petras §05 / classic Gameplay 8: a claim is made when the card is discarded, until the window
    closes; presses before it opens or once it has closed are ignored and reported."""
    t = after_a_discard()
    w = ClaimWindow(t.game, opened_at=10.0, length_s=3.0)
    early = w.press(Press("C", 9.99))
    assert early.status == "ignored" and "before" in early.reason
    assert w.press(Press("D", 12.99)).status == "claim"
    late = w.press(Press("C", 13.0))  # closes_at itself is already closed
    assert late.status == "ignored" and "after" in late.reason
    d = w.poll(13.0)
    assert d is not None and (d.kind, d.seat, d.decided_at) == ("buy", "D", 13.0)
    assert w.close(20.0) is d  # decided once
    desk = ClaimDesk(t.game)
    out = desk.on_press("C", 0.0)  # no window yet
    assert out.status == "ignored" and "no claim window" in out.reason


def test_a_decided_window_never_grants_the_card_again() -> None:
    """petras §05 / classic Gameplay 8: one card, one buy. Presses after the decision are ignored and
    asking for a window again on the same position gives back the decided one."""
    t = after_a_discard()
    desk = ClaimDesk(t.game)
    w = desk.on_discard(0.0)
    d = decide(desk, [("D", 0.1)], until=3.0)
    assert d.seat == "D"
    assert desk.on_press("C", 3.5).status == "ignored"
    assert desk.on_discard(4.0) is w  # nothing was applied: no second window on 7H
    assert desk.poll(10.0) is None


def test_the_window_goes_stale_when_the_game_moves_on() -> None:
    """petras §04-§05: buys come between a discard and the next draw. If the draw is applied while the
    window is open, the window grants nothing; `decline` settles the claims before the draw."""
    t = after_a_discard()
    desk = ClaimDesk(t.game)
    desk.on_discard(0.0)
    desk.on_press("D", 0.1)
    t.game.apply(Draw("B", "stock"))
    assert desk.poll(5.0) is None
    t2 = after_a_discard()
    desk2 = ClaimDesk(t2.game)
    desk2.on_discard(0.0)
    desk2.on_press("D", 0.1)
    d = desk2.decline(0.5)  # the camera saw B reach for the stock
    assert d is not None and (d.kind, d.seat, d.decided_at) == ("buy", "D", 0.5)


def test_no_window_without_a_claimable_discard() -> None:
    """petras §04: once the player to act has drawn, the discard is no longer open to claims."""
    t = after_a_discard()
    t.game.apply(Draw("B", "stock"))
    with pytest.raises(ClaimError):
        ClaimWindow(t.game, 0.0)
    assert ClaimDesk(t.game).on_discard(0.0) is None
    with pytest.raises(ValueError):
        ClaimWindow(after_a_discard().game, 0.0, length_s=0)


# ------------------------------------------------------------------ random press sequences


@dataclass
class Scenario:
    profile: str
    history: list[list[int]]  # per earlier turn: the seats (indices) that try to buy its discard
    windows: list[tuple[float, list[tuple[int, int]]]]  # per window: length, presses (seat index, tenths)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    profile = draw(st.sampled_from(["petras", "classic"]))
    history = draw(st.lists(st.lists(st.integers(0, 3), max_size=3), max_size=10))
    windows = draw(
        st.lists(
            st.tuples(
                st.sampled_from([0.5, 1.0, 2.0, 3.0]),
                st.lists(st.tuples(st.integers(0, 3), st.integers(-5, 35)), max_size=8),
            ),
            min_size=1,
            max_size=4,
        )
    )
    return Scenario(profile, history, windows)


def oracle(game: Game, turn: str, discarder: str | None, in_window: set[str]) -> tuple[str, str | None]:
    """What the rules say the window gives: the player to act's draw, else the nearest allowed claimant."""
    if turn in in_window:
        return "draw", turn
    r = game.round
    assert r is not None
    i = r.players.index(turn)
    for k in range(len(r.players)):
        s = r.players[(i + k) % len(r.players)]
        if s in in_window and s != discarder and game.buy_refusal(s) is None:
            return "buy", s
    return "none", None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_random_presses_never_grant_twice_nor_against_the_rules(sc: Scenario) -> None:
    """petras §05 / classic Gameplay 8-9: whatever the presses (any seats, equal times, any window
    length), each window gives at most one decision; a buy goes only to a seat the rules allow (the
    Buy applies to a copy of the game), to the nearest allowed claimant, and never while the player to
    act pressed; a draw goes only to the player to act."""
    t = Table(sc.profile)
    game = t.game
    for buyers in sc.history:
        t.turn()
        for b in buyers:
            if game.buy_refusal(SEATS[b]) is None:
                game.apply(Buy(SEATS[b]))
    desk = ClaimDesk(game, bounce_s=0.05)
    after_buy = False
    for n, (length, raw) in enumerate(sc.windows):
        base = 100.0 * (n + 1)
        desk.length_s = length
        w = desk.on_buy(base) if after_buy else desk.on_discard(base)
        if w is None:  # a buy emptied the pile: the player to act draws and discards
            t.turn()
            w = desk.on_discard(base)
        assert w is not None and w.opened_at == base and w.closes_at == base + length
        r = game.round
        assert r is not None and w.turn == r.turn and w.card == r.pile[-1]
        presses = sorted(((SEATS[s], base + k / 10) for s, k in raw), key=lambda p: p[1])
        in_window = {s for s, tp in presses if base <= tp < base + length}
        want = oracle(game, w.turn, w.discarder, in_window)
        got: list[Decision] = []
        for seat, tp in presses:
            out = desk.on_press(seat, tp)
            if not base <= tp < base + length:
                assert out.status in ("ignored", "bounce")
            d = desk.poll(tp)
            if d is not None:
                got.append(d)
        d = desk.poll(base + length)
        if d is not None:
            got.append(d)
        assert desk.poll(base + 50) is None
        assert len(got) == 1  # exactly one decision per window
        dec = got[0]
        assert (dec.kind, dec.seat) == want
        event(f"{sc.profile} {dec.kind}" + (" (someone passed over)" if dec.passed_over else ""))
        assert dec.card == w.card
        for seat, tp in presses:  # nothing changes a decided window
            assert w.press(Press(seat, tp)).status == "ignored"
        assert w.decision is dec
        ev = dec.event()
        if dec.kind == "none":
            assert ev is None
            after_buy = False
            t.turn()  # the player to act draws from the stock and discards: a new window
            continue
        assert ev is not None and legal(game, ev)
        if dec.kind == "draw":
            assert dec.seat == w.turn
            game.apply(ev)
            game.apply(Discard(w.turn, next(t._cards)))
            after_buy = False
        else:
            assert dec.seat != w.turn and dec.seat != w.discarder
            assert game.buy_refusal(dec.seat or "") is None
            before = dict(r.buys)
            game.apply(ev)
            assert sum(r.buys.values()) == sum(before.values()) + 1
            after_buy = True
