"""Rules-core speed, measured side by side in one run on one core.

    .venv/bin/python benchmarks/rules.py [--games 40] [--hands 10000]

Prints simulated games per second (4 players, both profiles, bots `planner` + `chancer`) and
microseconds per contract search over a fixed set of hands (the same hands on every run).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))

from mayi_table.rules.cards import make_deck  # noqa: E402
from mayi_table.rules.profiles import make_profile  # noqa: E402
from mayi_table.rules.search import can_lay_contract, search_contract  # noqa: E402
from mayi_table.rules.simulate import play_game  # noqa: E402

TARGET_GAMES_PER_S = 20.0


def fixed_hands(n: int) -> list[tuple[list[str], int]]:
    """`n` hands of 10-14 cards from a 108-card deck, each with a round 1-7; seeded, so always the same."""
    rng = random.Random(2026)
    deck = sorted(make_deck(2, 4).elements())
    return [(rng.sample(deck, rng.randint(10, 14)), rng.randint(1, 7)) for _ in range(n)]


def games_per_second(profile: str, games: int) -> float:
    start = time.perf_counter()
    for i in range(games):
        play_game(profile, 4, 10_000 + i)
    return games / (time.perf_counter() - start)


def us_per_search(hands: list[tuple[list[str], int]], full: bool) -> tuple[float, int]:
    p = make_profile("petras")
    contracts = {r: p.contract(r) for r in range(1, 8)}
    layable = 0
    start = time.perf_counter()
    for hand, r in hands:
        if full:
            plan = search_contract(hand, contracts[r], p)
            layable += bool(plan and plan.complete)
        else:
            layable += can_lay_contract(hand, contracts[r], p)
    return (time.perf_counter() - start) / len(hands) * 1e6, layable


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=40, help="games per profile (default 40)")
    ap.add_argument("--hands", type=int, default=10_000, help="hands in the fixed search set (default 10000)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    play_game("petras", 4, 1)  # warm up
    rates = {p: games_per_second(p, args.games) for p in ("petras", "classic")}
    hands = fixed_hands(args.hands)
    full_us, layable = us_per_search(hands, full=True)
    can_us, layable2 = us_per_search(hands, full=False)
    assert layable == layable2, "the full search and the yes/no search disagree"
    print(f"simulated games per second, 4 players, one core ({args.games} games each):")
    for p, rate in rates.items():
        print(f"  {p:8s} {rate:7.1f} games/s   {rate / TARGET_GAMES_PER_S:5.2f} x the 20 games/s target")
    print(f"  classic / petras speed ratio: {rates['classic'] / rates['petras']:.2f}")
    print(f"contract search over {args.hands} fixed hands (10-14 cards, rounds 1-7, petras):")
    print(f"  best plan (melds, fewest points left)  {full_us:8.1f} us per hand")
    print(f"  can lay it (yes/no)                    {can_us:8.1f} us per hand")
    print(f"  yes/no vs best plan: {full_us / can_us:.1f} x faster; {layable} of {args.hands} hands can lay")


if __name__ == "__main__":
    main()
