"""Square crops around corner indices: what the index classifier sees, in training and on the device.

The detector finds where corner indices are; the classifier names them from a small square crop
centred on each box. Both training data and the running recogniser cut crops with `index_crop`,
so the classifier always sees crops framed the same way.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable, Sequence

import cv2
import numpy as np

from .classes import CLASS_NAMES
from .render.faces import TRAIN_DESIGNS, Design
from .render.scene import VISIBLE_SHARE, CardLabel, Scene, quad_box, training_scene

CROP_SIZE = 64  # classifier input, px (a multiple of the network stride, 32)
CROP_PAD = 1.3  # the crop's side is this many times the box's longer side
NONE = "none"  # not a corner index: the detector's false alarms
MINING_CONF = 0.05  # the detector's boxes from this confidence become training crops (every mined part so far)
INDEX_CLASSES: tuple[str, ...] = (*CLASS_NAMES, NONE)

Box = tuple[float, float, float, float]


def index_crop(image: np.ndarray, box: Box, size: int = CROP_SIZE, pad: float = CROP_PAD) -> np.ndarray:
    """The `size` x `size` BGR crop centred on `box` (x1, y1, x2, y2), side `pad` x its longer side.

    Parts of the square outside the image are filled by replicating the border."""
    x1, y1, x2, y2 = box
    side = max(x2 - x1, y2 - y1, 2.0) * pad
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    scale = size / side
    # affine map from image to crop: translate the square's corner to 0, then scale
    m = np.array([[scale, 0, -(cx - side / 2) * scale], [0, scale, -(cy - side / 2) * scale]], np.float32)
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    return np.asarray(cv2.warpAffine(image, m, (size, size), flags=interp, borderMode=cv2.BORDER_REPLICATE))


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (x1, y1, x2, y2)."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def jittered(box: Box, rng: random.Random, shift: float = 0.12, grow: tuple[float, float] = (0.85, 1.2)) -> Box:
    """A box as a detector might return it: centre shifted, size scaled a little."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    cx = (x1 + x2) / 2 + rng.uniform(-shift, shift) * w
    cy = (y1 + y2) / 2 + rng.uniform(-shift, shift) * h
    w, h = w * rng.uniform(*grow), h * rng.uniform(*grow)
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


READABLE_SHARE = 0.7  # an index this much uncovered is still read (a tight hand spread shows no more)
UNREADABLE_SHARE = 0.5  # one covered more than half is not an index to read: `none`
# ... but a 10 whose "0" a fanned card hides still shows its "1", which no other rank prints: it is read
# when its leading strip (render.scene.LEAD_WIDTH) is all but whole and some of its suit shows too
TEN_SHARE = 0.35
TEN_LEAD = 0.95


def index_label(card: str, share: float, lead: float) -> str | None:
    """What a crop of a partly covered index of `card` should be read as: the card, `none`, or None
    where either answer is fair (an index half to READABLE_SHARE uncovered)."""
    if share >= READABLE_SHARE or (card.startswith("10") and share >= TEN_SHARE and lead >= TEN_LEAD):
        return card
    return NONE if share < UNREADABLE_SHARE else None


def _index_shares(lab: CardLabel) -> list[tuple[np.ndarray, float, float]]:
    """(quad, uncovered share, leading strip's uncovered share) of each index of a card."""
    leads = lab.lead_shares or (0.0,) * len(lab.quads)
    return list(zip(lab.quads, lab.corner_shares, leads))


def scene_samples(scene: Scene, rng: random.Random, negatives: float = 0.25) -> list[tuple[str, Box]]:
    """(class, box) samples of a scene: every readable index (jittered), mostly covered indices as
    `none`, and index-sized boxes elsewhere.

    Negatives lie mostly on cards (pips, court art, covered indices: where a detector errs) and
    never overlap a visible index."""
    h, w = scene.image.shape[:2]
    visible = scene.corner_boxes()
    out: list[tuple[str, Box]] = [(card, jittered(b, rng)) for card, b in visible]
    for lab in scene.labels:
        for q, share, lead in _index_shares(lab):
            if share >= VISIBLE_SHARE:
                continue
            name = index_label(lab.card, share, lead)
            if name == lab.card:
                out.append((lab.card, jittered(quad_box(q), rng)))
            elif name == NONE and share >= 0.15:
                box = jittered(quad_box(q), rng)
                if all(iou(box, b) < 0.1 for _, b in visible):  # not where another card's index shows
                    out.append((NONE, box))
    hidden = [lab for lab in scene.labels if lab.visible_share > 0.05]
    for _ in range(int(len(visible) * negatives) + 1):
        if not visible:
            break
        _, ref = rng.choice(visible)
        bw, bh = ref[2] - ref[0], ref[3] - ref[1]
        if hidden and rng.random() < 0.8:
            pts = rng.choice(hidden).outline
            wts = np.array([rng.random() for _ in range(4)])
            cx, cy = (wts / wts.sum()) @ pts
        else:
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        cand = (cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2)
        if all(iou(cand, b) < 0.1 for _, b in visible):
            out.append((NONE, cand))
    return out


def inside_share(a: Box, b: Box) -> float:
    """The share of the smaller box that lies inside the other."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return ix * iy / smaller if smaller > 0 else 0.0


def detected_samples(scene: Scene, boxes: Sequence[Box]) -> list[tuple[str, Box]]:
    """(class, box) samples framed exactly as the device frames them: the detector's own boxes.

    A box on a readable index is that card; one on nothing readable (a mostly covered index, pips,
    court art, a card back's edge, the table) is `none`, the detector's false alarms the classifier
    must learn to reject. A box on an index half to 70% uncovered is left out: either answer is fair
    (`index_label`)."""
    quads = [
        (quad_box(q), index_label(lab.card, share, lead))
        for lab in scene.labels
        for q, share, lead in _index_shares(lab)
    ]
    out: list[tuple[str, Box]] = []
    for box in boxes:
        on = [name for q, name in quads if inside_share(box, q) >= 0.5]
        readable = [name for name in on if name not in (None, NONE)]
        if readable:
            out.append((readable[0], box))
        elif all(name == NONE for name in on):
            out.append((NONE, box))
    return out


def build_index_dataset(
    out: Path,
    scenes: int = 1500,
    val_scenes: int = 100,
    seed: int = 7,
    zoomed_share: float = 0.3,
    spread_share: float = 0.0,
    joker_share: float = 0.0,
    designs: Sequence[Design] = TRAIN_DESIGNS,
    progress: Callable[[int], None] | None = None,
    shard: tuple[int, int] = (0, 1),
    detector: Callable[[np.ndarray], Sequence[Box]] | None = None,
) -> Path:
    """Write `out/{train,val}/<class>/*.jpg` (the layout Ultralytics classification reads).

    With a `detector` (image -> corner boxes), each scene also gives crops at the boxes it finds
    (`detected_samples`). Deterministic per seed and detector; scenes already written are kept, so
    an interrupted build resumes."""
    for split in ("train", "val"):
        for name in INDEX_CLASSES:
            (out / split / name).mkdir(parents=True, exist_ok=True)
    (out / "done").mkdir(parents=True, exist_ok=True)
    for n in range(shard[0], scenes + val_scenes, shard[1]):
        marker = out / "done" / f"s{n:05d}"
        if marker.exists():
            if progress:
                progress(1)
            continue
        split = "train" if n < scenes else "val"
        s = seed * 1_000_003 + n
        rng = random.Random(s)
        scene = training_scene(s, rng, designs, zoomed_share, spread_share, joker_share)
        samples = scene_samples(scene, rng)
        if detector is not None:
            samples += detected_samples(scene, detector(scene.image))
        for k, (name, box) in enumerate(samples):
            crop = index_crop(scene.image, box)
            cv2.imwrite(str(out / split / name / f"s{n:05d}_{k:03d}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
        marker.write_text("")
        if progress:
            progress(1)
    return out
