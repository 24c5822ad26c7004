"""Builds `petras_07.mayi.jsonl`: the worked example of petras §07 as a game record.

Rounds 1-2 are played by seeded bots; round 3 is dealt so that the example happens: A declines
the 2D, C buys it with QC, later draws KS, lays 3H-7H and 8H-JH as two runs and discards KS,
keeping 2D QC AC. Run `python tests/golden/make_petras_07.py` to rebuild the record and its
expected replay (`petras_07.expected.json`); the golden test checks both.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "device"))

from mayi_table.rules.cards import Card, make_deck  # noqa: E402
from mayi_table.rules.events import Buy, Deal, Discard, Draw, Event, Open  # noqa: E402
from mayi_table.rules.record import replay_lines, write_record  # noqa: E402
from mayi_table.rules.simulate import play_game  # noqa: E402

SEATS = ("A", "B", "C", "D")
C_HAND = ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "AC"]


def build() -> list[Event]:
    # B deals round 1, so D deals round 3 and A, left of D, acts first (petras §02)
    run = play_game("petras", 4, seed=7, seats=SEATS, first_dealer="B", stop_after_round=2)
    events = list(run.events)
    rng = random.Random(307)
    deck = make_deck(2, 4)
    deck -= Counter([Card(c) for c in C_HAND] + ["2D", "QC", "KS"])  # C's hand, the upcard, penalty, draw
    rest = list(deck.elements())
    rng.shuffle(rest)
    hands = {
        "A": tuple(rest[0:10]),
        "B": tuple(rest[10:20]),
        "C": tuple(Card(c) for c in C_HAND),
        "D": tuple(rest[20:30]),
    }
    stock = rest[30:]
    a_draw, b_draw = stock[0], stock[1]
    events += [
        Deal(3, "D", Card("2D"), hands),
        Buy("C", Card("QC")),  # A declined the 2D; C buys it with QC from the stock: 12 cards
        Draw("A", "stock", a_draw),
        Discard("A", a_draw),
        Draw("B", "stock", b_draw),
        Discard("B", b_draw),
        Draw("C", "stock", Card("KS")),  # 13 cards
        Open("C", (("3H", "4H", "5H", "6H", "7H"), ("8H", "9H", "10H", "JH"))),
        Discard("C", Card("KS")),  # keeps 2D QC AC
    ]
    return events


def main() -> None:
    events = build()
    record = HERE / "petras_07.mayi.jsonl"
    write_record(events, record)
    result, _ = replay_lines(record.read_text(encoding="utf-8").splitlines())
    (HERE / "petras_07.expected.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {record} ({len(events)} lines): ok={result['ok']}")


if __name__ == "__main__":
    main()
