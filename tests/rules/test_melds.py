"""Groups, runs, jokers and lay-offs (petras §03-§04; classic Card deck, Gameplay 2-3, 6)."""

import pytest

from mayi_table.rules.melds import MeldError, layoff, read_meld
from mayi_table.rules.profiles import make_profile

PETRAS = make_profile("petras")
CLASSIC = make_profile("classic")
ACE_HIGH = make_profile("classic", ["ace-high"])
WRAP = make_profile("classic", ["ace-wrap"])


def kinds(cards: str, profile=PETRAS) -> list[tuple[str, list[str]]]:
    return [(m.kind, m.written()) for m in read_meld(cards.split(), profile)]


def test_group_of_three_suits_may_repeat() -> None:
    """petras §03 / classic Gameplay 2: a group is >= 3 of one rank, suits may repeat."""
    assert kinds("7H 7H 7S") == [("group", ["7H", "7H", "7S"])]
    assert kinds("7H 7S") == []
    assert kinds("7H 7S 8S") == []


def test_run_of_four_one_suit() -> None:
    """petras §03 / classic Gameplay 3: a run is >= 4 consecutive cards of one suit."""
    assert kinds("3H 4H 5H 6H") == [("run", ["3H", "4H", "5H", "6H"])]
    assert kinds("3H 4H 5H") == []
    assert kinds("3H 4H 5S 6H") == []
    assert kinds("3H 4H 6H 7H") == []


def test_run_may_be_listed_descending() -> None:
    """GAME_RECORD.md: a run is listed ascending or descending."""
    assert kinds("6H 5H 4H 3H") == [("run", ["3H", "4H", "5H", "6H"])]


def test_joker_fills_a_gap_where_it_stands() -> None:
    """petras §03: a joker replaces a missing card; its role must be clear."""
    assert kinds("3H 4H JK 6H") == [("run", ["3H", "4H", "JK:5H", "6H"])]
    assert kinds("7H JK 7S") == [("group", ["7H", "JK:7", "7S"])]


def test_ambiguous_joker_has_several_readings() -> None:
    """petras §03 / GAME_RECORD.md: a joker whose role is ambiguous must be fixed with JK:..."""
    readings = read_meld("7H JK JK JK".split(), PETRAS)
    assert len(readings) == 3
    fixed = read_meld("7H JK:8H JK JK".split(), PETRAS)
    assert [m.written() for m in fixed] == [["7H", "JK:8H", "JK:9H", "JK:10H"]]


def test_ace_low_or_high_in_petras() -> None:
    """petras §03: ace low or high (A-2-3-4 and J-Q-K-A), no K-A-2."""
    assert kinds("AH 2H 3H 4H")[0][0] == "run"
    assert kinds("JH QH KH AH")[0][0] == "run"
    assert kinds("QH KH AH 2H") == []


def test_ace_low_only_in_classic() -> None:
    """classic Card deck: the ace is low only; Q-K-A is the ace-high variant; no K-A-2 wrap."""
    assert kinds("AH 2H 3H 4H", CLASSIC)[0][0] == "run"
    assert kinds("JH QH KH AH", CLASSIC) == []
    assert kinds("JH QH KH AH", ACE_HIGH)[0][0] == "run"
    assert kinds("QH KH AH 2H", ACE_HIGH) == []


def test_ace_wrap_variant() -> None:
    """classic Common variants, ace-high: some also allow wrap K-A-2."""
    assert kinds("QH KH AH 2H", WRAP) == [("run", ["QH", "KH", "AH", "2H"])]


def test_run_cannot_hold_fourteen_cards() -> None:
    """A run of all thirteen ranks is the longest; A..K..A would repeat a rank."""
    thirteen = "AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH"
    run = read_meld(thirteen.split(), PETRAS)[0]
    with pytest.raises(MeldError):
        layoff(run, "AH", PETRAS)


def test_layoff_onto_group_and_either_end_of_run() -> None:
    """petras §04 / classic Gameplay 6: lay-offs extend a group or either end of a run."""
    group = read_meld("9S 9H 9D".split(), PETRAS)[0]
    assert layoff(group, "9S", PETRAS).written() == ["9S", "9H", "9D", "9S"]
    with pytest.raises(MeldError, match="does not fit"):
        layoff(group, "8S", PETRAS)
    run = read_meld("4C 5C 6C 7C".split(), PETRAS)[0]
    assert layoff(run, "3C", PETRAS).written()[0] == "3C"
    assert layoff(run, "8C", PETRAS).written()[-1] == "8C"
    with pytest.raises(MeldError, match="3C or 8C"):
        layoff(run, "9C", PETRAS)
    with pytest.raises(MeldError):
        layoff(run, "8H", PETRAS)


def test_joker_layoff_on_run_must_say_which_end() -> None:
    """GAME_RECORD.md: a joker laid off onto a run is written JK:... when both ends fit."""
    run = read_meld("4C 5C 6C 7C".split(), PETRAS)[0]
    with pytest.raises(MeldError, match="either end"):
        layoff(run, "JK", PETRAS)
    assert layoff(run, "JK:8C", PETRAS).written()[-1] == "JK:8C"
    low_run = read_meld("AC 2C 3C 4C".split(), CLASSIC)[0]
    assert layoff(low_run, "JK", CLASSIC).written()[-1] == "JK:5C"  # only the high end is open


def test_wrap_layoff_past_the_king() -> None:
    run = read_meld("10H JH QH KH".split(), WRAP)[0]
    assert layoff(run, "AH", WRAP).written() == ["10H", "JH", "QH", "KH", "AH"]


def test_ace_onto_two_to_king_in_petras() -> None:
    """petras §03: ace low or high; onto 2H-KH an ace completes the run whichever end it takes."""
    run = read_meld("2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH".split(), PETRAS)[0]
    assert len(layoff(run, "AH", PETRAS).cards) == 13
    assert len(layoff(run, "JK:AH", PETRAS).cards) == 13
