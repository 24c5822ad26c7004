"""How well the recogniser names cards: rendered held-out scenes, hand spreads, real photos.

- Rendered scenes use deck designs never seen in training; a predicted card is right when its
  class is right and one of its corners lies on a corner index of a true card, each true card
  matched at most once. Cards with a fully visible index must be found; a card seen only through
  partly covered indices may be named or not (see `score_cards`). Per-card precision, recall and
  F1 follow.
- Hand spreads: the share of spreads whose point total is exactly right under both profiles.
- Both are also given per deck design and per camera: frames blurred by a shaken camera (the
  renderer's motion blur, whose streak of 3-7 px can smear 18 px indices past reading) apart from
  steady ones, so a figure shows where its errors come from.
- With `jokers`, each design's jokers are shown to the recogniser first, as a family shows the
  device its deck's jokers once (jokers.py): one rendered frame of them alone on the table.
- Real photos (`edje_train`, whole-card boxes labelled by rank only): the rank voted by the corner
  indices found inside each box, by confidence.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..rules.profiles import make_profile
from .classes import Box, CardReader, PhysicalCard
from .index_crops import index_label
from .jokers import JokerMarks
from .render.faces import HELD_OUT_DESIGNS, Design
from .render.scene import CardLabel, Scene, Spoil, quad_box, render_jokers, render_spread, render_table

REAL_RANKS = {"nine": "9", "ten": "10", "jack": "J", "queen": "Q", "king": "K", "ace": "A"}


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    def as_dict(self) -> dict[str, float | int]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass
class SceneScore:
    total: Counts = field(default_factory=Counts)
    per_card: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    partial_reads: int = 0  # cards named rightly through a partly covered index only: neither TP nor FP
    by_camera: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))  # "steady" / "shaken"
    by_design: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    frames: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # frames per camera

    def add_scene(self, scene: SceneScore, design: str, camera: str) -> None:
        """Fold one frame's score in, under its design and camera."""
        self.total.add(scene.total)
        for card, counts in scene.per_card.items():
            self.per_card[card].add(counts)
        self.partial_reads += scene.partial_reads
        self.by_camera[camera].add(scene.total)
        self.by_design[design].add(scene.total)
        self.frames[camera] += 1

    def breakdown(self) -> dict[str, Any]:
        """Per camera (frames and per-card figures) and per design (per-card figures)."""
        return {
            "by_camera": {k: {"frames": self.frames[k], **self.by_camera[k].as_dict()} for k in sorted(self.by_camera)},
            "by_design": {k: self.by_design[k].as_dict() for k in sorted(self.by_design)},
        }


DESIGN_CHOICES = ("procedural", "themes", "all")


def held_out_designs(which: str = "all") -> list[Design]:
    """The deck designs never trained on: the procedural ones, Debian's card themes (those installed)
    or all; ValueError for another choice."""
    if which not in DESIGN_CHOICES:
        raise ValueError(f"designs are {', '.join(DESIGN_CHOICES)}, not {which!r}")
    from .render.themes import theme_split

    held_out: list[Design] = list(HELD_OUT_DESIGNS) if which != "themes" else []
    if which != "procedural":
        held_out += theme_split()[1]
    return held_out


def camera_of(spoil: Spoil) -> str:
    """Whether a frame was blurred by a shaken camera ("shaken") or not ("steady")."""
    return "shaken" if spoil.shake_px > 0 else "steady"


PARTLY_SEEN_SHARE = 0.5  # an index this much uncovered may be read; only one past VISIBLE_SHARE must be


def _overlaps(a: Box, b: Box) -> bool:
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return False
    inter = ix * iy
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return inter >= 0.3 * smaller


def score_cards(pred: Sequence[PhysicalCard], truth: Sequence[CardLabel], into: SceneScore) -> None:
    """Match predicted cards to true cards (same face, a corner on one of its indices), each true card
    at most once.

    A card with a visible index (VISIBLE_SHARE uncovered) must be found: unmatched, it is a false
    negative. A card whose indices are all partly covered (PARTLY_SEEN_SHARE to VISIBLE_SHARE, or a 10
    showing its "1": `index_label`) may be named or not: a right reading of it is counted apart,
    neither hit nor false alarm; a second prediction of one physical card is always a false alarm."""
    cards = []
    for lab in truth:
        leads = lab.lead_shares or (0.0,) * len(lab.quads)
        seen = [
            q
            for q, share, lead in zip(lab.quads, lab.corner_shares, leads)
            if share >= PARTLY_SEEN_SHARE or index_label(lab.card, share, lead) == lab.card
        ]
        boxes = [quad_box(q) for q in seen or [q for q in lab.corners if q is not None]]
        if boxes:
            cards.append((lab.card, boxes, any(q is not None for q in lab.corners)))
    used = [False] * len(cards)
    for card in sorted(pred, key=lambda c: -c.confidence):
        hit = None
        for j, (name, boxes, _) in enumerate(cards):
            if used[j] or name != card.card:
                continue
            if any(_overlaps(corner.box, b) for corner in card.corners for b in boxes):
                hit = j
                break
        if hit is None:
            into.total.fp += 1
            into.per_card[card.card].fp += 1
        elif cards[hit][2]:
            used[hit] = True
            into.total.tp += 1
            into.per_card[card.card].tp += 1
        else:
            used[hit] = True
            into.partial_reads += 1
    for j, (name, _, required) in enumerate(cards):
        if required and not used[j]:
            into.total.fn += 1
            into.per_card[name].fn += 1


JOKERS_SEED = 99  # the frame each held-out design's jokers are learnt from


def learn_held_out_jokers(reader: Any, designs: Sequence[Design], seed: int = JOKERS_SEED) -> dict[str, JokerMarks]:
    """Each design's joker marks, learnt by `reader` (a Recognizer) from a frame of its jokers alone."""
    return {d.name: reader.learn_jokers([render_jokers(seed, d).image]) for d in designs}


def shown_jokers(reader: CardReader, jokers: dict[str, JokerMarks] | None, design: str) -> None:
    """Tell the reader the jokers of the deck on the table, when they were shown."""
    if jokers is not None:
        reader.jokers = jokers[design]  # type: ignore[attr-defined]


def evaluate_scenes(
    reader: CardReader,
    scenes: int,
    seed: int = 777,
    designs: Sequence[Design] = HELD_OUT_DESIGNS,
    progress: Callable[[int], None] | None = None,
    jokers: dict[str, JokerMarks] | None = None,
) -> SceneScore:
    score = SceneScore()
    for n in range(scenes):
        scene = render_table(scene_seed(seed, n), designs)
        shown_jokers(reader, jokers, scene.design)
        score_table(reader, scene, score)
        if progress:
            progress(1)
    return score


def scene_seed(seed: int, n: int) -> int:
    """The render seed of the n-th held-out table or spread of an evaluation seed."""
    return seed * 1_000_003 + n


def score_table(reader: CardReader, scene: Scene, into: SceneScore) -> None:
    """Recognise one rendered table and fold its score into `into`."""
    one = SceneScore()
    score_cards(reader.recognize(scene.image), scene.labels, one)
    into.add_scene(one, scene.design, camera_of(scene.spoil))


def spread_points(cards: Sequence[str]) -> tuple[int, int]:
    petras, classic = make_profile("petras"), make_profile("classic")
    return sum(petras.value(c) for c in cards), sum(classic.value(c) for c in cards)


@dataclass
class SpreadScore:
    """Hand spreads scored: point totals exactly right (both profiles), the same cards, per camera."""

    spreads: int = 0
    exact: int = 0
    same_cards: int = 0
    camera: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # spreads, exact
    wrong_by_design: Counter[str] = field(default_factory=Counter)

    def add(self, scene: Scene, truth: Sequence[str], seen: Sequence[str]) -> bool:
        """Score one spread read as `seen`; whether its point total came out right."""
        right = spread_points(seen) == spread_points(truth)
        self.spreads += 1
        self.exact += right
        self.same_cards += Counter(seen) == Counter(truth)
        tally = self.camera[camera_of(scene.spoil)]
        tally[0] += 1
        tally[1] += right
        if not right:
            self.wrong_by_design[scene.design] += 1
        return right

    def as_dict(self) -> dict[str, Any]:
        return {
            "spreads": self.spreads,
            "points_exact": round(self.exact / max(1, self.spreads), 4),
            "cards_exact": round(self.same_cards / max(1, self.spreads), 4),
            "by_camera": {
                k: {"spreads": t[0], "points_exact": round(t[1] / t[0], 4)} for k, t in sorted(self.camera.items())
            },
            "wrong_by_design": dict(sorted(self.wrong_by_design.items())),
        }


def evaluate_spreads(
    reader: CardReader,
    spreads: int,
    seed: int = 555,
    designs: Sequence[Design] = HELD_OUT_DESIGNS,
    progress: Callable[[int], None] | None = None,
    jokers: dict[str, JokerMarks] | None = None,
) -> dict[str, Any]:
    score = SpreadScore()
    for n in range(spreads):
        scene, truth = render_spread(scene_seed(seed, n), designs)
        shown_jokers(reader, jokers, scene.design)
        score.add(scene, truth, [c.card for c in reader.recognize(scene.image)])
        if progress:
            progress(1)
    return score.as_dict()


def read_voc(xml_path: Path) -> list[tuple[str, Box]]:
    """The (rank, box) objects of a Pascal VOC annotation; ranks in record notation."""
    root = ET.parse(xml_path).getroot()
    out = []
    for obj in root.iter("object"):
        name = (obj.findtext("name") or "").strip().lower()
        bb = obj.find("bndbox")
        if name not in REAL_RANKS or bb is None:
            continue
        box = tuple(float(bb.findtext(k) or 0) for k in ("xmin", "ymin", "xmax", "ymax"))
        out.append((REAL_RANKS[name], (box[0], box[1], box[2], box[3])))
    return out


def rank_in_box(cards: Sequence[PhysicalCard], box: Box) -> str | None:
    """The rank voted by the corner indices whose centre lies inside `box`, weighted by confidence."""
    votes: Counter[str] = Counter()
    for card in cards:
        for corner in card.corners:
            cx, cy = (corner.box[0] + corner.box[2]) / 2, (corner.box[1] + corner.box[3]) / 2
            if box[0] <= cx <= box[2] and box[1] <= cy <= box[3]:
                rank = "JK" if corner.card == "JK" else corner.card[:-1]
                votes[rank] += int(corner.confidence * 1000)
    return votes.most_common(1)[0][0] if votes else None


def evaluate_real_photos(
    reader: CardReader,
    folder: Path,
    load: Callable[[Path], np.ndarray],
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    xmls = sorted(folder.glob("*.xml"))[:limit]
    right = total = 0
    per_rank: dict[str, Counts] = defaultdict(Counts)
    for xml_path in xmls:
        objects = read_voc(xml_path)
        image_path = next(
            (p for p in (xml_path.with_suffix(s) for s in (".JPG", ".jpg", ".jpeg", ".png")) if p.exists()), None
        )
        if image_path is None or not objects:
            continue
        cards = reader.recognize(load(image_path))
        for rank, box in objects:
            total += 1
            got = rank_in_box(cards, box)
            if got == rank:
                right += 1
                per_rank[rank].tp += 1
            else:
                per_rank[rank].fn += 1
        if progress:
            progress(1)
    return {
        "photos": len(xmls),
        "boxes": total,
        "rank_accuracy": round(right / max(1, total), 4),
        "per_rank_recall": {r: round(c.recall, 4) for r, c in sorted(per_rank.items())},
    }
