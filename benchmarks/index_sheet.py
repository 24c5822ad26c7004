"""A picture of the corner indices of held-out rendered tables as the classifier sees them, with what
it read: to look at where the recogniser's errors come from (a shaken camera, a design's wide "10").

    .venv/bin/python benchmarks/index_sheet.py --out sheet.png --tables 28 25   # held-out tables of seed 777

Each row is one table (its design and what the camera did to it in the row's label); each tile is a
visible index, cut as the classifier's middle crop, with its true card (top) and the reading of the
detector box on it (bottom: green when right, orange when right but under the reading threshold, so
dropped; red when wrong; grey "-" when no detector box lies on it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))

from mayi_table.vision.classify import MIN_CONFIDENCE  # noqa: E402
from mayi_table.vision.detect import ModelError  # noqa: E402
from mayi_table.vision.index_crops import index_crop, iou  # noqa: E402
from mayi_table.vision.recognize import Recognizer  # noqa: E402
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS  # noqa: E402
from mayi_table.vision.render.scene import Scene, quad_box, render_table  # noqa: E402
from mayi_table.vision.render.themes import theme_split  # noqa: E402

TILE = 96
PER_ROW = 14
ON_INDEX = 0.3  # a detector box overlapping a true index by this IoU is read as that index


def _text(img: np.ndarray, text: str, y: int, colour: tuple[int, int, int]) -> None:
    cv2.rectangle(img, (0, y - 13), (TILE, y + 3), (255, 255, 255), -1)
    cv2.putText(img, text, (3, y), cv2.FONT_HERSHEY_SIMPLEX, 0.42, colour, 1, cv2.LINE_AA)


def tiles(reader: Recognizer, scene: Scene) -> list[np.ndarray]:
    """One labelled tile per visible index of the scene."""
    assert reader.classifier is not None
    boxes = [c.box for c in reader.detector.detect(scene.image)]
    readings = reader.classifier.read(scene.image, boxes)
    out = []
    for label in scene.labels:
        for quad in label.corners:
            if quad is None:
                continue
            truth = quad_box(quad)
            best = max(range(len(boxes)), key=lambda k: iou(boxes[k], truth), default=None)
            tile = cv2.resize(index_crop(scene.image, truth, size=64), (TILE, TILE), interpolation=cv2.INTER_NEAREST)
            _text(tile, label.card, 13, (0, 0, 0))
            if best is None or iou(boxes[best], truth) < ON_INDEX:
                _text(tile, "-", TILE - 4, (128, 128, 128))
            else:
                name, conf, _ = readings[best]
                right = name == label.card
                colour = (0, 150, 0) if right and conf >= MIN_CONFIDENCE else (0, 140, 255) if right else (0, 0, 220)
                _text(tile, f"{name} {conf:.2f}", TILE - 4, colour)
            out.append(tile)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="vision_models", help="model folder")
    ap.add_argument("--seed", type=int, default=777, help="seed of the held-out tables (as `mayi-table evaluate`)")
    ap.add_argument("--tables", type=int, nargs="+", default=[28, 25], help="which tables of that seed")
    ap.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = ap.parse_args()
    designs = list(HELD_OUT_DESIGNS) + theme_split()[1]
    try:
        reader = Recognizer(args.model, "onnx")
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if reader.classifier is None:
        print(f"{args.model}: no index classifier", file=sys.stderr)
        return 1
    rows = []
    for n in args.tables:
        scene = render_table(args.seed * 1_000_003 + n, designs)
        spoil = scene.spoil
        camera = f"shaken {spoil.shake_px} px" if spoil.shake_px else "steady"
        title = f"table {n}: {scene.design}, {camera}, blur {spoil.blur_sigma:.1f}, JPEG {spoil.jpeg_quality}"
        row = tiles(reader, scene)[:PER_ROW]
        row += [np.full((TILE, TILE, 3), 255, np.uint8)] * (PER_ROW - len(row))
        head = np.full((24, TILE * PER_ROW, 3), 255, np.uint8)
        cv2.putText(head, title, (4, 17), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
        rows += [head, np.hstack(row)]
        print(title)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), np.vstack(rows))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
