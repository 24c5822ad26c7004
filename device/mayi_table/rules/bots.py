"""Bot players: strategies that choose legal events for a seat, used by simulation and the demo.

`planner` keeps cards that build its contract and buys what completes it; `chancer` plays
legal but loose moves, buying and drawing the discard at random. Both open as soon as the
contract is in hand and lay off whatever fits.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Protocol

from .cards import JOKER, RANK_VALUE, RANKS, Card
from .engine import Game, Round
from .events import Discard, Event, LayOff, Open
from .melds import layoff as extend_meld
from .melds import read_meld
from .search import can_lay_off_all, layoff_options, search_contract


class Strategy(Protocol):
    name: str

    def wants_discard(self, game: Game, seat: str, card: Card) -> bool: ...

    def wants_buy(self, game: Game, seat: str, card: Card) -> bool: ...

    def play(self, game: Game, seat: str) -> Event: ...


def _usefulness(card: Card, hand: Counter[Card], r: Round) -> int:
    """How much `card` helps build this round's contract from `hand` (which includes it)."""
    if card == JOKER:
        return 100
    rank, suit = card[:-1], card[-1]
    score = 0
    c = r.contract
    if c.groups:
        same = sum(hand[Card(rank + s)] for s in "SHDC") - 1
        score += 3 * same
    if c.runs:
        v = RANK_VALUE[rank]
        for d in (-2, -1, 1, 2):
            w = v + d
            if 1 <= w <= 13 and hand[Card(RANKS[w - 1] + suit)]:
                score += 3 if abs(d) == 1 else 2
    return score


def _hand(game: Game, seat: str) -> Counter[Card]:
    r = game.round
    assert r is not None
    return r.hands[seat]


def _fits_table(game: Game, card: Card) -> bool:
    r = game.round
    assert r is not None
    return bool(layoff_options([card], r.table, game.profile))


def _keep_one(melds: tuple[tuple[str, ...], ...], kinds: tuple[str, ...], game: Game) -> list[list[str]] | None:
    """The melds with one card held back, so a final discard stays possible; None if no meld can spare one."""
    r = game.round
    assert r is not None
    c = r.contract
    best: tuple[int, list[list[str]]] | None = None
    for i, (m, kind) in enumerate(zip(melds, kinds)):
        need = c.group_min if kind == "group" else c.run_min
        if len(m) <= need:
            continue
        ends = [len(m) - 1] if kind == "group" else [0, len(m) - 1]
        for j in ends:
            rest = list(m[:j] + m[j + 1 :])
            if not read_meld(rest, game.profile, kind=kind, run_min=c.run_min):
                continue
            card = m[j].split(":")[0]
            cost = game.profile.value(card)
            if best is None or cost < best[0]:
                best = (cost, [list(x) if k != i else rest for k, x in enumerate(melds)])
    return None if best is None else best[1]


class _Base:
    name = "base"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def wants_discard(self, game: Game, seat: str, card: Card) -> bool:
        raise NotImplementedError

    def wants_buy(self, game: Game, seat: str, card: Card) -> bool:
        raise NotImplementedError

    def opening(self, game: Game, seat: str) -> Event | None:
        r = game.round
        assert r is not None
        if seat in r.opened:
            return None
        hand = _hand(game, seat)
        plan = search_contract(hand, r.contract, game.profile, partial=False)
        if plan is None:
            return None
        melds: list[list[str]] = [list(m) for m in plan.melds]
        must_keep = not (r.last_round and not game.profile.last_round_out_by_discard)
        if must_keep and not plan.cards_left:
            kept = _keep_one(plan.melds, plan.kinds, game)
            if kept is None:
                return None
            melds = kept
        if r.last_round and game.profile.last_round_all_at_once and plan.cards_left:
            laid = [
                read_meld(list(m), game.profile, kind=k, run_min=r.contract.run_min)[0]
                for m, k in zip(plan.melds, plan.kinds)
            ]
            if not can_lay_off_all(list(plan.cards_left), r.table + laid, game.profile):
                return None
        return Open(seat, tuple(tuple(m) for m in melds))

    def layoff(self, game: Game, seat: str) -> Event | None:
        r = game.round
        assert r is not None
        p = game.profile
        if seat not in r.opened or (r.opened_this_turn == seat and not p.layoff_on_opening_turn):
            return None
        hand = _hand(game, seat)
        must_keep = not (r.last_round and not p.last_round_out_by_discard)
        if must_keep and r.counts[seat] <= 1:
            return None
        options = layoff_options(hand, r.table, p)
        if not options:
            return None
        if r.last_round and p.last_round_all_at_once:
            # every card must go: follow a lay-off order that empties the hand
            for idx, written in options:
                card = Card(written.split(":")[0])
                rest = hand.copy()
                rest[card] -= 1
                table = list(r.table)
                table[idx] = extend_meld(table[idx], written, p)
                if can_lay_off_all(list((+rest).elements()), table, p):
                    return LayOff(seat, idx, (written,))
            return None
        # lay off naturals first; a joker only when nothing else fits
        options.sort(key=lambda o: (o[1].startswith("JK"), -p.value(o[1].split(":")[0])))
        idx, written = options[0]
        return LayOff(seat, idx, (written,))

    def discard(self, game: Game, seat: str) -> Event:
        r = game.round
        assert r is not None
        hand = _hand(game, seat)
        if r.recycles >= 2 and (seat in r.opened or self.rng.random() < 0.25):
            # A long round with a recycled stock can cycle the same few cards for ever (petras §06
            # ends a round only when no card can move). Opened players release their cards at
            # random, and the others now and then, so that whoever still builds a contract finds them.
            return Discard(seat, self.rng.choice(sorted(c for c in hand if c != JOKER) or [JOKER]))
        return Discard(seat, self.pick_discard(game, seat, hand, r))

    def pick_discard(self, game: Game, seat: str, hand: Counter[Card], r: Round) -> Card:
        raise NotImplementedError

    def play(self, game: Game, seat: str) -> Event:
        return self.opening(game, seat) or self.layoff(game, seat) or self.discard(game, seat)


class Planner(_Base):
    """Keeps cards that build the contract, throws the least useful and dearest, buys completers."""

    name = "planner"

    def wants_discard(self, game: Game, seat: str, card: Card) -> bool:
        r = game.round
        assert r is not None
        if seat in r.opened:
            return _fits_table(game, card)
        hand = _hand(game, seat) + Counter([card])
        return _usefulness(card, hand, r) >= 3

    def wants_buy(self, game: Game, seat: str, card: Card) -> bool:
        r = game.round
        assert r is not None
        if seat in r.opened or r.counts[seat] > 15:
            return False
        hand = _hand(game, seat) + Counter([card])
        return _usefulness(card, hand, r) >= 5

    def pick_discard(self, game: Game, seat: str, hand: Counter[Card], r: Round) -> Card:
        p = game.profile
        fitting = {w.split(":")[0] for _, w in layoff_options(hand, r.table, p)} if seat in r.opened else set()
        options = [c for c in hand if c != JOKER] or [JOKER]

        def key(c: Card) -> tuple[bool, int, int, str]:
            return (c in fitting, _usefulness(c, hand, r), -p.value(c), c)

        return min(options, key=key)


class Chancer(_Base):
    """Loose play: draws and buys the discard at random, throws a random card."""

    name = "chancer"

    def wants_discard(self, game: Game, seat: str, card: Card) -> bool:
        return card == JOKER or self.rng.random() < 0.3

    def wants_buy(self, game: Game, seat: str, card: Card) -> bool:
        r = game.round
        assert r is not None
        return r.counts[seat] < 15 and self.rng.random() < 0.06

    def pick_discard(self, game: Game, seat: str, hand: Counter[Card], r: Round) -> Card:
        options = sorted(c for c in hand if c != JOKER) or [JOKER]
        return self.rng.choice(options)


STRATEGIES = {"planner": Planner, "chancer": Chancer}


def make_bot(name: str, rng: random.Random) -> _Base:
    try:
        return STRATEGIES[name](rng)
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}") from None


__all__ = ["Planner", "Chancer", "STRATEGIES", "make_bot"]
