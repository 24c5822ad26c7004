"""Training data for the corner-index detector: rendered tables cut into native-scale crops.

Corner indices are about 12 x 30 px in a 1080p frame, so the detector is trained on crops of the
frame at the camera's own scale (not on shrunk whole frames) and runs on tiles of the same size.
Held-out deck designs never appear here; `mayi-table evaluate` renders scenes with them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import cv2
import numpy as np

from .classes import CLASS_INDEX, CLASS_NAMES
from .index_crops import index_label
from .render.faces import TRAIN_DESIGNS, Design
from .render.scene import Scene, quad_box, training_scene

MIN_INSIDE = 0.6  # a corner box is labelled in a crop when this share of it lies inside


@dataclass(frozen=True)
class DatasetSpec:
    scenes: int = 400
    val_scenes: int = 40
    crop: int = 320
    crops_per_scene: int = 10
    seed: int = 1
    zoomed_share: float = 0.3  # scenes framed closer, with bigger cards
    spread_share: float = 0.0  # scenes that are 800 x 600 hand spreads instead of tables
    joker_share: float = 0.0  # cards made jokers, so every design's joker mark is seen often
    # label every index the classifier is taught to name (`index_crops.index_label`: 70% uncovered, or
    # a fanned "10" showing its "1"), not only those 90% uncovered: a tight hand spread shows no more,
    # and an index left unlabelled is background to the detector (detector part 8: tried, not kept)
    partly_covered: bool = False


def label_boxes(scene: Scene, partly_covered: bool = False) -> list[tuple[str, tuple[float, float, float, float]]]:
    """The corner boxes the detector is taught to find: every visible index (`Scene.corner_boxes`),
    or with `partly_covered` every index readable as its card."""
    if not partly_covered:
        return scene.corner_boxes()
    return [
        (lab.card, quad_box(quad))
        for lab in scene.labels
        for quad, share, lead in zip(lab.quads, lab.corner_shares, lab.lead_shares)
        if index_label(lab.card, share, lead) == lab.card
    ]


def crop_labels(
    scene: Scene, x0: int, y0: int, size: int, partly_covered: bool = False
) -> list[tuple[int, float, float, float, float]]:
    """YOLO labels (class, cx, cy, w, h normalised) of the corner boxes inside a crop (`label_boxes`)."""
    out = []
    for card, (x1, y1, x2, y2) in label_boxes(scene, partly_covered):
        cx1, cy1 = max(x1, x0), max(y1, y0)
        cx2, cy2 = min(x2, x0 + size), min(y2, y0 + size)
        if cx2 <= cx1 or cy2 <= cy1:
            continue
        inside = (cx2 - cx1) * (cy2 - cy1) / max(1e-6, (x2 - x1) * (y2 - y1))
        if inside < MIN_INSIDE:
            continue
        out.append(
            (
                CLASS_INDEX[card],
                ((cx1 + cx2) / 2 - x0) / size,
                ((cy1 + cy2) / 2 - y0) / size,
                (cx2 - cx1) / size,
                (cy2 - cy1) / size,
            )
        )
    return out


def crops_of(
    scene: Scene, rng: random.Random, size: int, count: int, partly_covered: bool = False
) -> list[tuple[int, int]]:
    """Crop origins: most centred near a labelled corner (jittered), some anywhere."""
    h, w = scene.image.shape[:2]
    boxes = label_boxes(scene, partly_covered)
    out = []
    for k in range(count):
        if boxes and k < count * 0.8:
            _, (x1, y1, x2, y2) = rng.choice(boxes)
            cx = (x1 + x2) / 2 + rng.uniform(-size * 0.4, size * 0.4)
            cy = (y1 + y2) / 2 + rng.uniform(-size * 0.4, size * 0.4)
        else:
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        x0 = int(np.clip(cx - size / 2, 0, w - size))
        y0 = int(np.clip(cy - size / 2, 0, h - size))
        out.append((x0, y0))
    return out


def build_dataset(
    out: Path,
    spec: DatasetSpec = DatasetSpec(),
    designs: Sequence[Design] = TRAIN_DESIGNS,
    progress: Callable[[int], None] | None = None,
    shard: tuple[int, int] = (0, 1),
) -> Path:
    """Write `out/images/{train,val}`, `out/labels/{train,val}` and `out/data.yaml`.

    Deterministic per seed; scenes already written are kept, so an interrupted build resumes.
    `shard=(i, k)` builds only every k-th scene from the i-th, for k processes side by side.
    """
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    total = spec.scenes + spec.val_scenes
    for n in range(shard[0], total, shard[1]):
        split = "train" if n < spec.scenes else "val"
        marker = out / "labels" / split / f"s{n:05d}_done"
        if marker.exists():
            if progress:
                progress(1)
            continue
        seed = spec.seed * 1_000_003 + n
        rng = random.Random(seed)
        scene = training_scene(seed, rng, designs, spec.zoomed_share, spec.spread_share, spec.joker_share)
        for k, (x0, y0) in enumerate(crops_of(scene, rng, spec.crop, spec.crops_per_scene, spec.partly_covered)):
            name = f"s{n:05d}_{k:02d}"
            crop = scene.image[y0 : y0 + spec.crop, x0 : x0 + spec.crop]
            cv2.imwrite(str(out / "images" / split / f"{name}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
            rows = crop_labels(scene, x0, y0, spec.crop, spec.partly_covered)
            (out / "labels" / split / f"{name}.txt").write_text(
                "".join(f"{c} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}\n" for c, cx, cy, bw, bh in rows)
            )
        marker.write_text("")
        if progress:
            progress(1)
    names = "\n".join(f"  {i}: '{n}'" for i, n in enumerate(CLASS_NAMES))
    (out / "data.yaml").write_text(f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    return out / "data.yaml"
