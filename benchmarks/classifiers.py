"""Index classifiers (and detectors) compared side by side on the same held-out scenes.

    .venv/bin/python benchmarks/classifiers.py vision_models /tmp/part21 [--detector vision_models [/tmp/d8]]
        [--tables 1234:30,777:30,4242:30] [--spreads 4243:150,778:100,1235:100] [--deshake on|off|both]
        [--jokers off|on|both] [--tens on|off|both] [--json]

Each CLASSIFIER is a model folder holding `index.onnx` (or the backend's file). Every held-out table
and hand spread (the scenes `mayi-table evaluate --seed S` renders: tables of seed S, spreads of
seed S + 1) is rendered once and its corner indices found once by the detector of `--detector`;
each classifier then names those same boxes through the recogniser's own code (readings from
`--min-confidence`, pairing into physical cards), so the figures differ by the classifier alone.
Given more than one detector folder, every classifier reads each detector's boxes in turn.
It prints, per seed and in all: card errors (false / missed), per-card F1, and hand spreads whose
point total is exact in both profiles, with each classifier's change against the first.
`--deshake both` reads each classifier twice, without and with the shaken frames' sharpened copies
(shake.py), side by side; `--jokers on` shows each classifier every held-out design's jokers first
(jokers.py, as `mayi-table evaluate --jokers-shown` does), `both` reads without and with them.
`--tens` asks a folder's tens reader (`index_tens`, classify.py) where its classifier is unsure, as
the recogniser does (`on`, the default: where the folder has one), or not (`off`), or both ways.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "device"))

from mayi_table.cli import progress  # noqa: E402
from mayi_table.vision.classes import MIN_CONFIDENCE, Corner  # noqa: E402
from mayi_table.vision.classify import TENS_STEM, IndexClassifier, has_index_model  # noqa: E402
from mayi_table.vision.detect import BACKENDS, Detector, ModelError, as_bgr  # noqa: E402
from mayi_table.vision.evaluate import (  # noqa: E402
    SceneScore,
    SpreadScore,
    held_out_designs,
    learn_held_out_jokers,
    scene_seed,
    score_table,
    shown_jokers,
)
from mayi_table.vision.recognize import TWO_STAGE_DETECTOR_CONF, Recognizer  # noqa: E402
from mayi_table.vision.render.scene import render_spread, render_table  # noqa: E402


class DetectedOnce:
    """A detector that finds each frame's corners once and hands the same list to every classifier."""

    def __init__(self, detector: Detector) -> None:
        self.detector = detector
        self.key = b""
        self.corners: list[Corner] = []

    def detect(self, image_bgr: Any) -> list[Corner]:
        image = as_bgr(image_bgr)
        key = hashlib.blake2b(image.data, digest_size=16).digest() + bytes(str(image.shape), "ascii")
        if key != self.key:
            self.key, self.corners = key, self.detector.detect(image)
        return list(self.corners)


def seeds_and_counts(text: str, flag: str) -> list[tuple[int, int]]:
    """Seed:count pairs: "1234:30,777:30" -> [(1234, 30), (777, 30)]."""
    try:
        pairs = [tuple(int(v) for v in part.split(":")) for part in text.split(",") if part]
        if any(len(p) != 2 or p[1] < 0 for p in pairs):
            raise ValueError
    except ValueError:
        raise SystemExit(f"error: {flag} {text!r}: give SEED:COUNT pairs joined by commas, as 777:30") from None
    return [(p[0], p[1]) for p in pairs]


def designs_or_exit(which: str) -> list[Any]:
    """The held-out designs `--designs` names, or exit saying what is wrong."""
    try:
        return held_out_designs(which)
    except ValueError as e:
        raise SystemExit(f"error: --designs: {e}") from None


class Ways(NamedTuple):
    """The ways each classifier reads: without and/or with the sharpened copies, the jokers shown, the tens reader."""

    deshake: tuple[bool, ...]
    jokers: tuple[bool, ...]
    tens: tuple[bool, ...]


def folder_readers(
    folder: Path, backend: str, base: Recognizer, once: DetectedOnce, designs: list[Any], ways: Ways
) -> list[tuple[Recognizer, dict[str, Any] | None, str]]:
    """A recogniser for each way one folder's classifier reads `once`'s boxes, with the held-out
    designs' joker marks it is shown (or None) and its label."""
    out = []
    alone = IndexClassifier(folder, backend)
    marks = None
    for with_tens in ways.tens if has_index_model(folder, backend, TENS_STEM) else (False,):
        classifier = alone
        if with_tens:
            classifier = copy.copy(alone)
            classifier.with_tens_reader(folder, backend)
        for sharpened in ways.deshake:
            for with_jokers in ways.jokers:
                reader = copy.copy(base)
                reader.classifier, reader.detector = classifier, once  # type: ignore[assignment]
                reader.deshake = sharpened
                if with_jokers and marks is None:
                    marks = learn_held_out_jokers(reader, designs)
                notes = [
                    n
                    for n, on in (
                        ("tens reader", len(ways.tens) > 1 and with_tens),
                        ("deshake", len(ways.deshake) > 1 and sharpened),
                        ("jokers", with_jokers),
                    )
                    if on
                ]
                out.append(
                    (reader, marks if with_jokers else None, f"{folder} ({', '.join(notes)})" if notes else str(folder))
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("classifiers", nargs="+", type=Path, help="model folders holding an index classifier")
    ap.add_argument(
        "--detector", type=Path, nargs="+", default=[ROOT / "vision_models"], help="model folder(s) of the detector"
    )
    ap.add_argument("--backend", default="onnx", choices=BACKENDS, help="of the detector and the classifiers")
    ap.add_argument("--tables", default="1234:30,777:30,4242:30", help="held-out table seeds and counts")
    ap.add_argument("--spreads", default="4243:150,778:100,1235:100", help="hand spread seeds and counts")
    ap.add_argument("--min-confidence", type=float, default=MIN_CONFIDENCE, help="readings under it are no card")
    ap.add_argument("--designs", default="all", help="held-out designs: procedural, themes or all")
    ap.add_argument(
        "--deshake", default="on", choices=("on", "off", "both"), help="read shaken frames' sharpened copies too"
    )
    ap.add_argument(
        "--jokers", default="off", choices=("on", "off", "both"), help="show the held-out designs' jokers first"
    )
    ap.add_argument(
        "--tens", default="on", choices=("on", "off", "both"), help="ask each folder's tens reader, when it has one"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    tables, spreads = seeds_and_counts(args.tables, "--tables"), seeds_and_counts(args.spreads, "--spreads")
    designs = designs_or_exit(args.designs)
    for folder in args.classifiers:
        if not has_index_model(folder, args.backend):
            raise SystemExit(f"error: {folder} holds no index classifier for the {args.backend} backend")
    deshake = {"on": (True,), "off": (False,), "both": (False, True)}[args.deshake]
    shown = {"on": (True,), "off": (False,), "both": (False, True)}[args.jokers]
    asked = {"on": (True,), "off": (False,), "both": (False, True)}[args.tens]
    ways = Ways(deshake, shown, asked)
    readers: list[Recognizer] = []
    labels: list[str] = []
    jokers: list[dict[str, Any] | None] = []
    try:
        for detector in args.detector:
            # the detector as the two-stage recogniser runs it, also from a folder holding no classifier
            base = Recognizer(
                detector,
                args.backend,
                two_stage=False,
                min_confidence=args.min_confidence,
                conf=TWO_STAGE_DETECTOR_CONF,
                agnostic=True,
            )
            once = DetectedOnce(base.detector)
            named = f"{detector} boxes, " if len(args.detector) > 1 else ""
            for folder in args.classifiers:
                for reader, marks, label in folder_readers(folder, args.backend, base, once, designs, ways):
                    readers.append(reader)
                    jokers.append(marks)
                    labels.append(named + label)
    except ModelError as e:
        raise SystemExit(f"error: {e}") from None

    table_scores = {seed: [SceneScore() for _ in readers] for seed, _ in tables}
    spread_scores = {seed: [SpreadScore() for _ in readers] for seed, _ in spreads}
    with progress(sum(n for _, n in tables + spreads), "scenes") as bar:
        for seed, count in tables:
            for n in range(count):
                scene = render_table(scene_seed(seed, n), designs)
                for reader, marks, score in zip(readers, jokers, table_scores[seed]):
                    shown_jokers(reader, marks, scene.design)
                    score_table(reader, scene, score)
                bar.update(1)
        for seed, count in spreads:
            for n in range(count):
                scene, truth = render_spread(scene_seed(seed, n), designs)
                for reader, marks, tally in zip(readers, jokers, spread_scores[seed]):
                    shown_jokers(reader, marks, scene.design)
                    tally.add(scene, truth, [c.card for c in reader.recognize(scene.image)])
                bar.update(1)

    out = report(labels, tables, spreads, table_scores, spread_scores)
    if args.json:
        print(json.dumps(out))
        return
    print_table(out)


def report(
    classifiers: list[str],
    tables: list[tuple[int, int]],
    spreads: list[tuple[int, int]],
    table_scores: dict[int, list[SceneScore]],
    spread_scores: dict[int, list[SpreadScore]],
) -> dict[str, Any]:
    out: dict[str, Any] = {"classifiers": list(classifiers), "tables": [], "spreads": [], "all": []}
    for seed, count in tables:
        out["tables"].append({"seed": seed, "tables": count, "scores": [_table_row(s) for s in table_scores[seed]]})
    for seed, count in spreads:
        out["spreads"].append({"seed": seed, "spreads": count, "exact": [s.exact for s in spread_scores[seed]]})
    for i in range(len(classifiers)):
        out["all"].append(
            {
                "card_errors": sum(t["scores"][i]["errors"] for t in out["tables"]),
                "spreads_exact": sum(s["exact"][i] for s in out["spreads"]),
                "spreads": sum(n for _, n in spreads),
            }
        )
    return out


def _table_row(score: SceneScore) -> dict[str, Any]:
    steady = score.by_camera.get("steady")
    shaken = score.by_camera.get("shaken")
    return {
        "fp": score.total.fp,
        "fn": score.total.fn,
        "errors": score.total.fp + score.total.fn,
        "f1": round(score.total.f1, 4),
        "steady_f1": round(steady.f1, 4) if steady else None,
        "shaken_f1": round(shaken.f1, 4) if shaken else None,
    }


def print_table(out: dict[str, Any]) -> None:
    names = out["classifiers"]
    print("| | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for t in out["tables"]:
        cells = [
            f"{s['fp']} / {s['fn']}, F1 {s['f1']:.4f} (steady {s['steady_f1']}, shaken {s['shaken_f1']})"
            for s in t["scores"]
        ]
        print(f"| seed {t['seed']}, {t['tables']} tables: false / missed | " + " | ".join(cells) + " |")
    for s in out["spreads"]:
        print(f"| seed {s['seed']}, {s['spreads']} spreads exact | " + " | ".join(str(e) for e in s["exact"]) + " |")
    first = out["all"][0]
    cells = [
        f"{a['card_errors']} errors ({a['card_errors'] - first['card_errors']:+d}), "
        f"{a['spreads_exact']} / {a['spreads']} spreads ({a['spreads_exact'] - first['spreads_exact']:+d})"
        for a in out["all"]
    ]
    print("| all | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
