"""Rule profiles as data: every row of the profiles' difference table is a field.

`petras` follows seeds 000 (FR) / 002 (PT); `classic` follows seeds 001 (FR) / 003 (IT) /
004 (PT). Classic variants are transforms of the classic profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

PROFILES = ("petras", "classic")
VARIANTS = (
    "no-buy",
    "unlimited-buys",
    "ace-high",
    "ace-wrap",
    "nine-rounds",
    "family-quick",
    "no-jokers",
    "contract-rummy",
)


class ProfileError(ValueError):
    """A profile, variant or player count that cannot be played."""


@dataclass(frozen=True)
class Contract:
    """What a round asks to be laid down: `groups` groups and `runs` runs."""

    groups: int
    runs: int
    dealt: int
    run_min: int = 4
    group_min: int = 3

    def words(self) -> str:
        def part(n: int, one: str, many: str) -> str:
            names = {1: "one", 2: "two", 3: "three", 4: "four"}
            return f"{names.get(n, str(n))} {one if n == 1 else many}"

        parts = []
        if self.groups:
            parts.append(part(self.groups, "group", "groups"))
        if self.runs:
            text = part(self.runs, "run", "runs")
            if self.run_min != 4:
                text += f" of {self.run_min}"
            parts.append(text)
        return " + ".join(parts)


def _values(joker: int, ace: int, ten: int, faces: int, low: int | None = None) -> Mapping[str, int]:
    table = {str(n): (low if low is not None else n) for n in range(2, 10)}
    table.update({"10": ten, "J": faces, "Q": faces, "K": faces, "A": ace, "JK": joker})
    return MappingProxyType(table)


# petras §06: joker 25, ace 15, K Q J 10 = 10, numbers face value.
PETRAS_VALUES = _values(joker=25, ace=15, ten=10, faces=10)
# classic Scoring / Card deck: joker 15, ace 15, K/Q/J 10, 2-10 face value.
CLASSIC_VALUES = _values(joker=15, ace=15, ten=10, faces=10)
# contract-rummy: the seeds give no values ("des valeurs de cartes différentes"); the
# default is the common Contract Rummy table: 2-9 = 5, 10-K = 10, ace 15, joker 50.
CONTRACT_RUMMY_VALUES = _values(joker=50, ace=15, ten=10, faces=10, low=5)


def _seven(dealt_small_until: int) -> tuple[Contract, ...]:
    shapes = [(2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3)]
    return tuple(Contract(g, r, dealt=10 if i + 1 <= dealt_small_until else 12) for i, (g, r) in enumerate(shapes))


@dataclass(frozen=True)
class RuleProfile:
    name: str
    variants: tuple[str, ...]
    min_players: int
    max_players: int
    # players -> number of 52-card decks (petras §02; classic Card deck).
    decks_by_players: Mapping[int, int]
    jokers_per_deck: int
    rounds: tuple[Contract, ...]
    first_dealer: str  # "lot" (petras §02) or "high-card" (classic Setup); any seat is accepted
    ace_high: bool  # A may end a run (J-Q-K-A)
    ace_wrap: bool  # K-A-2 allowed
    contiguous_runs: bool  # 3-7H and 8-JH as two runs (petras §03, §07)
    turn_player_may_buy: bool  # classic Gameplay 9: a buy in the imminent-turn window counts
    buys_allowed: bool
    buy_limit: int | None  # per player per round
    consecutive_buyer_forbidden: bool  # petras §05
    layoff_on_opening_turn: bool  # petras §04: no; classic Gameplay 6: yes
    layoff_any_time: bool  # family-quick
    last_round_out_by_discard: bool  # petras §04/§06: yes; classic Gameplay 1/7/10: no
    last_round_all_at_once: bool  # classic R7: the contract goes down only when going out
    stock_recycles: int | None  # None = as often as needed (petras §06); classic Scoring: 1
    card_values: Mapping[str, int]
    ties: str  # "shared" (petras §06) or "rounds-won-then-tiebreak" (classic Scoring)
    tiebreak: Contract | None = None
    rules_ref: Mapping[str, str] = field(default_factory=dict)

    def decks(self, players: int) -> int:
        return self.decks_by_players[players]

    def deck_size(self, players: int) -> int:
        d = self.decks(players)
        return 52 * d + self.jokers_per_deck * d

    def contract(self, round_no: int | str) -> Contract:
        if round_no == "tiebreak":
            if self.tiebreak is None:
                raise ProfileError(f"{self.name} has no tie-break round")
            return self.tiebreak
        assert isinstance(round_no, int)
        return self.rounds[round_no - 1]

    def value(self, card: str) -> int:
        if card == "JK":
            return self.card_values["JK"]
        return self.card_values[card[:-1]]

    def ref(self, key: str) -> str:
        """Where a rule comes from, for error messages: `petras §05`, `classic Gameplay 9`."""
        return self.rules_ref.get(key, self.name)


PETRAS = RuleProfile(
    name="petras",
    variants=(),
    min_players=3,
    max_players=6,
    decks_by_players=MappingProxyType({3: 2, 4: 2, 5: 3, 6: 3}),
    jokers_per_deck=2,
    rounds=_seven(dealt_small_until=3),
    first_dealer="lot",
    ace_high=True,
    ace_wrap=False,
    contiguous_runs=True,
    turn_player_may_buy=False,
    buys_allowed=True,
    buy_limit=None,
    consecutive_buyer_forbidden=True,
    layoff_on_opening_turn=False,
    layoff_any_time=False,
    last_round_out_by_discard=True,
    last_round_all_at_once=False,
    stock_recycles=None,
    card_values=PETRAS_VALUES,
    ties="shared",
    rules_ref=MappingProxyType(
        {
            "players": "petras §02",
            "deal": "petras §02",
            "meld": "petras §03",
            "run": "petras §03",
            "ace": "petras §03",
            "contract": "petras §03",
            "open": "petras §04",
            "layoff": "petras §04",
            "turn": "petras §04",
            "discard": "petras §04",
            "buy": "petras §05",
            "stock": "petras §06",
            "going_out": "petras §04",
            "scoring": "petras §06",
            "joker": "petras §04",
        }
    ),
)

CLASSIC = RuleProfile(
    name="classic",
    variants=(),
    min_players=2,
    max_players=8,
    decks_by_players=MappingProxyType({2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 3, 8: 3}),
    jokers_per_deck=2,
    rounds=_seven(dealt_small_until=4),
    first_dealer="high-card",
    ace_high=False,
    ace_wrap=False,
    contiguous_runs=True,
    turn_player_may_buy=True,
    buys_allowed=True,
    buy_limit=3,
    consecutive_buyer_forbidden=False,
    layoff_on_opening_turn=True,
    layoff_any_time=False,
    last_round_out_by_discard=False,
    last_round_all_at_once=True,
    stock_recycles=1,
    card_values=CLASSIC_VALUES,
    ties="rounds-won-then-tiebreak",
    tiebreak=Contract(0, 2, dealt=10),
    rules_ref=MappingProxyType(
        {
            "players": "classic Players",
            "deal": "classic Setup",
            "meld": "classic Gameplay 2-3",
            "run": "classic Gameplay 3",
            "ace": "classic Card deck",
            "contract": "classic Gameplay 1",
            "open": "classic Gameplay 5",
            "layoff": "classic Gameplay 6",
            "turn": "classic Gameplay 4",
            "discard": "classic Gameplay 7",
            "buy": "classic Gameplay 8-9",
            "stock": "classic Scoring",
            "going_out": "classic Gameplay 10",
            "scoring": "classic Scoring",
            "joker": "classic Card deck",
        }
    ),
)

_CONFLICTS = (
    ({"no-buy", "unlimited-buys"}, "no-buy removes buying, so it cannot also make buys unlimited"),
    ({"no-buy", "contract-rummy"}, "contract-rummy buys openly, so it cannot be played with no-buy"),
)


def make_profile(
    name: str,
    variants: tuple[str, ...] | list[str] = (),
    players: int | None = None,
    card_values: Mapping[str, int] | None = None,
) -> RuleProfile:
    """The profile `name` with `variants` applied, checked for `players` if given."""
    if name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")
    chosen = tuple(dict.fromkeys(variants))
    for v in chosen:
        if v not in VARIANTS:
            raise ProfileError(f"unknown variant {v!r}: the variants are {', '.join(VARIANTS)}")
    profile = PETRAS if name == "petras" else CLASSIC
    if chosen and name == "petras":
        raise ProfileError(
            f"variants ({', '.join(chosen)}) belong to the classic profile; "
            "petras is played as written (petras §01, §06)"
        )
    for pair, why in _CONFLICTS:
        if pair <= set(chosen):
            raise ProfileError(f"variants {' and '.join(sorted(pair))} cannot be combined: {why}")
    for v in chosen:
        profile = _apply_variant(profile, v)
    profile = replace(profile, variants=chosen)
    if card_values is not None:
        profile = replace(profile, card_values=_check_values(card_values))
    if players is not None:
        check_players(profile, players)
    return profile


def _check_values(values: Mapping[str, int]) -> Mapping[str, int]:
    keys = {str(n) for n in range(2, 11)} | {"J", "Q", "K", "A", "JK"}
    unknown = set(values) - keys
    if unknown:
        raise ProfileError(f"card_values names unknown ranks {sorted(unknown)}; use A 2-10 J Q K JK")
    missing = keys - set(values)
    if missing:
        raise ProfileError(f"card_values must give every rank; missing {sorted(missing)}")
    for k, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ProfileError(f"card_values[{k!r}] must be a whole number of points >= 0, not {v!r}")
    return MappingProxyType(dict(values))


def _apply_variant(p: RuleProfile, variant: str) -> RuleProfile:
    if variant == "no-buy":
        return replace(p, buys_allowed=False, buy_limit=0)
    if variant == "unlimited-buys":
        return replace(p, buy_limit=None)
    if variant == "ace-high":
        return replace(p, ace_high=True)
    if variant == "ace-wrap":  # a sub-option of ace-high: it implies ace-high
        return replace(p, ace_high=True, ace_wrap=True)
    if variant == "nine-rounds":
        # The seeds do not say where the two extra rounds go: after R4 (4 groups)
        # and after R6 (3 runs of 5), both dealt 12 like their neighbours.
        r = p.rounds
        return replace(
            p, rounds=r[:4] + (Contract(4, 0, dealt=12),) + r[4:6] + (Contract(0, 3, dealt=12, run_min=5),) + r[6:]
        )
    if variant == "family-quick":
        return replace(p, layoff_any_time=True)
    if variant == "no-jokers":
        return replace(p, jokers_per_deck=0)
    if variant == "contract-rummy":
        return replace(p, buy_limit=None, card_values=CONTRACT_RUMMY_VALUES)
    raise ProfileError(f"unknown variant {variant!r}")  # pragma: no cover - checked above


def check_players(profile: RuleProfile, players: int) -> None:
    if not profile.min_players <= players <= profile.max_players:
        raise ProfileError(
            f"{profile.name} is played by {profile.min_players} to {profile.max_players} players, "
            f"not {players} ({profile.ref('players')})"
        )
