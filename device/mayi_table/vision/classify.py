"""The second stage of the recogniser: name each detected corner index from a small crop.

The detector (detect.py) is good at finding corner indices but poor at telling 53 faces apart;
a classifier on a 64 px crop of each index (index_crops.py frames it) is far cheaper to train
well. Its model lives beside the detector's as ``index.pt`` / ``index.onnx`` / ``index_ncnn_model/``
(an Ultralytics classification model: (1, 3, 64, 64) RGB in [0, 1] -> (1, 54) probabilities; the
54th class, ``none``, rejects the detector's false alarms). Same backends as the detector.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Sequence

import numpy as np

from .classes import MIN_CONFIDENCE, Box, Corner, Readings, box_area
from .detect import Backend, ModelError, load_backend, model_file, to_tensor
from .index_crops import CROP_PAD, CROP_SIZE, INDEX_CLASSES, NONE, index_crop, inside_share
from .jokers import JokerMarks, marks_in

STEM = "index"
# The tens reader (classifier part 21, trained with a fanned "10" showing only its "1" labelled as the
# ten): a second opinion where the classifier is unsure, beside it in the model folder as index_tens.*
TENS_STEM = "index_tens"
TENS = frozenset({"10C", "10D", "10H", "10S"})
# a reading under this, in a frame not found shaken, is read by the tens reader too and the two are
# averaged, kept only when the mean names a ten (chosen on the tuning seeds 1234, 1235 and 2001: the
# tens reader reads blurred suits worse, so shaken frames and its other names are left alone)
TENS_ASK = 0.8
VIEW_PADS = (1.15, CROP_PAD, 1.5)  # each index is read from three crops (side = pad x the box's longer side) ...
# ... each at four quarter turns: indices lie at every angle on a table, so a turned crop is as much
# a view the classifier learnt as the crop itself, and a misreading that hangs on one angle is outvoted
VIEW_TURNS = (0, 1, 2, 3)
ALTERNATIVE_MIN = 0.02  # next readings at least this likely are kept beside the best one ...
ALTERNATIVES = 3  # ... this many at most
# a reading this sure in a shaken frame is not read again in its sharpened copy (chosen on the tables of
# seeds 1234, 5000 and 6000, with the real photos: a webcam's wood-grain table taken for shaken halved
# a sure KD's reading)
SURE_ALONE = 0.9
# A discard pile's cards lie a few mm apart, so the index of the card beneath peeks out right past the
# top card's own and the detector may frame the two as one long box, which no card reads surely (an 8C
# over a 9H read 2C 0.33, petras film 1002). A box read under STACKED_SURE and this much longer than
# the frame's surely read indices of its breadth is read again at each end, an index long; an end read
# STACKED_SURE or surer is that index.
STACKED_LENGTH = 1.35
STACKED_SURE = 0.9
STACKED_BREADTH = 1.3  # indices "of its breadth": the shorter sides within this ratio
STACKED_PAD = 1.1  # an end is this many of those indices' median length long


def index_views(image_bgr: np.ndarray, box: Box, size: int = CROP_SIZE) -> list[np.ndarray]:
    """The crops the classifier reads for one box: framed VIEW_PADS ways, each turned VIEW_TURNS ways."""
    crops = [index_crop(image_bgr, box, size=size, pad=pad) for pad in VIEW_PADS]
    return [np.ascontiguousarray(np.rot90(crop, turns)) for crop in crops for turns in VIEW_TURNS]


def model_folder(model: Path | str) -> Path:
    """The folder of the models, also when given the detector's own file or ncnn folder."""
    path = Path(model)
    return path.parent if path.suffix in (".pt", ".onnx") or (path / "model.ncnn.param").exists() else path


def has_index_model(model: Path | str, backend: str, stem: str = STEM) -> bool:
    """Whether the model folder holds an index classifier (or, by `stem`, the tens reader) for this backend."""
    return (model_folder(model) / model_file(backend, stem)).exists()


class IndexClassifier:
    """Card names for corner boxes, through one backend."""

    def __init__(
        self, model_dir: Path | str, backend: str = "onnx", threads: int | None = None, stem: str = STEM
    ) -> None:
        folder = model_folder(model_dir)
        self.backend: Backend = load_backend(folder, backend, threads, stem=stem, known=INDEX_CLASSES)
        self.size = self.backend.input_size[0]
        self.tens: IndexClassifier | None = None  # the tens reader, when given one (`with_tens_reader`)

    def with_tens_reader(self, model_dir: Path | str, backend: str = "onnx", threads: int | None = None) -> None:
        """Ask the tens reader of the model folder where this classifier is unsure (see TENS_ASK)."""
        tens = IndexClassifier(model_dir, backend, threads, stem=TENS_STEM)
        if tens.names != self.names:
            raise ModelError(backend, tens.backend.path, "the tens reader names other classes than the classifier")
        self.tens = tens

    @property
    def names(self) -> tuple[str, ...]:
        return self.backend.names

    def probabilities(self, crop_bgr: np.ndarray) -> np.ndarray:
        """Class probabilities (nc,) for one crop of the input size."""
        out = self.backend.forward(to_tensor(crop_bgr)).reshape(-1)
        if out.shape[0] != len(self.names):
            raise ValueError(f"classifier output has {out.shape[0]} values for {len(self.names)} classes")
        return out

    def classify(self, image_bgr: np.ndarray, boxes: Sequence[Box]) -> list[tuple[str, float]]:
        """(card or "none", probability) for each box of the image: the mean over crops framed a little
        tighter and looser and turned by quarter turns (detector boxes are never exact; one view's
        misreading is outvoted)."""
        return [(name, conf) for name, conf, _ in self.read(image_bgr, boxes)]

    def read(
        self,
        image_bgr: np.ndarray,
        boxes: Sequence[Box],
        sharpened: np.ndarray | None = None,
        jokers: JokerMarks | None = None,
    ) -> list[tuple[str, float, Readings]]:
        """As `classify`, with each box's next card readings (ALTERNATIVE_MIN or likelier). `sharpened`:
        the same frame sharpened against camera shake (shake.py). An index the frame alone reads under
        SURE_ALONE is read in it too, its views counting as much as the frame's own (a streak guessed
        wrong then blurs a reading rather than replacing it, and a sure reading is left as it is).
        `jokers`: the deck's own joker marks (jokers.py), which say whether a box is a joker. With a tens
        reader, an unsure reading in a frame not sharpened is averaged with the tens reader's where the
        mean names a ten (a fanned "10" showing only its "1", which this classifier takes for none)."""
        out = []
        for box in boxes:
            p, f = self.framed_reading(self, image_bgr, box, sharpened, jokers is not None)
            if self.tens is not None and self.asks_tens(p, sharpened):
                q, _ = self.framed_reading(self.tens, image_bgr, box, sharpened, False)
                p = self.kept_with_tens(p, q)
            out.append(self.named(p, f, jokers))
        return out

    @staticmethod
    def framed_reading(
        reader: IndexClassifier, image_bgr: np.ndarray, box: Box, sharpened: np.ndarray | None, features: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """`reader`'s mean reading of a box in the frame, averaged with its sharpened copy's under SURE_ALONE."""
        size = reader.size or CROP_SIZE
        p, f = reader.mean_reading(image_bgr, box, size, features=features)
        if sharpened is not None and p.max() < SURE_ALONE:
            p2, f2 = reader.mean_reading(sharpened, box, size, features=features)
            p, f = (p + p2) / 2, (f + f2) / 2
        return p, f

    def asks_tens(self, p: np.ndarray, sharpened: np.ndarray | None) -> bool:
        """Whether the tens reader reads a box this classifier reads as `p`: unsure, the frame not shaken."""
        return sharpened is None and p.max() < TENS_ASK

    def kept_with_tens(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """The reading kept of this classifier's `p` and the tens reader's `q`: their mean where it names a ten."""
        both = (p + q) / 2
        return both if self.names[int(np.argmax(both))] in TENS else p

    def named(self, p: np.ndarray, f: np.ndarray, jokers: JokerMarks | None = None) -> tuple[str, float, Readings]:
        """The best name of a box's mean reading `p` (its features `f` told to the deck's `jokers`), its
        probability, and the next readings (ALTERNATIVE_MIN or likelier, none left out)."""
        if jokers is not None and (verdict := jokers.verdict(f)) is not None:
            p = p.copy()
            joker = self.names.index("JK")
            p[joker] = max(p[joker], jokers.similarity(f)) if verdict else 0.0
        order = np.argsort(-p, kind="stable")
        k = int(order[0])
        others = tuple(
            (self.names[int(j)], float(p[j]))
            for j in order[1:]
            if self.names[int(j)] != NONE and p[j] >= ALTERNATIVE_MIN
        )
        return self.names[k], float(p[k]), others[:ALTERNATIVES]

    def mean_reading(
        self, image_bgr: np.ndarray, box: Box, size: int, features: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """The class probabilities of one box, the mean over its views (`index_views`), and (with
        `features`) the mean of the features the classifier's last layer reads from them (else empty)."""
        views = index_views(image_bgr, box, size)
        if not features:
            return np.mean([self.probabilities(view) for view in views], axis=0), np.zeros(0, np.float32)
        runs = [self.backend.forward_features(to_tensor(view)) for view in views]
        return np.mean([out.reshape(-1) for out, _ in runs], axis=0), np.mean([f for _, f in runs], axis=0)

    def joker_marks(self, image_bgr: np.ndarray, boxes: Sequence[Box]) -> list[tuple[Box, np.ndarray]]:
        """The marks among `boxes` of a frame showing only the deck's jokers, with their features."""
        size = self.size or CROP_SIZE
        reads = [self.mean_reading(image_bgr, box, size, features=True) for box in boxes]
        readings = [(self.names[int(np.argmax(p))], float(p.max())) for p, _ in reads]
        return [(boxes[i], reads[i][1]) for i in marks_in(readings)]

    def name_corners(
        self,
        image_bgr: np.ndarray,
        corners: Sequence[Corner],
        min_confidence: float = MIN_CONFIDENCE,
        sharpened: np.ndarray | None = None,
        jokers: JokerMarks | None = None,
    ) -> list[Corner]:
        """The corners renamed by the classifier (read in `sharpened` too, and told the deck's jokers:
        see `read`); false alarms, readings under `min_confidence` and boxes on part of an index already
        read dropped."""
        boxes = [c.box for c in corners]
        named = self.read(image_bgr, boxes, sharpened, jokers)
        boxes, named = self.read_stacked(image_bgr, boxes, named, sharpened, jokers)
        read = [
            Corner(name, conf, box, others)
            for box, (name, conf, others) in zip(boxes, named)
            if name != NONE and conf >= min_confidence
        ]
        return drop_nested(read)

    def read_stacked(
        self,
        image_bgr: np.ndarray,
        boxes: Sequence[Box],
        named: Sequence[tuple[str, float, Readings]],
        sharpened: np.ndarray | None = None,
        jokers: JokerMarks | None = None,
    ) -> tuple[list[Box], list[tuple[str, float, Readings]]]:
        """The boxes and their readings, a box that may frame two stacked indices (see STACKED_LENGTH)
        replaced by the end of it that reads surely."""
        surely = [(box, name) for box, (name, conf, _) in zip(boxes, named) if conf >= STACKED_SURE and name != NONE]
        read_surely = [box for box, _ in surely]
        sure = [box for box, name in surely if name != "JK"]  # a joker's word is no index's length
        boxes, named = list(boxes), list(named)
        for i, (box, (_, conf, _)) in enumerate(zip(boxes, named)):
            if conf >= STACKED_SURE:
                continue
            # an end lying on an index another box already reads surely is that box's index, framed looser
            ends = [
                end
                for end in stacked_ends(box, sure)
                if all(inside_share(end, other) < NESTED_SHARE for other in read_surely)
            ]
            if not ends:
                continue
            reads = self.read(image_bgr, ends, sharpened, jokers)
            best = max(range(len(ends)), key=lambda k: reads[k][1] if reads[k][0] != NONE else 0.0)
            if reads[best][0] != NONE and reads[best][1] >= STACKED_SURE:
                boxes[i], named[i] = ends[best], reads[best]
        return boxes, named


def stacked_ends(box: Box, sure: Sequence[Box]) -> list[Box]:
    """The two ends of `box`, each as long as the surely read indices `sure` of its breadth, where it
    is STACKED_LENGTH times longer than they are (else none)."""
    w, h = box[2] - box[0], box[3] - box[1]
    short, long = min(w, h), max(w, h)
    lengths = [
        max(b[2] - b[0], b[3] - b[1])
        for b in sure
        if short / STACKED_BREADTH <= min(b[2] - b[0], b[3] - b[1]) <= short * STACKED_BREADTH
    ]
    if len(lengths) < 2:
        return []
    length = float(np.median(lengths))
    if long < STACKED_LENGTH * length:
        return []
    end = min(long, STACKED_PAD * length)
    x1, y1, x2, y2 = box
    if h >= w:
        return [(x1, y1, x2, y1 + end), (x1, y2 - end, x2, y2)]
    return [(x1, y1, x1 + end, y2), (x2 - end, y1, x2, y2)]


NESTED_SHARE = 0.6  # a box lying this much inside another is part of the same index
# The detector may frame a joker's mark whole and, besides, two overlapping pieces of it, each read JK:
# the pieces, not nested in each other, would be two jokers. Two or more boxes of one face that lie
# inside a bigger box read surely as that face, and overlap one another by PIECES_OVERLAP or more of
# the smaller (two cards' visible indices hardly do), are its pieces: the whole stands for them.
PIECES_OVERLAP = 0.1
WHOLE_SURE = 0.9


def pieces_of_wholes(corners: Sequence[Corner]) -> list[Corner]:
    """The corners that are pieces of a whole index also framed (see PIECES_OVERLAP)."""
    pieces: list[Corner] = []
    for whole in corners:
        if whole.confidence < WHOLE_SURE:
            continue
        inside = [
            c
            for c in corners
            if c is not whole
            and c.card == whole.card
            and box_area(c.box) < box_area(whole.box)
            and inside_share(c.box, whole.box) >= NESTED_SHARE
        ]
        if any(PIECES_OVERLAP <= inside_share(a.box, b.box) < NESTED_SHARE for a, b in combinations(inside, 2)):
            pieces += inside
    return pieces


def drop_nested(corners: Sequence[Corner]) -> list[Corner]:
    """Keep the best-read of corners that lie inside one another (the detector may frame the word
    JOKER and its J apart, or an index and its rank), and the whole of an index framed in pieces too;
    the NMS overlap test misses a box inside a box."""
    pieces = pieces_of_wholes(corners)
    kept: list[Corner] = []
    for c in sorted(corners, key=lambda c: -c.confidence):
        if not any(c is p for p in pieces) and all(inside_share(c.box, k.box) < NESTED_SHARE for k in kept):
            kept.append(c)
    return kept
