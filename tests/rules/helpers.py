"""Building games at a chosen point: designed deals, bot-played earlier rounds, observed rounds."""

from __future__ import annotations

import random
from collections import Counter

from mayi_table.rules.cards import Card, parse_card
from mayi_table.rules.engine import Game
from mayi_table.rules.events import Deal, Discard, Draw, Event, GameStart, LayOff, Open, RoundEnd
from mayi_table.rules.melds import fitting_layoffs
from mayi_table.rules.simulate import play_game

SEATS = ("A", "B", "C", "D")


def cards(text: str) -> list[Card]:
    return [parse_card(t) for t in text.split()]


def new(profile: str = "petras", seats: tuple[str, ...] = SEATS, variants: tuple[str, ...] = ()) -> Game:
    return Game(GameStart(profile, variants, seats))


def at_round(
    round_no: int,
    profile: str = "petras",
    variants: tuple[str, ...] = (),
    seats: tuple[str, ...] = SEATS,
    seed: int = 11,
) -> Game:
    """A game whose first `round_no - 1` rounds were played by bots; the next deal is due."""
    game = new(profile, seats, variants)
    if round_no > 1:
        run = play_game(
            profile, len(seats), seed, variants, seats=seats, first_dealer=seats[-1], stop_after_round=round_no - 1
        )
        for ev in run.events[1:]:
            game.apply(ev)
    return game


def deal(
    game: Game, hands: dict[str, str] | None = None, upcard: str = "KD", seed: int = 0, observed: bool = False
) -> list[Card]:
    """Deal the next round: listed hands as given, the others filled at random. Returns the stock in
    a shuffled order (its last card is the next one drawn)."""
    due = game.expected_round()
    assert due is not None
    contract = game.profile.contract(due)
    players = game.tiebreak_players or game.seats
    dealer = game.expected_dealer() or game.seats[-1]
    rest = Counter(game.deck)
    given = {s: cards(h) for s, h in (hands or {}).items()}
    rest -= Counter([parse_card(upcard)])
    for h in given.values():
        rest -= Counter(h)
    pool = list(rest.elements())
    rng = random.Random(seed)
    rng.shuffle(pool)
    full: dict[str, tuple[Card, ...]] = {}
    for s in players:
        h = given.get(s, [])
        need = contract.dealt - len(h)
        full[s] = tuple(h + pool[:need])
        pool = pool[need:]
    game.apply(Deal(due, dealer, parse_card(upcard), None if observed else full))
    return pool


def apply_all(game: Game, events: list[Event]) -> None:
    for ev in events:
        game.apply(ev)


# A turn player dealt one of these goes out at once: draw, lay it all, discard the drawn card.
QUICK_OUT = {
    1: ("7S 7H 7D 7C 7S 8S 8H 8D 8C 8S", [["7S", "7H", "7D", "7C", "7S"], ["8S", "8H", "8D", "8C", "8S"]]),
    2: ("7S 7H 7D 7C 7S 2S 3S 4S 5S 6S", [["7S", "7H", "7D", "7C", "7S"], ["2S", "3S", "4S", "5S", "6S"]]),
    3: ("2S 3S 4S 5S 6S 2H 3H 4H 5H 6H", [["2S", "3S", "4S", "5S", "6S"], ["2H", "3H", "4H", "5H", "6H"]]),
    4: ("7S 7H 7D 7C 8S 8H 8D 9S 9H 9D", [["7S", "7H", "7D", "7C"], ["8S", "8H", "8D"], ["9S", "9H", "9D"]]),
}


def observed_quick_round(game: Game, values: dict[str, int]) -> None:
    """An observed round the turn player wins at once; each other seat shows cards worth `values[seat]`."""
    due = game.expected_round()
    assert due is not None
    contract = game.profile.contract(due)
    deal(game, observed=True, upcard="KD")
    r = game.round
    assert r is not None
    first = r.turn
    melds = _quick_melds(contract.groups, contract.runs, contract.dealt, contract.run_min)
    game.apply(Draw(first, "stock"))
    game.apply(Open(first, tuple(tuple(m) for m in melds)))
    if r.last_round and game.profile.last_round_all_at_once:
        # classic Gameplay 1/7/10: the last round is gone out of by melding the last card
        card = next(c for c in sorted(r.unseen) for m in r.table[:1] if fitting_layoffs(m, c, game.profile))
        game.apply(LayOff(first, 0, tuple(fitting_layoffs(r.table[0], card, game.profile)[:1])))
    else:
        game.apply(Discard(first, parse_card("QS")))
    pool = Counter(r.unseen)
    hands: dict[str, tuple[Card, ...]] = {}
    for s in r.players:
        hands[s] = tuple(_cards_worth(pool, r.counts[s], values.get(s, 0), game)) if r.counts[s] else ()
        pool -= Counter(hands[s])
    game.apply(RoundEnd(hands))


def _cards_worth(pool: Counter[Card], n: int, target: int, game: Game) -> list[Card]:
    """`n` cards from `pool` whose points add up to `target` exactly."""
    by_value: dict[int, list[Card]] = {}
    for c in sorted(pool.elements()):
        by_value.setdefault(game.profile.value(c), []).append(c)
    values = sorted(by_value)

    def pick(k: int, t: int, used: Counter[int]) -> list[int] | None:
        if k == 0:
            return [] if t == 0 else None
        for v in reversed(values):
            if used[v] >= len(by_value[v]) or v > t - values[0] * (k - 1):
                continue
            used[v] += 1
            rest = pick(k - 1, t - v, used)
            if rest is not None:
                return [v] + rest
            used[v] -= 1
            if v * k < t:
                break
        return None

    chosen = pick(n, target, Counter())
    assert chosen is not None, f"no {n} cards worth {target}"
    out: list[Card] = []
    taken: Counter[int] = Counter()
    for v in chosen:
        out.append(by_value[v][taken[v]])
        taken[v] += 1
    return out


def _quick_melds(groups: int, runs: int, dealt: int, run_min: int) -> list[list[str]]:
    """Melds of exactly `dealt` cards for a contract, from ranks and suits a test leaves alone."""
    melds: list[list[str]] = []
    ranks = ["2", "3", "4", "5"]
    for g in range(groups):
        melds.append([ranks[g] + s for s in "SHD"])
    run_suits = "HDC"
    for i in range(runs):
        melds.append([r + run_suits[i] for r in ["6", "7", "8", "9", "10", "J", "Q", "K"][:run_min]])
    extra = dealt - sum(len(m) for m in melds)
    # lengthen melds with their natural continuations until `dealt` cards are laid
    while extra > 0:
        for m in melds:
            if extra == 0:
                break
            if m[0][:-1] == m[1][:-1]:  # group: a fourth suit, then a second deck's copies
                m.append(m[0][:-1] + "CSHD"[(len(m) - 3) % 4])
            else:
                order = ["6", "7", "8", "9", "10", "J", "Q", "K"]
                nxt = len(m)
                if nxt < len(order):
                    m.append(order[nxt] + m[0][-1])
                else:
                    continue
            extra -= 1
    return melds


def first_player(game: Game) -> str:
    """The seat that acts first in the next deal: the one after the dealer."""
    seats = list(game.seats)
    dealer = game.expected_dealer() or seats[-1]
    return seats[(seats.index(dealer) + 1) % len(seats)]
