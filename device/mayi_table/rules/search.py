"""Meld search: can a hand lay a round's contract, with which melds, and what is left.

Runs are chosen by a depth-first search over candidate windows per suit; groups for the
remaining cards by a small dynamic programme over ranks. Jokers fill gaps and, when some
are left, lengthen melds so as few points as possible stay in hand.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .cards import JOKER, RANK_VALUE, RANKS, SUITS, Card
from .melds import Meld, fitting_layoffs, layoff_fits, position_rank
from .profiles import Contract, RuleProfile


@dataclass(frozen=True)
class Plan:
    """Melds for (part of) a contract and the points the hand keeps."""

    melds: tuple[tuple[str, ...], ...]  # as an `open` event writes them
    kinds: tuple[str, ...]
    complete: bool  # the whole contract
    points_left: int
    cards_left: tuple[Card, ...]


def _top(profile: RuleProfile) -> int:
    return 14 if profile.ace_high and not profile.ace_wrap else 13


def _pos_index(pos: int) -> int:
    """Index 0..12 of the rank at run position `pos` (A=0 .. K=12)."""
    return (pos - 1) % 13


def _window_lows(profile: RuleProfile, run_min: int) -> range:
    return range(1, 14) if profile.ace_wrap else range(1, _top(profile) - run_min + 2)


def _span_ok(low: int, high: int, profile: RuleProfile) -> bool:
    if high - low >= 13:
        return False
    return profile.ace_wrap or (low >= 1 and high <= _top(profile))


def _hand_arrays(hand: Iterable[Card]) -> tuple[list[list[int]], int]:
    counts = [[0] * 13 for _ in SUITS]
    jokers = 0
    for c in hand:
        if c == JOKER:
            jokers += 1
        else:
            counts[SUITS.index(c[-1])][RANK_VALUE[c[:-1]] - 1] += 1
    return counts, jokers


def _groups_best(
    counts: list[list[int]], jokers: int, want: int, exact: bool, values: list[int]
) -> tuple[int, int, list[tuple[int, int]]] | None:
    """Best groups from what is left: (melded value, jokers used, [(rank index, groups)]).

    With `exact`, exactly `want` groups or None; otherwise up to `want`.
    """
    by_rank = [sum(counts[s][i] for s in range(4)) for i in range(13)]
    # dp[(groups, jokers)] = (value, choices)
    dp: dict[tuple[int, int], tuple[int, list[tuple[int, int]]]] = {(0, 0): (0, [])}
    for i in range(13):
        c = by_rank[i]
        if not c:
            continue
        nxt = dict(dp)
        for (g, j), (v, ch) in dp.items():
            for k in (1, 2):
                if g + k > want or c < k:
                    break
                need = max(0, 3 * k - c)
                if j + need > jokers:
                    continue
                key = (g + k, j + need)
                val = v + c * values[i]
                if key not in nxt or nxt[key][0] < val:
                    nxt[key] = (val, ch + [(i, k)])
        dp = nxt
    best: tuple[int, int, list[tuple[int, int]]] | None = None
    best_key: tuple[int, int, int] | None = None
    for (g, j), (v, ch) in dp.items():
        if exact and g != want:
            continue
        rank_key = (v, g, -j)  # most points melded, then most groups, then fewest jokers
        if best_key is None or rank_key > best_key:
            best, best_key = (v, j, ch), rank_key
    return best


def _windows_held(counts: list[list[int]], n: int, profile: RuleProfile) -> list[tuple[int, int, int]]:
    """(suit, low, naturals held) for every run window of `n` positions, by a sliding sum."""
    out = []
    lows = _window_lows(profile, n)
    for s in range(4):
        row = counts[s]
        if not any(row):
            continue
        flags = [1 if row[i % 13] else 0 for i in range(lows[-1] + n)]
        held = sum(flags[: n - 1])
        for low in lows:
            held += flags[low + n - 2]
            out.append((s, low, held))
            held -= flags[low - 1]
    return out


def _jokers_needed_at_least(counts: list[list[int]], contract: Contract, profile: RuleProfile) -> int:
    """A lower bound on the jokers the contract needs: groups and runs counted apart."""
    need = 0
    if contract.groups:
        by_rank = sorted((sum(counts[s][i] for s in range(4)) for i in range(13)), reverse=True)
        units: list[int] = []
        for c in by_rank:
            units += [0] * (c // 3) + ([3 - c % 3] if c % 3 else [])
        units += [3] * contract.groups  # a group of jokers alone is the dearest
        need += sum(sorted(units)[: contract.groups])
    if contract.runs:
        n = contract.run_min
        most = max((held for _, _, held in _windows_held(counts, n, profile)), default=0)
        need += (n - most) * contract.runs
    return need


Run = tuple[int, int, int, frozenset[int]]  # suit index, low, high, positions held by jokers


def search_contract(
    hand: Sequence[Card] | Counter[Card],
    contract: Contract,
    profile: RuleProfile,
    partial: bool = True,
    first: bool = False,
) -> Plan | None:
    """The plan that lays the contract keeping the fewest points; with `partial`, the best partial
    plan when the contract cannot be laid (None only when `partial` is False and it cannot).

    Runs are first chosen at their minimum length (enough to decide whether the contract can be
    laid at all), then lengthened with the naturals and spare jokers left after the groups.
    With `first`, the first complete plan found is returned (enough for a yes/no question).
    """
    cards = list(hand.elements()) if isinstance(hand, Counter) else list(hand)
    counts, jokers = _hand_arrays(cards)
    r_want, g_want, run_min = contract.runs, contract.groups, contract.run_min
    if not partial and _jokers_needed_at_least(counts, contract, profile) > jokers:
        return None
    values = [profile.card_values[r] for r in RANKS]
    jv = profile.card_values["JK"]
    cand = [
        (s, low, tuple(_pos_index(p) for p in range(low, low + run_min)))
        for s, low, held in (_windows_held(counts, run_min, profile) if r_want else [])
        if held and run_min - held <= jokers
    ]
    best: list[Any] = []

    def leaf(runs: list[tuple[int, int, frozenset[int]]], jokers_left: int) -> None:
        groups = _groups_best(counts, jokers_left, g_want, exact=True, values=values) if g_want else (0, 0, [])
        if groups is None:
            if not partial:
                return
            groups = _groups_best(counts, jokers_left, g_want, exact=False, values=values)
            assert groups is not None
        gval, gj, gch = groups
        n_groups = sum(k for _, k in gch)
        complete = len(runs) == r_want and n_groups == g_want
        if not partial and not complete:
            return
        spare = jokers_left - gj
        rem = [row[:] for row in counts]
        for i, _ in gch:
            for row in rem:
                row[i] = 0
        value = gval
        built: list[Run] = []
        for s, low, jpos in runs:
            row = rem[s]
            lo, hi = low, low + run_min - 1
            value += sum(values[_pos_index(p)] for p in range(lo, hi + 1) if p not in jpos) + len(jpos) * jv
            extra_j: set[int] = set()
            for step in (1, -1):
                while True:
                    p = hi + 1 if step == 1 else lo - 1
                    nxt = p + step
                    if _span_ok(min(lo, p), max(hi, p), profile) and row[_pos_index(p)]:
                        row[_pos_index(p)] -= 1
                        value += values[_pos_index(p)]
                    elif spare and _span_ok(min(lo, nxt), max(hi, nxt), profile) and row[_pos_index(nxt)]:
                        row[_pos_index(nxt)] -= 1
                        value += values[_pos_index(nxt)] + jv
                        spare -= 1
                        extra_j.add(p)
                        p = nxt
                    else:
                        break
                    lo, hi = min(lo, p), max(hi, p)
            built.append((s, lo, hi, jpos | extra_j))
        melds_count = len(runs) + n_groups
        placed_spare = (
            spare
            if (
                n_groups
                or any(_span_ok(lo, hi + 1, profile) or _span_ok(lo - 1, hi, profile) for _, lo, hi, _ in built)
            )
            else 0
        )
        if not melds_count:
            placed_spare = 0
        value += placed_spare * jv
        score = (complete, value, melds_count)
        if not best or score > best[0]:
            best[:] = [score, built, list(gch), spare]

    def walk(start: int, runs: list[tuple[int, int, frozenset[int]]], jokers_left: int) -> None:
        if partial or len(runs) == r_want:
            leaf(runs, jokers_left)
        if len(runs) == r_want:
            return
        for idx in range(start, len(cand)):
            if first and best and best[0][0]:
                return  # any complete plan answers a yes/no question
            s, low, idxs = cand[idx]
            row = counts[s]
            taken = [i for i in idxs if row[i]]
            used = run_min - len(taken)
            if used > jokers_left or not taken:
                continue
            jpos = frozenset(low + k for k, i in enumerate(idxs) if not row[i])
            for i in taken:
                row[i] -= 1
            runs.append((s, low, jpos))
            walk(idx, runs, jokers_left - used)
            runs.pop()
            for i in taken:
                row[i] += 1

    walk(0, [], jokers)
    if not best:
        return None
    (complete, _, _), built, groups, spare = best
    return _build_plan(cards, built, groups, spare, complete, profile)


def _build_plan(
    cards: list[Card], runs: list[Run], groups: list[tuple[int, int]], spare: int, complete: bool, profile: RuleProfile
) -> Plan:
    left = Counter(cards)
    melds: list[list[str]] = []
    kinds: list[str] = []
    group_rank: list[str | None] = []
    bounds: list[list[int]] = []
    for s, lo, hi, jpos in runs:
        meld: list[str] = []
        for p in range(lo, hi + 1):
            card = Card(position_rank(p) + SUITS[s])
            if p in jpos or not left[card]:
                left[JOKER] -= 1
                meld.append(f"JK:{card}")
            else:
                left[card] -= 1
                meld.append(card)
        melds.append(meld)
        kinds.append("run")
        group_rank.append(None)
        bounds.append([lo, hi, s])
    for i, k in groups:
        rank = RANKS[i]
        naturals = [Card(rank + s) for s in SUITS for _ in range(left[Card(rank + s)])]
        for c in naturals:
            left[c] -= 1
        for j in range(k):
            part: list[str] = list(naturals[j::k])
            while len(part) < 3:
                left[JOKER] -= 1
                part.append(f"JK:{rank}")
            melds.append(part)
            kinds.append("group")
            group_rank.append(rank)
    # spare jokers lengthen a group, else a run end, so they do not count against the hand
    for _ in range(spare if melds else 0):
        target = next((i for i, r in enumerate(group_rank) if r is not None), None)
        if target is not None:
            melds[target].append(f"JK:{group_rank[target]}")
        else:
            for idx, (lo, hi, s) in enumerate(bounds):
                if _span_ok(lo, hi + 1, profile):
                    melds[idx].append(f"JK:{position_rank(hi + 1)}{SUITS[s]}")
                    bounds[idx][1] += 1
                elif _span_ok(lo - 1, hi, profile):
                    melds[idx].insert(0, f"JK:{position_rank(lo - 1)}{SUITS[s]}")
                    bounds[idx][0] -= 1
                else:
                    continue
                target = idx
                break
        if target is None:
            break
        left[JOKER] -= 1
    left = +left
    points = sum(profile.value(c) for c in left.elements())
    return Plan(tuple(tuple(m) for m in melds), tuple(kinds), complete, points, tuple(left.elements()))


def can_lay_contract(hand: Sequence[Card] | Counter[Card], contract: Contract, profile: RuleProfile) -> bool:
    return search_contract(hand, contract, profile, partial=False, first=True) is not None


def layoff_options(hand: Iterable[Card], table: Sequence[Meld], profile: RuleProfile) -> list[tuple[int, str]]:
    """Every (meld index, card as written) a single card of `hand` can be laid off as."""
    out: list[tuple[int, str]] = []
    for card in sorted(set(hand)):
        for i, meld in enumerate(table):
            out.extend((i, written) for written in fitting_layoffs(meld, card, profile))
    return list(dict.fromkeys(out))


def can_lay_off_all(cards: list[Card], table: list[Meld], profile: RuleProfile) -> bool:
    """Whether every card can be laid off, one after another, onto `table`."""
    if not cards:
        return True
    seen: set[tuple[tuple[Card, ...], tuple[tuple[int, int], ...]]] = set()

    def walk(left: tuple[Card, ...], melds: list[Meld]) -> bool:
        if not left:
            return True
        key = (left, tuple((m.low, len(m.cards)) for m in melds))
        if key in seen:
            return False
        seen.add(key)
        for card in sorted(set(left)):
            rest = list(left)
            rest.remove(card)
            for i, m in enumerate(melds):
                for _, ext in layoff_fits(m, card, profile):
                    nxt = list(melds)
                    nxt[i] = ext
                    if walk(tuple(rest), nxt):
                        return True
        return False

    return walk(tuple(sorted(cards)), list(table))


__all__ = ["Plan", "search_contract", "can_lay_contract", "layoff_options", "can_lay_off_all"]
