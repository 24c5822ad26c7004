"""Invariants over many simulated games (hypothesis): every physical card is in exactly one place
after every event, and every record replays to the same result, known or observed."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mayi_table.rules.engine import Game
from mayi_table.rules.events import Event
from mayi_table.rules.profiles import make_profile
from mayi_table.rules.record import as_observed, dumps_event, replay_lines, result_of
from mayi_table.rules.simulate import play_game

CONFIGS = [
    ("petras", ()),
    ("classic", ()),
    ("classic", ("no-buy",)),
    ("classic", ("unlimited-buys",)),
    ("classic", ("ace-high",)),
    ("classic", ("ace-wrap",)),
    ("classic", ("nine-rounds",)),
    ("classic", ("family-quick",)),
    ("classic", ("no-jokers",)),
    ("classic", ("contract-rummy",)),
]
GAMES_PER_CONFIG = 200  # 2,000 games in all


def check_every_card_once(game: Game, ev: Event) -> None:
    r = game.round
    if r is None:
        return
    assert game.accounted() == game.deck, f"cards lost or doubled after {ev}"
    assert sum(r.counts.values()) + r.stock_count + len(r.pile) + sum(len(m.cards) for m in r.table) == sum(
        game.deck.values()
    )
    if not r.observed:
        assert sum(r.stock.values()) == r.stock_count
        assert all(sum(r.hands[s].values()) == r.counts[s] for s in r.players)
    assert all(n >= 0 for n in r.counts.values())


@pytest.mark.parametrize("profile, variants", CONFIGS, ids=["+".join((p,) + v) for p, v in CONFIGS])
@settings(max_examples=GAMES_PER_CONFIG, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cards_accounted_and_records_replay(profile: str, variants: tuple[str, ...], data: st.DataObject) -> None:
    p = make_profile(profile, variants)
    players = data.draw(st.integers(max(3, p.min_players), min(6, p.max_players)), label="players")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    run = play_game(profile, players, seed, variants, on_event=check_every_card_once)
    assert run.game.complete and run.game.winners
    expected = result_of(run.game)
    lines = [dumps_event(ev) for ev in run.events]
    replayed, _ = replay_lines(lines)
    assert replayed == json.loads(json.dumps(expected))
    observed, _ = replay_lines([dumps_event(ev) for ev in as_observed(run.events)])
    assert observed["ok"], observed.get("error")
    assert observed["rounds"] == replayed["rounds"] and observed["winners"] == replayed["winners"]


def test_same_seed_same_game() -> None:
    """Simulation is deterministic per seed."""
    a = play_game("petras", 4, 99)
    b = play_game("petras", 4, 99)
    assert [dumps_event(e) for e in a.events] == [dumps_event(e) for e in b.events]
    c = play_game("petras", 4, 100)
    assert [dumps_event(e) for e in a.events] != [dumps_event(e) for e in c.events]
