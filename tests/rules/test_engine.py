"""The game as a state machine: each rule of RULES.md's tables, citing its seed section."""

import json
from pathlib import Path

import pytest

from mayi_table.rules.cards import Card
from mayi_table.rules.engine import Game, IllegalMove, apply, legal_actions
from mayi_table.rules.events import Buy, Deal, Discard, Draw, LayOff, Open, RoundEnd
from mayi_table.rules.record import replay_lines

from .helpers import QUICK_OUT, at_round, cards, deal, first_player, new, observed_quick_round

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
THREE_RUNS = (("2S", "3S", "4S", "5S"), ("2H", "3H", "4H", "5H"), ("2D", "3D", "4D", "5D"))  # a round-7 contract


def card(t: str) -> Card:
    return cards(t)[0]


def hand(game: Game, seat: str) -> list[str]:
    assert game.round is not None
    return sorted(game.round.hands[seat].elements())


def illegal(game: Game, ev, match: str) -> IllegalMove:
    before = game.state_dict()
    with pytest.raises(IllegalMove, match=match) as info:
        game.apply(ev)
    assert game.state_dict() == before, "a refused event must change nothing"
    return info.value


# ---------------------------------------------------------------- deal and turn order


def test_left_of_dealer_starts_and_deal_rotates() -> None:
    """petras §02 / classic Setup 5-6: the player left of the dealer starts; the deal passes clockwise."""
    game = new()
    deal(game)
    assert game.round is not None and game.round.dealer == "D" and game.round.turn == "A"
    game2 = at_round(2)
    assert game2.expected_dealer() == "A"
    with pytest.raises(IllegalMove, match="A deals now"):
        game2.apply(Deal(2, "C", card("KD"), None))


def test_deal_sizes_and_deck_are_checked() -> None:
    """petras §02: 10 cards each in round 1; the deck holds two of each card."""
    game = new()
    hands = {s: tuple(cards("2S 3S 4S 5S 6S 7S 8S 9S 10S JS")) for s in "ABCD"}
    illegal(game, Deal(1, "D", card("KD"), hands), "holds only 2 2S")
    short = {s: tuple(cards("2S 3S")) for s in "ABCD"}
    illegal(game, Deal(1, "D", card("KD"), short), "deals 10 cards")
    illegal(game, Deal(2, "D", card("KD"), None), "round 1")


def test_draw_only_on_own_turn_and_once() -> None:
    """petras §04 / classic Gameplay 4: on one's turn, draw one card, from the stock or the discard pile."""
    game = new()
    stock = deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS"}, upcard="QH")
    illegal(game, Draw("B", "stock", stock[-1]), "A's turn")
    game.apply(Draw("A", "discard"))
    assert "QH" in hand(game, "A")
    illegal(game, Draw("A", "stock", stock[-1]), "already drawn")


def test_stock_draw_must_name_a_card_the_stock_holds() -> None:
    """GAME_RECORD.md: each stock draw names its card and the engine checks the stock holds it."""
    game = new()
    deal(game, {"A": "7S 7S 7H 7H 7D 7D 7C 7C 2S 3S"})
    illegal(game, Draw("A", "stock", card("7S")), "holds no 7S")
    illegal(game, Draw("A", "stock"), "name the card")


def test_discard_ends_the_turn() -> None:
    """petras §04 / classic Gameplay 7: a discard ends the turn; play passes clockwise."""
    game = new()
    stock = deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS"})
    illegal(game, Discard("A", card("2S")), "must draw")
    game.apply(Draw("A", "stock", stock[-1]))
    illegal(
        game, Discard("A", card("QD")) if "QD" not in hand(game, "A") else Discard("A", card("KC")), "not in A's hand"
    )
    game.apply(Discard("A", card("2S")))
    assert game.round is not None and game.round.turn == "B" and game.round.pile[-1] == "2S"


# ---------------------------------------------------------------- opening


def test_open_exactly_the_contract() -> None:
    """petras §03-§04 / classic Gameplay 1, 5: the whole contract at once, no extra meld, longer melds allowed."""
    game = new()
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 9S 9H 9D 2C"})
    game.apply(Draw("A", "stock", stock[-1]))
    illegal(game, Open("A", (("7S", "7H", "7D"),)), "exactly two groups")
    illegal(game, Open("A", (("7S", "7H", "7D"), ("8S", "8H", "8D"), ("9S", "9H", "9D"))), "exactly two groups")
    illegal(game, Open("A", (("7S", "7H", "7D"), ("8S", "8H", "9D"))), "neither a group")
    game.apply(Open("A", (("7S", "7H", "7D"), ("8S", "8H", "8D"))))
    illegal(game, Open("A", (("9S", "9H", "9D"), ("7S", "7H", "7D"))), "already laid its contract")


def test_open_only_on_own_turn_after_drawing() -> None:
    """classic Gameplay 5: the contract goes down only after drawing on one's own turn."""
    game = new()
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 9S 9H 9D 2C", "B": "4S 4H 4D 5S 5H 5D 6S 6H 6D 2D"})
    illegal(game, Open("A", (("7S", "7H", "7D"), ("8S", "8H", "8D"))), "must draw")
    game.apply(Draw("A", "stock", stock[-1]))
    illegal(game, Open("B", (("4S", "4H", "4D"), ("5S", "5H", "5D"))), "A's turn")


def test_open_needs_the_cards_in_hand() -> None:
    game = new()
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 9S 9H 9D 2C"})
    game.apply(Draw("A", "stock", stock[-1]))
    illegal(game, Open("A", (("7S", "7H", "7C"), ("8S", "8H", "8D"))), "7C is not in A's hand")


def test_ambiguous_joker_in_an_opening_is_illegal() -> None:
    """GAME_RECORD.md open: a joker whose role is ambiguous and not fixed with JK:... is illegal."""
    game = at_round(3)
    P = first_player(game)
    stock = deal(game, {P: "7H JK JK JK 2S 3S 4S 5S 9C KD"})
    game.apply(Draw(P, "stock", stock[-1]))
    illegal(game, Open(P, (("7H", "JK", "JK", "JK"), ("2S", "3S", "4S", "5S"))), "ambiguous")
    game.apply(Open(P, (("7H", "JK:8H", "JK", "JK"), ("2S", "3S", "4S", "5S"))))
    assert game.state_dict()["table"][0] == ["7H", "JK:8H", "JK:9H", "JK:10H"]


def test_group_or_run_is_decided_by_the_contract() -> None:
    """Round 1 asks for groups, so 7H JK JK can only be a group of 7s."""
    game = new()
    stock = deal(game, {"A": "7H JK JK 8S 8H 8D 2C 3C 4C 5D"})
    game.apply(Draw("A", "stock", stock[-1]))
    game.apply(Open("A", (("7H", "JK", "JK"), ("8S", "8H", "8D"))))
    assert game.state_dict()["table"][0] == ["7H", "JK:7", "JK:7"]


def test_petras_worked_example_section_07() -> None:
    """petras §07: C buys 2D with QC (12 cards), may not meld during the interruption, later draws KS (13),
    lays 3H-7H and 8H-JH as two separate runs, discards KS and keeps 2D QC AC; opening neither ends the
    round nor allows a lay-off on that turn."""
    lines = (GOLDEN / "petras_07.mayi.jsonl").read_text(encoding="utf-8").splitlines()
    result, game = replay_lines(lines)
    expected = json.loads((GOLDEN / "petras_07.expected.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(result)) == expected
    assert result["ok"] and not result["complete"]
    state = result["state"]
    assert state["round"] == 3 and state["hands"]["C"] == ["2D", "AC", "QC"]
    assert state["table"] == [["3H", "4H", "5H", "6H", "7H"], ["8H", "9H", "10H", "JH"]]
    # step by step: the buy, no meld during the interruption, 13 cards, no lay-off on the opening turn
    deal_at = next(i for i, t in enumerate(lines) if '"round":3' in t)
    partial, g = replay_lines(lines[: deal_at + 2])
    assert g is not None and g.round is not None and g.round.counts["C"] == 12
    illegal(g, Open("C", (("3H", "4H", "5H", "6H", "7H"), ("8H", "9H", "10H", "JH"))), "own turn")
    before_discard, g2 = replay_lines(lines[:-1])
    assert g2 is not None and g2.round is not None
    assert g2.round.counts["C"] == 4
    illegal(g2, LayOff("C", 1, ("QH",)), "no lay-off on the turn C opened")


# ---------------------------------------------------------------- lay-offs


def _opened_round_one(profile: str = "petras", variants: tuple[str, ...] = ()) -> tuple[Game, list[Card]]:
    game = new(profile, variants=variants)
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 9S 9H 9D 2C"})
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Open("A", (("7S", "7H", "7D"), ("8S", "8H", "8D"))))
    return game, stock


def test_no_layoff_on_the_opening_turn_in_petras() -> None:
    """petras §04, §07: no lay-off on the turn one opens."""
    game, stock = _opened_round_one("petras")
    illegal(game, LayOff("A", 0, ("7S",)) if "7S" in hand(game, "A") else LayOff("A", 0, ("JK",)), "no lay-off")


def test_layoff_allowed_on_the_opening_turn_in_classic() -> None:
    """classic Gameplay 6: once the contract is down one may lay off, the same turn included."""
    game = new("classic")
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 7C 9H 9D 2C"})
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Open("A", (("7S", "7H", "7D"), ("8S", "8H", "8D"))))
    game.apply(LayOff("A", 0, ("7C",)))
    assert game.state_dict()["table"][0] == ["7S", "7H", "7D", "7C"]


def test_layoff_only_after_opening_and_on_own_turn() -> None:
    """petras §04 / classic Gameplay 6: lay-offs come after one's contract, on one's turn."""
    game, stock = _opened_round_one("petras")
    game.apply(Discard("A", card("2C")))
    b_hand = hand(game, "B")
    illegal(game, LayOff("B", 0, (b_hand[0],)), "B must lay its contract")
    illegal(game, LayOff("A", 0, ("9S",)), "own turn")


def test_layoff_onto_any_meld_on_a_later_turn() -> None:
    """petras §04: on later turns, add to existing groups and run ends, one's own or another's."""
    game, stock = _opened_round_one("petras")
    game.apply(Discard("A", card("2C")))
    for seat in "BCD":
        game.apply(Draw(seat, "stock", stock.pop()))
        r = game.round
        assert r is not None
        game.apply(Discard(seat, min(r.hands[seat])))
    game.apply(Draw("A", "stock", stock.pop()))
    illegal(game, LayOff("A", 0, ("9S",)), "does not fit")
    illegal(game, LayOff("A", 5, ("9S",)), "no meld 5")
    illegal(game, LayOff("A", 0, ("7C",)), "not in A's hand")


def test_family_quick_layoff_out_of_turn() -> None:
    """classic Common variants, family-quick: after one's contract, lay off at any time, without drawing."""
    game = new("classic", variants=("family-quick",))
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 9S 9H 7C 8C"})
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Open("A", (("7S", "7H", "7D"), ("8S", "8H", "8D"))))
    game.apply(Discard("A", card("9S")))
    game.apply(LayOff("A", 0, ("7C",)))  # B's turn, A lays off anyway
    assert game.round is not None and game.round.turn == "B"


def test_keep_a_card_for_the_final_discard() -> None:
    """petras §04 / classic Gameplay 10: one goes out by discarding, so a lay-off may not empty the hand."""
    game = new("petras")
    stock = deal(game, {"A": "7S 7H 7D 7C 7S 8S 8H 8D 8C 2C"})
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Open("A", (("7S", "7H", "7D", "7C", "7S"), ("8S", "8H", "8D", "8C"))))
    assert game.round is not None and game.round.counts["A"] == 2


def test_open_may_not_empty_the_hand_when_one_goes_out_by_discard() -> None:
    game = new("petras")
    deal(game, {"A": "7S 7H 7D 7C 7S 8S 8H 8D 8C 8S"}, upcard="8H")
    game.apply(Draw("A", "discard"))
    illegal(game, Open("A", (("7S", "7H", "7D", "7C", "7S"), ("8S", "8H", "8D", "8C", "8S", "8H"))), "keep a card")


# ---------------------------------------------------------------- going out and scoring


def test_going_out_by_final_discard_scores_zero_others_count_their_hands() -> None:
    """petras §04, §06: emptying the hand by the last discard wins the round; others count every card."""
    game = new("petras")
    deal(game, {"A": QUICK_OUT[1][0]}, upcard="KD")
    game.apply(Draw("A", "discard"))
    game.apply(Open("A", tuple(tuple(m) for m in QUICK_OUT[1][1])))
    hands_before = {s: hand(game, s) for s in "BCD"}
    game.apply(Discard("A", card("KD")))
    res = game.results[-1]
    assert res.went_out == "A" and res.scores["A"] == 0
    for s in "BCD":
        assert res.scores[s] == sum(game.profile.value(c) for c in hands_before[s])
    assert game.expected_round() == 2


def test_opening_alone_does_not_end_the_round() -> None:
    """petras §06, §07 FAQ: opening is not going out; the round goes on."""
    game, _ = _opened_round_one("petras")
    assert game.round is not None and not game.round.over


def test_petras_round_seven_goes_out_by_discard() -> None:
    """petras §04, §06: a final discard also in round 7; one may open without going out."""
    game = at_round(7, "petras")
    P = first_player(game)
    deal(game, {P: "2S 3S 4S 5S 2H 3H 4H 5H 2D 3D 4D 5D"}, upcard="KC")
    game.apply(Draw(P, "discard"))
    game.apply(Open(P, THREE_RUNS))
    game.apply(Discard(P, card("KC")))
    assert game.complete and game.results[-1].went_out == P


def test_petras_round_seven_may_open_without_going_out() -> None:
    game = at_round(7, "petras")
    P = first_player(game)
    deal(game, {P: "2S 3S 4S 5S 2H 3H 4H 5H 2D 3D 4D 9C"}, upcard="5D")
    game.apply(Draw(P, "discard"))
    game.apply(Open(P, THREE_RUNS))
    r = game.round
    assert r is not None and not r.over and r.counts[P] == 1


def test_classic_round_seven_no_final_discard() -> None:
    """classic Gameplay 1, 7, 10: in round 7 a discard never empties the hand; one goes out by melding."""
    game = at_round(7, "classic")
    P = first_player(game)
    deal(game, {P: "2S 3S 4S 5S 2H 3H 4H 5H 2D 3D 4D 5D"}, upcard="6S")
    game.apply(Draw(P, "discard"))
    game.apply(Open(P, THREE_RUNS))
    illegal(game, Discard(P, card("6S")), "never empty the hand")
    game.apply(LayOff(P, 0, ("6S",)))
    assert game.complete and game.results[-1].went_out == P


def test_classic_round_seven_contract_only_when_going_out() -> None:
    """Seed 000 §01/§06 (and 001 Gameplay 1, 'vider complètement'): classic goes out all at once in
    round 7, so the contract may not go down while cards that cannot be laid off stay in hand."""
    game = at_round(7, "classic")
    P = first_player(game)
    deal(game, {P: "2S 3S 4S 5S 2H 3H 4H 5H 2D 3D 4D 9C"}, upcard="5D")
    game.apply(Draw(P, "discard"))
    illegal(game, Open(P, THREE_RUNS), "going out")


@pytest.mark.parametrize("profile, joker", [("classic", 15), ("petras", 25)])
def test_scoring_values(profile: str, joker: int) -> None:
    """classic Scoring: joker 15, ace 15, K/Q/J 10, 2-10 face value; petras §06: joker 25, the rest alike."""
    game = new(profile)
    deal(game, {"A": QUICK_OUT[1][0], "B": "JK AS KH 10D 2C 3C 4C 5C 6C 9H"}, upcard="KD")
    game.apply(Draw("A", "discard"))
    game.apply(Open("A", tuple(tuple(m) for m in QUICK_OUT[1][1])))
    game.apply(Discard("A", card("KD")))
    assert game.results[-1].scores["B"] == joker + 15 + 10 + 10 + 2 + 3 + 4 + 5 + 6 + 9


# ---------------------------------------------------------------- buying


def _after_a_discard(profile: str = "petras", variants: tuple[str, ...] = ()) -> tuple[Game, list[Card]]:
    game = new(profile, variants=variants)
    stock = deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS"})
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Discard("A", card("2S")))
    return game, stock


def test_buy_takes_discard_and_penalty_and_gives_no_turn() -> None:
    """petras §05 / classic Gameplay 8: the buyer takes the discard plus one penalty card (hand +2), no turn."""
    game, stock = _after_a_discard()
    game.apply(Buy("D", stock.pop()))
    r = game.round
    assert r is not None and r.counts["D"] == 12 and "2S" in r.hands["D"]
    assert r.turn == "B" and not r.drawn and r.buys["D"] == 1
    illegal(game, Discard("D", min(r.hands["D"])), "B's turn")
    illegal(game, Open("D", ()), "B's turn")


def test_petras_turn_player_takes_the_discard_free() -> None:
    """petras §05: the player whose turn it is has priority on the discard, free, no penalty."""
    game, stock = _after_a_discard("petras")
    illegal(game, Buy("B", stock[-1]), "free")
    game.apply(Draw("B", "discard"))
    assert game.round is not None and game.round.counts["B"] == 11


def test_classic_next_player_may_call_and_it_counts_as_a_buy() -> None:
    """classic Gameplay 9: a buy in one's imminent-turn window still counts as a buy."""
    game, stock = _after_a_discard("classic")
    game.apply(Buy("B", stock.pop()))
    r = game.round
    assert r is not None and r.buys["B"] == 1 and r.counts["B"] == 12 and r.turn == "B" and not r.drawn


def test_no_buy_after_the_draw() -> None:
    """petras §04-§05: buys come after a discard, before the player to act draws."""
    game, stock = _after_a_discard()
    game.apply(Draw("B", "stock", stock.pop()))
    illegal(game, Buy("C", stock[-1]), "already drawn")


def test_petras_same_buyer_not_twice_in_a_row_but_another_may_buy_the_new_top() -> None:
    """petras §05: another may buy the newly exposed discard; not the same buyer twice in a row."""
    game = new("petras")
    stock = deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS"}, upcard="QH")
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Discard("A", card("2S")))
    game.apply(Buy("C", stock.pop()))  # takes 2S, QH is exposed
    illegal(game, Buy("C", stock[-1]), "twice in a row")
    game.apply(Buy("D", stock.pop()))
    assert game.round is not None and game.round.pile == []


def test_classic_allows_the_same_buyer_again() -> None:
    """classic: the consecutive-buyer rule is not addressed, so it does not apply."""
    game = new("classic")
    stock = deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS"}, upcard="QH")
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Discard("A", card("2S")))
    game.apply(Buy("C", stock.pop()))
    game.apply(Buy("C", stock.pop()))
    assert game.round is not None and game.round.buys["C"] == 2


def _five_discards_deep(variants: tuple[str, ...] = ()) -> tuple[Game, list[Card]]:
    """A classic round after five discards, so several buys in a row have cards to take."""
    game = new("classic", variants=variants)
    stock = deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS", "B": "2H 3H 4H 5H 6H 7H 8H 9H 10H JH"})
    for seat, c in [("A", "2S"), ("B", "2H")]:
        game.apply(Draw(seat, "stock", stock.pop()))
        game.apply(Discard(seat, card(c)))
    for seat in "CD":
        game.apply(Draw(seat, "stock", stock.pop()))
        r = game.round
        assert r is not None
        game.apply(Discard(seat, max(r.hands[seat])))
    game.apply(Draw("A", "stock", stock.pop()))
    game.apply(Discard("A", card("3S")))
    return game, stock


def test_classic_limit_with_a_full_pile() -> None:
    """classic Gameplay 9, with enough discards below: the fourth buy of one round is refused."""
    game, stock = _five_discards_deep()
    for _ in range(3):
        game.apply(Buy("C", stock.pop()))
    assert game.round is not None and len(game.round.pile) >= 1
    illegal(game, Buy("C", stock[-1]), "all 3 buys")


def test_unlimited_buys_variant() -> None:
    """classic Common variants, unlimited-buys: no per-round limit."""
    game, stock = _five_discards_deep(("unlimited-buys",))
    for _ in range(4):
        game.apply(Buy("C", stock.pop()))
    assert game.round is not None and game.round.buys["C"] == 4


def test_no_buy_variant() -> None:
    """classic Common variants, no-buy: no May I? at all."""
    game, stock = _after_a_discard("classic", ("no-buy",))
    illegal(game, Buy("C", stock[-1]), "without buying")


def test_no_buy_when_no_penalty_card_can_be_had() -> None:
    """petras §05: if the penalty card is unavailable even after recycling, the buy is not completed."""
    game = new("petras")
    deal(game, {"A": "2S 3S 4S 5S 6S 7S 8S 9S 10S JS"}, upcard="QH")
    game.round.stock_count = 0  # type: ignore[union-attr]
    game.round.stock.clear()  # type: ignore[union-attr]
    game.apply(Draw("A", "discard"))
    game.apply(Discard("A", card("2S")))
    illegal(game, Buy("C", None), "no penalty card")


def test_penalty_must_come_from_the_stock() -> None:
    game, stock = _after_a_discard()
    illegal(game, Buy("C", card("2S")), "stock holds no 2S")


# ---------------------------------------------------------------- stock exhaustion


def _exhaust(game: Game, stock: list[Card], stop) -> None:
    """Draw from the stock and discard the drawn card, round the table, until `stop()`."""
    while not stop():
        r = game.round
        assert r is not None
        seat = r.turn
        if r.stock_count == 0:
            return
        c = stock.pop() if stock else None
        game.apply(Draw(seat, "stock", c))
        if r.over:
            return
        game.apply(Discard(seat, c))


def test_petras_recycles_as_often_as_needed() -> None:
    """petras §06: an empty stock is rebuilt from the old discards except the top card, as often as needed."""
    game = new("petras")
    stock = deal(game)
    r = game.round
    assert r is not None
    _exhaust(game, stock, lambda: r.stock_count == 0)
    assert r.stock_count == 0 and len(r.pile) == 68
    seat = r.turn
    pile_below = r.pile[:-1]
    game.apply(Draw(seat, "stock", pile_below[0]))
    assert r.recycles == 1 and r.stock_count == 66 and len(r.pile) == 1
    assert sum(game.accounted().values()) == 108 and game.accounted() == game.deck


def test_classic_second_exhaustion_ends_the_round() -> None:
    """classic Scoring: reshuffle once; a second exhaustion ends the round at once, every hand counted."""
    game = new("classic")
    stock = deal(game)
    r = game.round
    assert r is not None
    _exhaust(game, stock, lambda: r.stock_count == 0)
    # second pass over the recycled stock, drawing whatever it holds
    while not r.over:
        seat = r.turn
        pool = r.stock if r.stock_count else __import__("collections").Counter(r.pile[:-1])
        c = min(pool)
        game.apply(Draw(seat, "stock", c))
        if not r.over:
            game.apply(Discard(seat, c))
    res = game.results[-1]
    assert res.went_out is None and r.recycles == 1 and all(v > 0 for v in res.scores.values())


# ---------------------------------------------------------------- end of game


def _seven_observed_rounds(profile: str, extra: dict[str, list[int]]) -> Game:
    """Seven observed rounds won in turn by A, B, C, D, A, B, C; every loser shows 100 points,
    give or take the points listed in `extra[seat]`, one per round that seat loses."""
    game = new(profile)
    for _ in range(7):
        first = first_player(game)
        values = {}
        for s in game.seats:
            if s == first:
                continue
            values[s] = 100 + (extra[s].pop(0) if extra.get(s) else 0)
        observed_quick_round(game, values)
    return game


def test_petras_ties_are_shared() -> None:
    """petras §06: the lowest total wins; ties are shared."""
    game = _seven_observed_rounds("petras", {"C": [10]})
    assert game.totals() == {"A": 500, "B": 500, "C": 510, "D": 600}
    assert game.complete and game.winners == ["A", "B"]


def test_classic_tie_goes_to_the_player_who_went_out_more() -> None:
    """classic Scoring: the tied player who went out in more rounds wins."""
    game = _seven_observed_rounds("classic", {"B": [10], "C": [10], "D": [-20] * 5})
    assert game.totals()["A"] == game.totals()["D"] == 500
    assert game.complete and game.winners == ["A"]


def test_classic_tie_still_tied_plays_a_tiebreak_round() -> None:
    """classic Scoring: still tied on rounds won, one tie-break round: contract two runs, 10 cards."""
    game = _seven_observed_rounds("classic", {"C": [10]})
    assert not game.complete and game.tiebreak_players == ("A", "B")
    assert game.expected_round() == "tiebreak"
    contract = game.profile.contract("tiebreak")
    assert (contract.groups, contract.runs, contract.dealt) == (0, 2, 10)
    observed_quick_round(game, {"A": 30, "B": 30})
    assert game.complete and len(game.winners) == 1
    assert game.results[-1].round == "tiebreak" and set(game.results[-1].scores) == {"A", "B"}


# ---------------------------------------------------------------- observed games


def test_observed_round_tracks_hand_sizes_and_scores_the_shown_hands() -> None:
    """GAME_RECORD.md Observed games: hands unknown, counts tracked; round_end shows the hands."""
    game = new("petras")
    deal(game, observed=True, upcard="KD")
    game.apply(Draw("A", "discard"))
    assert game.round is not None and game.round.counts["A"] == 11
    game.apply(Open("A", (("2S", "2H", "2D", "2C", "2S"), ("3S", "3H", "3D", "3C", "3S"))))
    illegal(game, Discard("A", card("2S")), "in play already")
    game.apply(Discard("A", card("KD")))
    assert game.round.over and not game.results
    illegal(game, RoundEnd({"A": (), "B": tuple(cards("KS")), "C": (), "D": ()}), "holds 10 cards")
    shown = {
        "A": (),
        "B": tuple(cards("4S 4H 4D 4C 5S 5H 5D 5C 6S 6H")),
        "C": tuple(cards("7S 7H 7D 7C 8S 8H 8D 8C 9S 9H")),
        "D": tuple(cards("JK JK JK JK AS AS AH AH AD AD")),
    }
    game.apply(RoundEnd(shown))
    assert game.results[-1].scores == {"A": 0, "B": 16 + 20 + 12, "C": 28 + 32 + 18, "D": 100 + 90}
    assert game.state_dict()["hands"] == {"A": 0, "B": 10, "C": 10, "D": 10}


def test_observed_round_end_cannot_show_a_card_that_is_face_up() -> None:
    game = new("petras")
    deal(game, observed=True, upcard="KD")
    game.apply(Draw("A", "discard"))
    game.apply(Open("A", (("2S", "2H", "2D", "2C", "2S"), ("3S", "3H", "3D", "3C", "3S"))))
    game.apply(Discard("A", card("KD")))
    bad = {
        "A": (),
        "B": tuple(cards("2S 4H 4D 4C 5S 5H 5D 5C 6S 6H")),
        "C": tuple(cards("7S 7H 7D 7C 8S 8H 8D 8C 9S 9H")),
        "D": tuple(cards("JK JK JK JK AS AS AH AH AD AD")),
    }
    illegal(game, RoundEnd(bad), "face-up elsewhere")


def test_round_end_before_the_round_is_over_is_refused() -> None:
    game = new("petras")
    deal(game, observed=True)
    illegal(game, RoundEnd({s: () for s in "ABCD"}), "not ended")


# ---------------------------------------------------------------- pure form and legal actions


def test_apply_is_pure() -> None:
    """DESIGN.md: state = apply(state, event); the old state is untouched."""
    game = new()
    stock = deal(game)
    before = game.state_dict()
    after = apply(game, Draw("A", "stock", stock[-1]))
    assert game.state_dict() == before and after.state_dict() != before


def test_legal_actions_lists_what_a_seat_may_do() -> None:
    game = new()
    stock = deal(game, {"A": "7S 7H 7D 8S 8H 8D 9S 9H 9D 2C"})
    kinds = {a.kind for a in legal_actions(game, "A")}
    assert kinds == {"draw_stock", "draw_discard"}
    assert {a.kind for a in legal_actions(game, "C")} == {"buy"}
    game.apply(Draw("A", "stock", stock.pop()))
    acts = legal_actions(game, "A")
    assert {a.kind for a in acts} == {"open", "discard"}
    for a in acts:
        assert a.event is not None
        apply(game, a.event)  # every listed event is legal
    assert legal_actions(game, "B") == []


def test_game_over_refuses_more_events() -> None:
    game = at_round(7)
    P = first_player(game)
    deal(game, {P: "2S 3S 4S 5S 2H 3H 4H 5H 2D 3D 4D 5D"}, upcard="KC")
    game.apply(Draw(P, "discard"))
    game.apply(Open(P, THREE_RUNS))
    game.apply(Discard(P, card("KC")))
    assert game.complete
    illegal(game, Draw("B", "stock", card("KC")), "game is over")
    illegal(game, Deal(8, "B", card("KC"), None), "game is over")


def test_any_seat_may_deal_first() -> None:
    """petras §02 (first dealer by lot) / classic Setup 1 (high-card cut): the record names the first dealer."""
    for dealer in "ABCD":
        game = new()
        game.apply(Deal(1, dealer, card("KD"), None))
        seats = "ABCD"
        assert game.round is not None and game.round.turn == seats[(seats.index(dealer) + 1) % 4]


def test_everyone_advances_to_the_next_contract() -> None:
    """petras §02 / classic Gameplay 1: all players move on to the next contract, met or not."""
    game = at_round(2)
    assert game.expected_round() == 2
    deal(game)
    assert game.round is not None and game.round.contract.words() == "one group + one run"


def test_jokers_on_the_table_stay_fixed() -> None:
    """petras §04 and FAQ: exposed jokers are never moved, swapped or taken back; a natural card cannot
    replace one, and a run grows only at its ends. The record has no event that moves a joker."""
    game = at_round(3)
    P = first_player(game)
    stock = deal(game, {P: "3H 4H JK 6H 7H 3S 4S 5S 6S 5H"})
    game.apply(Draw(P, "stock", stock.pop()))
    game.apply(Open(P, (("3H", "4H", "JK", "6H", "7H"), ("3S", "4S", "5S", "6S"))))
    assert game.state_dict()["table"][0] == ["3H", "4H", "JK:5H", "6H", "7H"]
    r = game.round
    assert r is not None
    game.apply(Discard(P, max(c for c in r.hands[P] if c != "5H")))
    for _ in range(4):
        seat = r.turn
        game.apply(Draw(seat, "stock", stock.pop()))
        if seat == P:
            illegal(game, LayOff(P, 0, ("5H",)), "does not extend")
            break
        game.apply(Discard(seat, max(r.hands[seat])))
    result, _ = replay_lines(
        ['{"type":"game","profile":"petras","variants":[],"seats":["A","B","C"]}', '{"type":"swap"}']
    )
    assert result["error"]["line"] == 2 and "unknown event type" in result["error"]["message"]


def test_claim_priority_nearest_clockwise_after_the_discarder() -> None:
    """petras §05 / classic Gameplay 8: among several claimants the nearest clockwise after the
    discarder wins, not the fastest or loudest; refused claimants are passed over."""
    from mayi_table.rules.engine import claim_winner

    game, stock = _after_a_discard("petras")  # A discarded; B is to act
    assert claim_winner(game, ["D", "C"]) == "C"
    assert claim_winner(game, ["D"]) == "D"
    assert claim_winner(game, ["B", "D"]) == "D"  # petras: B takes it free as its draw, not as a buy
    game.apply(Buy("C", stock.pop()))
    assert claim_winner(game, ["C", "D"]) == "D"  # C may not buy twice in a row (petras §05)
    classic, _ = _after_a_discard("classic")
    assert claim_winner(classic, ["D", "B"]) == "B"  # classic Gameplay 9: B's call counts as a buy
    assert claim_winner(classic, []) is None
