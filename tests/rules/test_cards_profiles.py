"""Cards, decks and rule profiles: notation from GAME_RECORD.md, deck sizes and values from the seeds."""

import pytest

from mayi_table.rules.cards import CardError, make_deck, parse_card, parse_placed
from mayi_table.rules.profiles import Contract, ProfileError, make_profile

from .helpers import deal, new


@pytest.mark.parametrize(
    "text, card",
    [("7H", "7H"), ("10S", "10S"), ("TS", "10S"), ("Q♣", "QC"), ("a♥", "AH"), ("JK", "JK"), ("AD", "AD")],
)
def test_card_notation(text: str, card: str) -> None:
    """GAME_RECORD.md Cards: ranks A 2-10 J Q K (T for 10), suits S H D C (symbols accepted)."""
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["1H", "11S", "7X", "", "JK:ZZ", 7, None, "HH"])
def test_unknown_cards_are_refused(text: object) -> None:
    with pytest.raises(CardError):
        parse_placed(text)


def test_fixed_joker_notation() -> None:
    """GAME_RECORD.md: `JK:9H` fixes the card a joker stands for."""
    assert parse_placed("JK:9H") == ("JK", "9H")
    assert parse_placed("JK:T♥") == ("JK", "10H")
    with pytest.raises(CardError):
        parse_placed("7H:9H")


def test_cards_are_a_multiset() -> None:
    """Shared core: two decks hold two identical 7H."""
    deck = make_deck(2, 4)
    assert deck["7H"] == 2 and deck["JK"] == 4 and sum(deck.values()) == 108


@pytest.mark.parametrize(
    "profile, players, size",
    [
        ("petras", 3, 108),
        ("petras", 4, 108),
        ("petras", 5, 162),
        ("petras", 6, 162),
        ("classic", 2, 108),
        ("classic", 6, 108),
        ("classic", 7, 162),
        ("classic", 8, 162),
    ],
)
def test_deck_per_profile_and_players(profile: str, players: int, size: int) -> None:
    """petras §02: 2 decks + 4 jokers for 3-4, 3 decks + 6 jokers for 5-6;
    classic Card deck: 108 for 3-6, 162 for 7-8."""
    p = make_profile(profile, players=players)
    assert p.deck_size(players) == size


def test_no_jokers_variant_deck() -> None:
    """classic Common variants, no-jokers: 104 cards."""
    assert make_profile("classic", ["no-jokers"]).deck_size(4) == 104


def test_petras_four_players_round_one_stock_is_67() -> None:
    """petras §02: with 4 players in round 1 the stock holds 67 cards."""
    game = new("petras")
    deal(game)
    assert game.round is not None and game.round.stock_count == 67


@pytest.mark.parametrize("players", [2, 7, 8])
def test_petras_player_count_refused(players: int) -> None:
    """petras §02 gives decks for 3-6 players only; any other count is refused, never a silent small deck."""
    with pytest.raises(ProfileError, match="3 to 6 players"):
        make_profile("petras", players=players)


def test_classic_player_count() -> None:
    """classic Players: 3-8, two possible."""
    make_profile("classic", players=2)
    with pytest.raises(ProfileError):
        make_profile("classic", players=9)


def test_unknown_profile_and_variant_refused() -> None:
    with pytest.raises(ProfileError, match="unknown profile"):
        make_profile("liverpool")
    with pytest.raises(ProfileError, match="unknown variant"):
        make_profile("classic", ["joker-swap"])


def test_variants_belong_to_classic() -> None:
    """RULES.md: the variants are classic's Common variants; petras is played as written (petras §06)."""
    with pytest.raises(ProfileError, match="classic"):
        make_profile("petras", ["no-buy"])


@pytest.mark.parametrize("pair", [["no-buy", "unlimited-buys"], ["no-buy", "contract-rummy"]])
def test_impossible_variant_combinations(pair: list[str]) -> None:
    with pytest.raises(ProfileError, match="cannot be combined"):
        make_profile("classic", pair)


def test_cards_dealt_per_round() -> None:
    """petras §02: 10 cards in rounds 1-3, 12 in 4-7; classic Setup: 10 in 1-4, 12 in 5-7."""
    assert [c.dealt for c in make_profile("petras").rounds] == [10, 10, 10, 12, 12, 12, 12]
    assert [c.dealt for c in make_profile("classic").rounds] == [10, 10, 10, 10, 12, 12, 12]


def test_contracts() -> None:
    """petras §03 and classic Gameplay 1: the seven contracts."""
    shapes = [(c.groups, c.runs) for c in make_profile("petras").rounds]
    assert shapes == [(2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3)]
    assert [(c.groups, c.runs) for c in make_profile("classic").rounds] == shapes
    assert make_profile("classic").rounds[2].words() == "two runs"


def test_nine_rounds_variant() -> None:
    """classic Common variants: two extra rounds (4 groups; 3 runs of 5); placed after R4 and after R6."""
    rounds = make_profile("classic", ["nine-rounds"]).rounds
    assert len(rounds) == 9
    assert rounds[4] == Contract(4, 0, dealt=12)
    assert rounds[7] == Contract(0, 3, dealt=12, run_min=5)
    assert (rounds[8].groups, rounds[8].runs) == (0, 3)


@pytest.mark.parametrize(
    "profile, card, points",
    [
        ("petras", "JK", 25),
        ("petras", "AS", 15),
        ("petras", "KH", 10),
        ("petras", "10D", 10),
        ("petras", "7C", 7),
        ("classic", "JK", 15),
        ("classic", "AS", 15),
        ("classic", "QH", 10),
        ("classic", "10D", 10),
        ("classic", "2C", 2),
    ],
)
def test_card_values(profile: str, card: str, points: int) -> None:
    """petras §06: joker 25, ace 15, K Q J 10 = 10, numbers face value; classic Scoring: joker 15, ace 15, K/Q/J 10."""
    assert make_profile(profile).value(card) == points


def test_contract_rummy_values_are_configurable() -> None:
    """classic Common variants, contract-rummy: values differ and are not given;
    a documented default, and the game line's card_values."""
    p = make_profile("classic", ["contract-rummy"])
    assert p.value("5H") == 5 and p.value("JK") == 50 and p.buy_limit is None
    values = {**{str(n): n for n in range(2, 11)}, "J": 11, "Q": 12, "K": 13, "A": 1, "JK": 0}
    assert make_profile("classic", ["contract-rummy"], card_values=values).value("KH") == 13
    with pytest.raises(ProfileError, match="missing"):
        make_profile("classic", card_values={"A": 1})


def test_profile_fields_differ_as_the_table_says() -> None:
    """RULES.md difference table, one field per row."""
    p, c = make_profile("petras"), make_profile("classic")
    assert (p.ace_high, c.ace_high) == (True, False)
    assert (p.buy_limit, c.buy_limit) == (None, 3)
    assert (p.consecutive_buyer_forbidden, c.consecutive_buyer_forbidden) == (True, False)
    assert (p.layoff_on_opening_turn, c.layoff_on_opening_turn) == (False, True)
    assert (p.last_round_out_by_discard, c.last_round_out_by_discard) == (True, False)
    assert (p.stock_recycles, c.stock_recycles) == (None, 1)
    assert (p.ties, c.ties) == ("shared", "rounds-won-then-tiebreak")
    assert (p.turn_player_may_buy, c.turn_player_may_buy) == (False, True)
    assert p.contiguous_runs and c.contiguous_runs
    assert make_profile("classic", ["ace-wrap"]).ace_high
