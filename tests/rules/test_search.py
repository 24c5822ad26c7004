"""Meld search against brute force, lay-off options, and the bots and simulate command."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mayi_table.rules.cards import JOKER, Card, make_deck
from mayi_table.rules.engine import Game
from mayi_table.rules.events import Buy, GameStart
from mayi_table.rules.melds import read_meld
from mayi_table.rules.profiles import make_profile
from mayi_table.rules.record import replay_file
from mayi_table.rules.search import can_lay_contract, can_lay_off_all, layoff_options, search_contract
from mayi_table.rules.simulate import play_game, simulate, statistics_of

from .helpers import cards
from .test_replay import run_cli

PETRAS = make_profile("petras")
CLASSIC = make_profile("classic")
DECK = sorted(make_deck(2, 4).elements())


def brute_force_can_lay(hand: list[Card], groups: int, runs: int, profile) -> bool:
    """Try every way to put each card in meld 1, meld 2 or neither (two-meld contracts)."""
    kinds = ["group"] * groups + ["run"] * runs
    for assign in itertools.product((0, 1, 2), repeat=len(hand)):
        melds = [[c for c, a in zip(hand, assign) if a == k] for k in (1, 2)]
        ok = all(
            read_meld([c if c != JOKER else "JK" for c in m], profile, kind=kind) for m, kind in zip(melds, kinds)
        ) or all(
            read_meld([c if c != JOKER else "JK" for c in m], profile, kind=kind)
            for m, kind in zip(melds, reversed(kinds))
        )
        if ok:
            return True
    return False


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(
    hand=st.lists(st.sampled_from(DECK), min_size=7, max_size=9),
    shape=st.sampled_from([(2, 0), (1, 1), (0, 2)]),
    profile=st.sampled_from([PETRAS, CLASSIC]),
)
def test_contract_search_agrees_with_brute_force(hand: list[Card], shape: tuple[int, int], profile) -> None:
    """Meld search: can this hand lay this round's contract (jokers included)."""
    contract = next(c for c in profile.rounds if (c.groups, c.runs) == shape)
    assert can_lay_contract(hand, contract, profile) == brute_force_can_lay(hand, *shape, profile)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(hand=st.lists(st.sampled_from(DECK), min_size=10, max_size=16), round_no=st.integers(1, 7))
def test_plans_are_legal_and_account_for_every_card(hand: list[Card], round_no: int) -> None:
    contract = PETRAS.contract(round_no)
    plan = search_contract(hand, contract, PETRAS)
    assert plan is not None
    laid = Counter(c.split(":")[0] for m in plan.melds for c in m)
    assert laid + Counter(plan.cards_left) == Counter(hand)
    assert plan.points_left == sum(PETRAS.value(c) for c in plan.cards_left)
    for meld, kind in zip(plan.melds, plan.kinds):
        assert read_meld(list(meld), PETRAS, kind=kind, run_min=contract.run_min)
    if plan.complete:
        game = Game(GameStart("petras", (), ("A", "B", "C")))
        assert len(plan.melds) == contract.groups + contract.runs
        _ = game


def test_best_plan_keeps_fewest_points() -> None:
    """With a choice, the search melds the dearer cards."""
    plan = search_contract(cards("7H 7S 7D KH KS KD 2C 2D 2H 9C"), PETRAS.contract(1), PETRAS)
    assert plan is not None and plan.complete
    assert {m[0][:-1] for m in plan.melds} == {"7", "K"} and plan.points_left == 2 + 2 + 2 + 9


def test_best_partial_when_the_contract_cannot_be_laid() -> None:
    plan = search_contract(cards("7H 7S 7D 2C 5D 9H JC QS 3S 8D"), PETRAS.contract(1), PETRAS)
    assert plan is not None and not plan.complete and plan.melds == (("7S", "7H", "7D"),)


def test_jokers_lengthen_melds_instead_of_staying_in_hand() -> None:
    plan = search_contract(cards("7H 7S 7D 8S 8H 8D JK 2C"), PETRAS.contract(1), PETRAS)
    assert plan is not None and plan.complete and "JK" not in plan.cards_left


def test_contiguous_runs_found_separately() -> None:
    """petras §03, §07: 3H-7H and 8H-JH are two runs."""
    hand = cards("3H 4H 5H 6H 7H 8H 9H 10H JH 2D QC AC KS")
    plan = search_contract(hand, PETRAS.contract(3), PETRAS)
    assert plan is not None and plan.complete and sorted(plan.cards_left) == ["2D", "AC", "KS", "QC"]


def test_layoff_options() -> None:
    table = [read_meld(cards("4C 5C 6C 7C"), PETRAS)[0], read_meld(cards("9S 9H 9D"), PETRAS)[0]]
    opts = layoff_options(cards("3C 8C 9C JK 2H"), table, PETRAS)
    assert set(opts) == {(0, "3C"), (0, "8C"), (1, "9C"), (0, "JK:3C"), (0, "JK:8C"), (1, "JK")}
    assert can_lay_off_all(cards("3C 2C"), table, PETRAS)
    assert not can_lay_off_all(cards("2C"), table, PETRAS)


def test_bots_play_complete_legal_games_with_buys() -> None:
    runs = simulate("petras", 4, 3, seed=4) + simulate("classic", 5, 3, seed=4)
    for run in runs:
        assert run.game.complete and run.game.winners
    assert sum(isinstance(e, Buy) for run in runs for e in run.events) > 0
    stats = statistics_of(runs)
    assert stats.games == 6 and stats.rounds >= 42


def test_both_strategies_alone() -> None:
    for strategy in ("planner", "chancer"):
        run = play_game("classic", 4, 8, strategies=(strategy,))
        assert run.game.complete


def test_simulate_cli_is_deterministic_and_records_replay(tmp_path: Path) -> None:
    args = ["simulate", "--profile", "classic", "--players", "4", "--games", "3", "--seed", "9", "--json"]
    first = run_cli(*args, "--records", str(tmp_path))
    second = run_cli(*args)
    assert first.returncode == 0, first.stderr
    stats = json.loads(first.stdout)
    assert stats == json.loads(second.stdout)
    for key in (
        "winner_total_mean",
        "winner_total_median",
        "mean_round_score",
        "buys_per_round",
        "rounds_without_winner",
    ):
        assert key in stats
    files = sorted(tmp_path.glob("*.mayi.jsonl"))
    assert len(files) == 3
    for f in files:
        result, _ = replay_file(f)
        assert result["ok"] and result["complete"]


def test_simulate_cli_refuses_bad_arguments() -> None:
    out = run_cli("simulate", "--profile", "petras", "--players", "7", "--games", "1")
    assert out.returncode == 2 and "3 to 6 players" in out.stderr and "Traceback" not in out.stderr
    out = run_cli("simulate", "--variant", "bogus", "--games", "1")
    assert out.returncode == 2 and "unknown variant" in out.stderr
