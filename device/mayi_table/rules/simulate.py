"""Bot games from a seed: a dealer with a real shuffled stock, claim windows, and statistics.

Deterministic per seed: the same arguments give the same events, so a written record
replays to the same result.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .bots import make_bot
from .cards import Card
from .engine import Game, claim_winner
from .events import Buy, Deal, Discard, Draw, Event, GameStart

SEAT_NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")
MAX_EVENTS_PER_ROUND = 5000  # a safety stop for a bug, never reached by legal bot play


class SimulationStuck(RuntimeError):
    pass


@dataclass
class GameRun:
    events: list[Event]
    game: Game
    buys_per_round: list[int] = field(default_factory=list)


class _Table:
    """The physical stock order the dealer shuffled; the engine only knows its contents."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.stock: list[Card] = []

    def take(self, game: Game, penalty: bool = False) -> Card:
        r = game.round
        assert r is not None
        if r.stock_count == 0:
            # the engine recycles the old discards except the top (after the bought card leaves)
            pile = r.pile[:-2] if penalty else r.pile[:-1]
            self.stock = list(pile)
            self.rng.shuffle(self.stock)
        return self.stock.pop()


def play_game(
    profile: str,
    players: int,
    seed: int,
    variants: Sequence[str] = (),
    strategies: Sequence[str] = ("planner", "chancer"),
    on_event: Callable[[Game, Event], None] | None = None,
    seats: Sequence[str] | None = None,
    first_dealer: str | None = None,
    stop_after_round: int | None = None,
) -> GameRun:
    """Play one complete game of bots (or its first rounds); every event goes through the engine."""
    rng = random.Random(seed)
    seats = tuple(seats) if seats is not None else SEAT_NAMES[:players]
    start = GameStart(profile, tuple(variants), seats)
    game = Game(start)
    events: list[Event] = [start]
    bots = {s: make_bot(strategies[i % len(strategies)], random.Random(rng.random())) for i, s in enumerate(seats)}
    table = _Table(rng)
    run = GameRun(events, game)
    discarders: list[str | None] = []  # who threw each card of the discard pile (None: the upcard)

    def apply(ev: Event) -> None:
        game.apply(ev)
        events.append(ev)
        _follow_pile(game, ev, discarders)
        if on_event is not None:
            on_event(game, ev)

    dealer = rng.choice(seats)
    if first_dealer is not None:
        dealer = first_dealer
    while not game.complete and (stop_after_round is None or len(game.results) < stop_after_round):
        due = game.expected_round()
        assert due is not None
        if game.round is not None:
            dealer = game.expected_dealer() or dealer
        apply(_deal(game, due, dealer, table))
        r = game.round
        assert r is not None
        steps = 0
        while not r.over:
            steps += 1
            if steps > MAX_EVENTS_PER_ROUND:
                raise SimulationStuck(f"round {r.number} of seed {seed} did not end")
            if not r.drawn:
                if game.profile.layoff_any_time:
                    _quick_layoffs(game, bots, apply)
                    if r.over:
                        break
                _claim_window(game, bots, table, apply, discarders)
                if r.over:
                    break
                if r.drawn:
                    continue
                turn = r.turn
                top = r.pile[-1] if r.pile else None
                if top is not None and (bots[turn].wants_discard(game, turn, top) or not game._stock_ready(r)):
                    apply(Draw(turn, "discard"))
                else:
                    apply(Draw(turn, "stock", table.take(game)))
            else:
                apply(bots[r.turn].play(game, r.turn))
        run.buys_per_round.append(sum(r.buys.values()))
    return run


def _deal(game: Game, due: int | str, dealer: str, table: _Table) -> Deal:
    contract = game.profile.contract(due)
    players = game.tiebreak_players or game.seats
    deck = list(game.deck.elements())
    table.rng.shuffle(deck)
    hands = {s: tuple(deck[i * contract.dealt : (i + 1) * contract.dealt]) for i, s in enumerate(players)}
    rest = deck[len(players) * contract.dealt :]
    upcard = rest.pop()
    table.stock = rest
    return Deal(due, dealer, upcard, hands)


def _quick_layoffs(game: Game, bots: dict[str, Any], apply: Callable[[Event], None]) -> None:
    """family-quick: opened players lay off out of turn, without drawing."""
    r = game.round
    assert r is not None
    for seat in r.players:
        if seat != r.turn and seat in r.opened:
            ev = bots[seat].layoff(game, seat)
            if ev is not None:
                apply(ev)
                return


def _follow_pile(game: Game, ev: Event, discarders: list[str | None]) -> None:
    """Keep `discarders` in step with the discard pile after `ev`."""
    if isinstance(ev, Deal):
        discarders[:] = [None]
    elif isinstance(ev, Discard):
        discarders.append(ev.seat)
    elif (isinstance(ev, Draw) and ev.source_pile == "discard") or isinstance(ev, Buy):
        if discarders:
            discarders.pop()
    r = game.round
    if r is not None and len(discarders) > len(r.pile):
        del discarders[: len(discarders) - len(r.pile)]  # the pile under the top was recycled into the stock


def _claim_window(
    game: Game,
    bots: dict[str, Any],
    table: _Table,
    apply: Callable[[Event], None],
    discarders: list[str | None] | None = None,
) -> None:
    """After a discard: the player to act may take it; else others claim it, nearest clockwise first.

    A seat never claims a card it discarded itself (the claim desk passes the discarder over)."""
    r = game.round
    assert r is not None
    bought_here: set[str] = set()
    while r.pile and not r.over:
        top = r.pile[-1]
        turn = r.turn
        if bots[turn].wants_discard(game, turn, top):
            apply(Draw(turn, "discard"))
            return
        thrower = discarders[-1] if discarders and len(discarders) == len(r.pile) else None
        claimants = [
            s
            for s in r.players
            if s != turn and s != thrower and s not in bought_here and bots[s].wants_buy(game, s, top)
        ]
        buyer = claim_winner(game, claimants)
        if buyer is None:
            return
        bought_here.add(buyer)
        apply(Buy(buyer, table.take(game, penalty=True)))


@dataclass
class Stats:
    games: int
    rounds: int
    winner_total_mean: float
    winner_total_median: float
    mean_round_score: float
    buys_per_round: float
    rounds_without_winner: int
    tiebreak_rounds: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def statistics_of(runs: Sequence[GameRun]) -> Stats:
    winner_totals: list[int] = []
    round_scores: list[int] = []
    no_winner = tiebreaks = 0
    buys: list[int] = []
    for run in runs:
        g = run.game
        totals = g.totals()
        winner_totals.extend(totals[w] for w in g.winners[:1])
        for res in g.results:
            round_scores.extend(res.scores.values())
            no_winner += res.went_out is None
            tiebreaks += res.round == "tiebreak"
        buys.extend(run.buys_per_round)
    return Stats(
        games=len(runs),
        rounds=sum(len(r.game.results) for r in runs),
        winner_total_mean=round(statistics.fmean(winner_totals), 2) if winner_totals else 0.0,
        winner_total_median=float(statistics.median(winner_totals)) if winner_totals else 0.0,
        mean_round_score=round(statistics.fmean(round_scores), 2) if round_scores else 0.0,
        buys_per_round=round(statistics.fmean(buys), 3) if buys else 0.0,
        rounds_without_winner=no_winner,
        tiebreak_rounds=tiebreaks,
    )


def simulate(
    profile: str,
    players: int,
    games: int,
    seed: int,
    variants: Sequence[str] = (),
    strategies: Sequence[str] = ("planner", "chancer"),
) -> list[GameRun]:
    return [play_game(profile, players, seed * 1_000_003 + i, variants, strategies) for i in range(games)]
