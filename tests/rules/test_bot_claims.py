"""Bots never claim a card they discarded themselves (the claim desk passes the discarder over)."""

from __future__ import annotations

import pytest

from mayi_table.rules.engine import Game
from mayi_table.rules.events import Buy, Deal, Discard, Draw, Event
from mayi_table.rules.simulate import play_game


@pytest.mark.parametrize("profile,seed", [("classic", 8), ("classic", 1001), ("petras", 1000), ("petras", 11)])
def test_bots_never_buy_back_their_own_discard(profile: str, seed: int) -> None:
    thrown: list[str | None] = []  # who threw each card of the pile, top last
    buys = 0

    def check(game: Game, ev: Event) -> None:
        nonlocal buys
        r = game.round
        assert r is not None
        if isinstance(ev, Deal):
            thrown[:] = [None]
        elif isinstance(ev, Discard):
            thrown.append(ev.seat)
        elif isinstance(ev, Buy):
            buys += 1
            assert thrown and thrown[-1] != ev.seat, f"{ev.seat} bought back its own discard"
            thrown.pop()
        elif isinstance(ev, Draw) and ev.source_pile == "discard":
            thrown.pop()
        del thrown[: max(0, len(thrown) - len(r.pile))]  # a recycled stock takes the pile under the top

    play_game(profile, 4, seed, on_event=check)
    assert buys > 0
