"""The family's own jokers, shown to the device once.

Jokers are the one card whose corner mark every deck draws its own way (JOKER upright or sideways,
a star, a jester's hat, a small J); a classifier trained on other decks reads an unseen design's mark
as `none` or, worse, reads another deck's court figure as a joker. So the device is shown the deck's
jokers once, lying face up on the empty table (`mayi-table learn-jokers`): every mark the detector
finds on them is kept as the classifier's feature vector (what its last layer reads, the mean over
the same twelve views that name an index). On the table afterwards:

- a box whose features lie within MATCH (cosine) of a kept mark is a joker, whatever the classifier
  named it;
- a box read as a joker whose features lie further than UNLIKE from every kept mark is not one: its
  next reading stands (or none).

The marks are tied to the classifier that read them: a file learnt with another one is refused.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

# Read off the held-out spreads of seeds 4243, 778 and 1235 in the designs whose jokers went wrong
# (jokers learnt from one rendered frame of each design; see the model card): their fully seen jokers
# lie at 0.79-0.99 from the kept marks, other indices and court figures at up to 0.72, the two court
# figures read as jokers at 0.72 and 0.73 (one tigullio queen at 0.86).
MATCH = 0.88
UNLIKE = 0.75
FORMAT = 1


class JokerMarksError(ValueError):
    """A joker marks file that cannot be used; the message says which file and why."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"cannot use the jokers file {path}: {reason}")


def unit(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (cosine similarity is then a dot product)."""
    rows = np.atleast_2d(np.asarray(rows, np.float32))
    return np.asarray(rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12))


def classifier_id(model_file: Path) -> str:
    """A short fingerprint of the classifier's weights file, to tell whose features a file holds."""
    digest = hashlib.sha256()
    with open(model_file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class JokerMarks:
    """The feature vectors of a deck's joker marks, as one classifier reads them."""

    features: np.ndarray  # (marks, dims), unit rows
    classifier: str = ""  # classifier_id of the model that read them ("" = not checked)

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", unit(self.features))

    @classmethod
    def of(cls, marks: Iterable[np.ndarray], classifier: str = "") -> JokerMarks:
        rows = [np.asarray(m, np.float32).reshape(-1) for m in marks]
        if not rows:
            raise ValueError("no joker's mark to learn")
        return cls(np.stack(rows), classifier)

    def similarity(self, features: np.ndarray) -> float:
        """The cosine between `features` and the nearest kept mark."""
        return float(np.max(self.features @ unit(features)[0]))

    def verdict(self, features: np.ndarray) -> bool | None:
        """True: a joker's mark; False: no joker's mark; None: the classifier's reading stands."""
        s = self.similarity(features)
        return True if s >= MATCH else False if s < UNLIKE else None

    def save(self, path: Path | str) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:  # np.savez adds .npz to a name without it; the file keeps the name given
            np.savez(f, format=FORMAT, features=self.features, classifier=self.classifier)

    @classmethod
    def load(cls, path: Path | str, classifier: str = "") -> JokerMarks:
        """Read a file `save` wrote; JokerMarksError when it is missing, unreadable or another
        classifier's (when `classifier` is given)."""
        path = Path(path)
        if not path.is_file():
            raise JokerMarksError(path, "no such file (mayi-table learn-jokers writes it)")
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["format"])
                features = np.asarray(data["features"], np.float32)
                kept_by = str(data["classifier"])
        except Exception as e:  # noqa: BLE001 - any unreadable file is reported the same way
            raise JokerMarksError(path, f"not a jokers file ({type(e).__name__}: {e})") from None
        if version != FORMAT:
            raise JokerMarksError(path, f"format {version}, this version reads {FORMAT}")
        if features.ndim != 2 or not len(features) or not np.isfinite(features).all():
            raise JokerMarksError(path, "it holds no usable marks")
        if classifier and kept_by and kept_by != classifier:
            raise JokerMarksError(path, "learnt with another card classifier: show the jokers again (learn-jokers)")
        return cls(features, kept_by)


def marks_in(readings: Sequence[tuple[str, float]], sure: float = 0.9) -> list[int]:
    """Which boxes of a frame showing only jokers are their marks: not the classifier's `none` (the
    table's grain, a shadow), and not a sure other card (a stray card left on the table)."""
    return [i for i, (name, conf) in enumerate(readings) if name != "none" and not (name != "JK" and conf >= sure)]
