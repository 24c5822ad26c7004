"""Corner detectors compared side by side: which indices of held-out hand spreads they box, by how
much of each index a fanned card leaves uncovered.

    .venv/bin/python benchmarks/detector_recall.py vision_models /tmp/d8 [--spreads 1235:100]
        [--tables 1234:0] [--json]

Each DETECTOR is a model folder holding `corners.onnx` (or the backend's file), run as the two-stage
recogniser runs it (its low threshold, class-agnostic; the classifier never asked). Every held-out
hand spread and table (as `mayi-table evaluate --seed S` renders them) is rendered once and given to
each detector. An index counts as boxed when some box holds its centre. Indices are counted in four
kinds: 90% or more uncovered (the detector's labels before `partly_covered`), 70-90% (the
classifier names them), 50-70% (either answer is fair), and a fanned "10" showing its "1" under 50%.
Also: cards none of whose indices of those kinds is boxed, which no reading can bring back.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "device"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from classifiers import designs_or_exit, seeds_and_counts  # noqa: E402
from mayi_table.cli import progress  # noqa: E402
from mayi_table.vision.classes import Box  # noqa: E402
from mayi_table.vision.detect import BACKENDS, Detector, ModelError  # noqa: E402
from mayi_table.vision.evaluate import scene_seed  # noqa: E402
from mayi_table.vision.index_crops import READABLE_SHARE, UNREADABLE_SHARE, index_label  # noqa: E402
from mayi_table.vision.recognize import TWO_STAGE_DETECTOR_CONF  # noqa: E402
from mayi_table.vision.render.scene import VISIBLE_SHARE, Scene, quad_box, render_spread, render_table  # noqa: E402

KINDS = ("90% or more", "70-90%", "50-70%", "a 10's 1 only")


def index_kind(card: str, share: float, lead: float) -> str | None:
    """Which of KINDS an index of `card` this much uncovered (its leading strip `lead`) is, or None
    for one too covered to count."""
    if share >= VISIBLE_SHARE:
        return KINDS[0]
    if share >= READABLE_SHARE:
        return KINDS[1]
    if share >= UNREADABLE_SHARE:
        return KINDS[2]
    return KINDS[3] if index_label(card, share, lead) == card else None


def holds_centre(box: Box, index_box: Box) -> bool:
    """Whether a detector's box holds the centre of an index's box."""
    cx, cy = (index_box[0] + index_box[2]) / 2, (index_box[1] + index_box[3]) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


class Tally:
    def __init__(self) -> None:
        self.boxed = {k: 0 for k in KINDS}
        self.indices = {k: 0 for k in KINDS}
        self.cards = 0
        self.cards_unboxed = 0

    def add(self, scene: Scene, boxes: list[Box]) -> None:
        for lab in scene.labels:
            kinds = [
                (index_kind(lab.card, share, lead), quad_box(quad))
                for quad, share, lead in zip(lab.quads, lab.corner_shares, lab.lead_shares)
            ]
            counted = [(kind, qb) for kind, qb in kinds if kind is not None]
            if not counted:
                continue
            self.cards += 1
            any_boxed = False
            for kind, qb in counted:
                hit = any(holds_centre(b, qb) for b in boxes)
                self.indices[kind] += 1
                self.boxed[kind] += hit
                any_boxed |= hit
            self.cards_unboxed += not any_boxed

    def row(self) -> dict[str, Any]:
        return {
            "boxed": dict(self.boxed),
            "indices": dict(self.indices),
            "cards": self.cards,
            "cards_unboxed": self.cards_unboxed,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("detectors", nargs="+", type=Path, help="model folders holding a corner detector")
    ap.add_argument("--backend", default="onnx", choices=BACKENDS, help="of the detectors")
    ap.add_argument("--spreads", default="1235:100", help="hand spread seeds and counts")
    ap.add_argument("--tables", default="1234:0", help="held-out table seeds and counts")
    ap.add_argument("--designs", default="all", help="held-out designs: procedural, themes or all")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    spreads, tables = seeds_and_counts(args.spreads, "--spreads"), seeds_and_counts(args.tables, "--tables")
    designs = designs_or_exit(args.designs)
    try:
        detectors = [
            Detector(folder, args.backend, conf=TWO_STAGE_DETECTOR_CONF, agnostic=True) for folder in args.detectors
        ]
    except ModelError as e:
        raise SystemExit(f"error: {e}") from None

    scenes = [("spreads", seed, n) for seed, count in spreads for n in range(count)]
    scenes += [("tables", seed, n) for seed, count in tables for n in range(count)]
    tallies = {(kind, seed): [Tally() for _ in detectors] for kind, seed, _ in scenes}
    with progress(len(scenes), "scenes") as bar:
        for kind, seed, n in scenes:
            if kind == "spreads":
                scene = render_spread(scene_seed(seed, n), designs)[0]
            else:
                scene = render_table(scene_seed(seed, n), designs)
            for detector, tally in zip(detectors, tallies[(kind, seed)]):
                tally.add(scene, [c.box for c in detector.detect(scene.image)])
            bar.update(1)

    out: dict[str, Any] = {
        "detectors": [str(d) for d in args.detectors],
        "scenes": [
            {"kind": kind, "seed": seed, "scores": [t.row() for t in rows]} for (kind, seed), rows in tallies.items()
        ],
    }
    if args.json:
        print(json.dumps(out))
        return
    print("| | " + " | ".join(out["detectors"]) + " |")
    print("|---" * (len(detectors) + 1) + "|")
    for block in out["scenes"]:
        where = f"{block['kind']} of seed {block['seed']}"
        for kind in KINDS:
            cells = [f"{s['boxed'][kind]} / {s['indices'][kind]}" for s in block["scores"]]
            print(f"| {where}: indices {kind} uncovered, boxed | " + " | ".join(cells) + " |")
        cells = [f"{s['cards_unboxed']} of {s['cards']}" for s in block["scores"]]
        print(f"| {where}: cards with no index boxed | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
