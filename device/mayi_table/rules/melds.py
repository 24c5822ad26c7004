"""Groups and runs: reading a meld as laid, fixing joker roles, and laying off onto it.

A group is >= 3 cards of one rank, suits may repeat. A run is >= 4 consecutive cards of
one suit (petras §03; classic Gameplay 2-3). A run's positions count A=1 .. K=13 and, where
the ace may be high, A=14; with ace-wrap positions continue past K (A=14, 2=15, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import JOKER, RANK_VALUE, RANKS, Card, parse_placed, rank_of, suit_of
from .profiles import RuleProfile


class MeldError(ValueError):
    """A meld or lay-off that the rules do not allow; `rule` names where the rule comes from."""

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule


@dataclass(frozen=True)
class Meld:
    kind: str  # "group" or "run"
    cards: tuple[Card, ...]  # physical cards, runs in ascending order
    roles: tuple[str, ...]  # what each card stands for: "7H" (run) or "7" (group joker)
    owner: str = ""
    low: int = 0  # run: position of the first card

    @property
    def rank(self) -> str:
        """The rank of a group."""
        return rank_of(self.roles[0])

    @property
    def suit(self) -> str:
        return suit_of(self.roles[0])

    @property
    def high(self) -> int:
        return self.low + len(self.cards) - 1

    def written(self) -> list[str]:
        """The meld as the record writes it: jokers as `JK:role`."""
        return [c if c != JOKER else f"JK:{r}" for c, r in zip(self.cards, self.roles)]


def position_rank(pos: int) -> str:
    return RANKS[(pos - 1) % 13]


def _positions_of(rank: str, profile: RuleProfile) -> tuple[int, ...]:
    v = RANK_VALUE[rank]
    if rank == "A" and profile.ace_high and not profile.ace_wrap:
        return (1, 14)
    return (v,)


def _normal_low(low: int, profile: RuleProfile) -> int:
    return (low - 1) % 13 + 1 if profile.ace_wrap else low


def _run_span_ok(low: int, length: int, profile: RuleProfile) -> bool:
    """Whether a run starting at position `low` (already normalised) may hold `length` cards."""
    if length > 13:  # thirteen ranks: a longer run would repeat one
        return False
    if profile.ace_wrap:
        return 1 <= low <= 13
    top = 14 if profile.ace_high else 13
    return 1 <= low and low + length - 1 <= top


def _group_reading(cards: list[tuple[Card, Card | None]], min_len: int) -> tuple[str, ...] | None:
    ranks = {rank_of(c) for c, _ in cards if c != JOKER}
    ranks |= {rank_of(r) for _, r in cards if r}
    if len(ranks) != 1 or len(cards) < min_len:
        return None
    (rank,) = ranks
    return tuple(c if c != JOKER else rank for c, _ in cards)


def _run_readings(cards: list[tuple[Card, Card | None]], profile: RuleProfile, min_len: int) -> list[tuple[int, str]]:
    """All (signed low position, suit) readings of a run listed ascending (+) or descending (-)."""
    n = len(cards)
    if n < min_len:
        return []
    known = [(i, c if c != JOKER else r) for i, (c, r) in enumerate(cards) if c != JOKER or r]
    if not known:
        return []
    if any(k is None or k[-1] not in "SHDC" or len(k) < 2 for _, k in known):
        return []  # a rank-only joker role fits groups, not runs
    suits = {suit_of(k) for _, k in known if k}
    if len(suits) != 1:
        return []
    (suit,) = suits
    i0, k0 = known[0]
    assert k0 is not None
    found: set[tuple[int, str]] = set()
    for p0 in _positions_of(rank_of(k0), profile):
        for step in (1, -1):
            first, last = p0 - step * i0, p0 + step * (n - 1 - i0)  # positions of the listed ends
            low = _normal_low(min(first, last), profile)
            if not _run_span_ok(low, n, profile):
                continue
            consistent = True
            for i, k in known[1:]:
                assert k is not None
                p = p0 + step * (i - i0)
                if profile.ace_wrap:
                    consistent = RANK_VALUE[rank_of(k)] == (p - 1) % 13 + 1
                else:
                    consistent = p in _positions_of(rank_of(k), profile)
                if not consistent:
                    break
            if consistent:
                found.add((low if step == 1 else -low, suit))
    return sorted(found)


def read_meld(
    texts: list[str] | list[Card],
    profile: RuleProfile,
    kind: str | None = None,
    run_min: int = 4,
    group_min: int = 3,
    owner: str = "",
) -> list[Meld]:
    """Every distinct reading of a meld as listed; several readings mean the jokers are ambiguous."""
    cards = [parse_placed(t) for t in texts]
    readings: list[Meld] = []
    if kind in (None, "group"):
        roles = _group_reading(cards, group_min)
        if roles is not None:
            readings.append(Meld("group", tuple(c for c, _ in cards), roles, owner))
    if kind in (None, "run"):
        for signed_low, suit in _run_readings(cards, profile, run_min):
            ascending = signed_low > 0
            low = abs(signed_low)
            ordered = cards if ascending else list(reversed(cards))
            roles = tuple(position_rank(low + i) + suit for i in range(len(ordered)))
            readings.append(Meld("run", tuple(c for c, _ in ordered), roles, owner, low))
    # the same cards read the same way twice (e.g. a fixed joker both ways) is one reading
    unique = {(m.kind, m.cards, m.roles): m for m in readings}
    return list(unique.values())


def meld_from_written(texts: list[str], profile: RuleProfile, owner: str = "") -> Meld:
    """A meld as the state writes it (jokers fixed), read back: one reading expected."""
    readings = read_meld(texts, profile, owner=owner, run_min=1, group_min=1)
    if len(readings) != 1:
        raise MeldError(f"meld {texts} cannot be read one way")
    return readings[0]


def layoff(meld: Meld, text: str, profile: RuleProfile) -> Meld:
    """`meld` extended by one card at a group or either end of a run (petras §04; classic Gameplay 6)."""
    card, role = parse_placed(text)
    ref = profile.ref("layoff")
    if meld.kind == "group":
        rank = meld.rank
        if card == JOKER:
            if role is not None and rank_of(role) != rank:
                raise MeldError(f"the joker is written as {role} but this group is of {rank}s", ref)
            return Meld("group", meld.cards + (card,), meld.roles + (rank,), meld.owner)
        if rank_of(card) != rank:
            raise MeldError(f"{card} does not fit a group of {rank}s", ref)
        return Meld("group", meld.cards + (card,), meld.roles + (card,), meld.owner)
    suit = meld.suit
    ends: list[tuple[str, int]] = []
    if _run_span_ok(_normal_low(meld.low - 1, profile), len(meld.cards) + 1, profile):
        ends.append(("low", meld.low - 1))
    if _run_span_ok(meld.low, len(meld.cards) + 1, profile):
        ends.append(("high", meld.high + 1))
    fits = []
    for end, pos in ends:
        want = position_rank(pos) + suit
        wanted = role if card == JOKER else card
        if wanted is None or wanted == want:
            fits.append((end, want))
    if not fits:
        what = "the joker" if card == JOKER else str(card)
        ends_text = " or ".join(position_rank(p) + suit for _, p in ends) or "nothing (the run is complete)"
        raise MeldError(f"{what if role is None else text} does not extend this run; it takes {ends_text}", ref)
    if len(fits) == 2 and fits[0][1] == fits[1][1]:
        fits = fits[:1]  # an ace onto 2..K: either end makes the same full run A..K / 2..A
    if len(fits) > 1:
        raise MeldError(
            f"the joker could go at either end of the run; write it as JK:{fits[0][1]} or JK:{fits[1][1]}",
            profile.ref("joker"),
        )
    end, want = fits[0]
    if end == "low":
        low = _normal_low(meld.low - 1, profile)
        return Meld("run", (card,) + meld.cards, (want,) + meld.roles, meld.owner, low)
    return Meld("run", meld.cards + (card,), meld.roles + (want,), meld.owner, meld.low)


def fitting_layoffs(meld: Meld, card: Card, profile: RuleProfile) -> list[str]:
    """How a single card may be laid off onto `meld`, as written (`7H`, `JK`, `JK:8H`); fast, no errors."""
    if meld.kind == "group":
        return [card] if card == JOKER or rank_of(card) == meld.rank else []
    if card != JOKER and card[-1] != meld.suit:
        return []
    out = []
    n = len(meld.cards) + 1
    for pos, ok in (
        (meld.low - 1, _run_span_ok(_normal_low(meld.low - 1, profile), n, profile)),
        (meld.high + 1, _run_span_ok(meld.low, n, profile)),
    ):
        if not ok:
            continue
        want = position_rank(pos) + meld.suit
        if card == JOKER:
            out.append(f"JK:{want}")
        elif card == want:
            out.append(card)
    return out


def layoff_fits(meld: Meld, card: Card, profile: RuleProfile) -> list[tuple[str, Meld]]:
    """Every way a single card extends `meld`: (the card as written, the extended meld)."""
    return [(w, layoff(meld, w, profile)) for w in fitting_layoffs(meld, card, profile)]
