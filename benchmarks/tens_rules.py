"""Ways of asking the tens reader, compared side by side on the same readings of the same scenes.

    .venv/bin/python benchmarks/tens_rules.py [--tables 1234:30] [--spreads 1235:100,2001:100]
        [--jokers on|off] [--json]

The tens reader (classify.py: `index_tens`, asked where the classifier is unsure) was chosen among
the rules below on the tuning seeds (the defaults), which no reported figure uses. Each held-out
table and hand spread is rendered and detected once; each index is read once by the classifier and,
where some rule asks, once by the tens reader (in the frame, and in its sharpened copy when the frame
is found shaken), and every rule then names it from those readings through the recogniser's own
pairing. A rule: which readings it asks about (the classifier's best under ASK, in every frame or in
frames not found shaken only), what it keeps (the mean of the two readings always, the mean only when
it names a ten, or the tens reader's own reading when that names a ten at the given level or more).
It prints, per rule: card errors per table seed, exact spreads per spread seed, and the share of
indices the tens reader read.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "device"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from classifiers import DetectedOnce, _table_row, seeds_and_counts  # noqa: E402
from mayi_table.cli import progress  # noqa: E402
from mayi_table.vision import evaluate  # noqa: E402
from mayi_table.vision.classify import (  # noqa: E402
    TENS,
    TENS_STEM,
    IndexClassifier,
    has_index_model,
)
from mayi_table.vision.recognize import Recognizer  # noqa: E402
from mayi_table.vision.render.scene import render_spread, render_table  # noqa: E402


@dataclass(frozen=True)
class Rule:
    name: str
    ask_below: float  # the classifier's best reading under this is asked about (0: never)
    steady_only: bool  # only in frames not found shaken
    keep: str  # "mean": the mean always; "mean ten": the mean when it names a ten; "own ten": its own ten
    own_from: float = 0.5  # "own ten": the tens reader's reading of a ten at this or more


RULES = (
    Rule("never (the classifier alone)", 0.0, False, "mean"),
    Rule("everywhere; the mean", 1.01, False, "mean"),
    Rule("under 0.9; the mean", 0.9, False, "mean"),
    Rule("under 0.6; the mean", 0.6, False, "mean"),
    Rule("under 0.9, steady frames; the mean", 0.9, True, "mean"),
    Rule("under 0.9; the mean when a ten", 0.9, False, "mean ten"),
    Rule("under 0.9, steady frames; the mean when a ten", 0.9, True, "mean ten"),
    Rule("under 0.8, steady frames; the mean when a ten (committed)", 0.8, True, "mean ten"),
    Rule("under 0.8, steady frames; its own ten from 0.5", 0.8, True, "own ten", 0.5),
    Rule("under 0.8, steady frames; its own ten from 0.7", 0.8, True, "own ten", 0.7),
)


class Readings:
    """Each index's mean reading (and features) by one classifier, kept for the scene being read (by
    the image's content: each rule's reader sharpens a shaken frame anew), shared by every rule."""

    def __init__(self, classifier: IndexClassifier) -> None:
        self.classifier = classifier
        self.size = classifier.size
        self.kept: dict[tuple[bytes, tuple[float, ...], bool], tuple[np.ndarray, np.ndarray]] = {}

    def mean_reading(
        self, image: np.ndarray, box: Any, size: int, features: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        key = (hashlib.blake2b(image.data, digest_size=16).digest(), tuple(box), features)
        if key not in self.kept:
            self.kept[key] = self.classifier.mean_reading(image, box, size, features=features)
        return self.kept[key]

    def forget(self) -> None:
        self.kept.clear()


class RuledClassifier(IndexClassifier):
    """The classifier's own `read`, from kept readings, with the tens reader asked and kept as one rule
    says (a shaken frame's readings, where a rule asks there, averaged with its sharpened copy's)."""

    def __init__(self, first: Readings, tens: Readings, rule: Rule, asked: list[int]) -> None:
        self.backend, self.size = first.classifier.backend, first.classifier.size
        self.tens = tens  # type: ignore[assignment]
        self.first, self.rule, self.asked = first, rule, asked

    def mean_reading(self, image_bgr, box, size, features=False):  # type: ignore[no-untyped-def]
        return self.first.mean_reading(image_bgr, box, size, features)

    def asks_tens(self, p: np.ndarray, sharpened: np.ndarray | None) -> bool:
        self.asked[0] += 1
        asks = p.max() < self.rule.ask_below and not (self.rule.steady_only and sharpened is not None)
        self.asked[1] += asks
        return bool(asks)

    def kept_with_tens(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        if self.rule.keep == "mean":
            return (p + q) / 2
        if self.rule.keep == "mean ten":
            return super().kept_with_tens(p, q)
        own_ten = self.names[int(np.argmax(q))] in TENS and q.max() >= self.rule.own_from
        return q if own_ten else p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=ROOT / "vision_models", help="folder with index and index_tens")
    ap.add_argument("--tables", default="1234:30", help="held-out table seeds and counts")
    ap.add_argument("--spreads", default="1235:100,2001:100", help="hand spread seeds and counts")
    ap.add_argument("--jokers", default="on", choices=("on", "off"), help="show the held-out designs' jokers first")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    tables, spreads = seeds_and_counts(args.tables, "--tables"), seeds_and_counts(args.spreads, "--spreads")
    if not has_index_model(args.model, "onnx", TENS_STEM):
        raise SystemExit(f"error: {args.model} holds no tens reader ({TENS_STEM}.onnx)")
    designs = evaluate.held_out_designs("all")
    base = Recognizer(args.model, "onnx", tens_reader=False)
    base.detector = DetectedOnce(base.detector)  # type: ignore[assignment]
    first = Readings(IndexClassifier(args.model, "onnx"))
    second = Readings(IndexClassifier(args.model, "onnx", stem=TENS_STEM))
    marks = evaluate.learn_held_out_jokers(base, designs) if args.jokers == "on" else None
    readers, asked = [], []
    for rule in RULES:
        reader = copy.copy(base)
        asked.append([0, 0])
        reader.classifier = RuledClassifier(first, second, rule, asked[-1])
        readers.append(reader)
    table_scores = {seed: [evaluate.SceneScore() for _ in RULES] for seed, _ in tables}
    spread_scores = {seed: [evaluate.SpreadScore() for _ in RULES] for seed, _ in spreads}
    with progress(sum(n for _, n in tables + spreads), "scenes") as bar:
        for seed, count in tables:
            for n in range(count):
                scene = render_table(evaluate.scene_seed(seed, n), designs)
                for reader, score in zip(readers, table_scores[seed]):
                    evaluate.shown_jokers(reader, marks, scene.design)
                    evaluate.score_table(reader, scene, score)
                first.forget(), second.forget()
                bar.update(1)
        for seed, count in spreads:
            for n in range(count):
                scene, truth = render_spread(evaluate.scene_seed(seed, n), designs)
                for reader, tally in zip(readers, spread_scores[seed]):
                    evaluate.shown_jokers(reader, marks, scene.design)
                    tally.add(scene, truth, [c.card for c in reader.recognize(scene.image)])
                first.forget(), second.forget()
                bar.update(1)
    out = {
        "rules": [
            {
                "rule": rule.name,
                "tables": {seed: _table_row(table_scores[seed][i]) for seed, _ in tables},
                "spreads": {seed: spread_scores[seed][i].exact for seed, _ in spreads},
                "asked_share": round(asked[i][1] / max(1, asked[i][0]), 4),
            }
            for i, rule in enumerate(RULES)
        ]
    }
    if args.json:
        print(json.dumps(out))
        return
    for row in out["rules"]:
        errors = ", ".join(f"{s}: {t['errors']}" for s, t in row["tables"].items())
        exact = ", ".join(f"{s}: {e}" for s, e in row["spreads"].items())
        print(f"{row['rule']:60s} card errors {errors}; spreads exact {exact}; asked {row['asked_share']:.1%}")


if __name__ == "__main__":
    main()
