"""Photos and camera frames -> physical cards: load (EXIF-upright), detect corner indices, pair them.

`Recognizer(model_dir, backend)` wraps a `Detector` (see detect.py for the backends and the model
folder) and `pair_corners` (see pairing.py). Boxes are in pixels of the image as given, after its EXIF
orientation is applied, i.e. as an image viewer shows it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .classes import MIN_CONFIDENCE, Box, Corner, PhysicalCard
from .classify import TENS_STEM, IndexClassifier, has_index_model
from .detect import Detector, as_bgr
from .jokers import JokerMarks, JokerMarksError, classifier_id
from .pairing import pair_corners
from .shake import find_shake, sharpen

# with a classifier to reject false alarms, the detector may propose faint indices too (chosen on seed 1234)
TWO_STAGE_DETECTOR_CONF = 0.03


class ImageLoadError(ValueError):
    """An image file that cannot be read."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"cannot read image {path}: {reason}")


def load_image(path: Path | str) -> np.ndarray:
    """Read a JPEG, PNG (or anything Pillow reads) as an upright BGR uint8 array, EXIF orientation applied."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    path = Path(path)
    if not path.exists():
        raise ImageLoadError(path, "no such file")
    if path.is_dir():
        raise ImageLoadError(path, "is a folder")
    try:
        with Image.open(path) as im:
            im.load()
            upright = ImageOps.exif_transpose(im)
            rgb = np.asarray(upright.convert("RGB"))
    except (UnidentifiedImageError, ImportError):
        # ImportError: Ultralytics, once imported, retries unknown files through an optional HEIF plugin
        raise ImageLoadError(path, "not an image Pillow can read") from None
    except Image.DecompressionBombError as e:
        raise ImageLoadError(path, f"too large ({e})") from None
    except (OSError, ValueError, SyntaxError) as e:
        raise ImageLoadError(path, f"damaged or unreadable ({e})") from None
    if rgb.ndim != 3 or rgb.shape[0] == 0 or rgb.shape[1] == 0:
        raise ImageLoadError(path, "empty image")
    return np.ascontiguousarray(rgb[:, :, ::-1])


class Recognizer:
    """Cards in BGR images: corner detection through one backend, naming by the index classifier
    (when the model folder has one), then pairing into physical cards."""

    def __init__(
        self,
        model_dir: Path | str,
        backend: str = "onnx",
        two_stage: bool | None = None,
        min_confidence: float = MIN_CONFIDENCE,
        four_index: bool | None = None,
        deshake: bool = True,
        jokers: Path | str | JokerMarks | None = None,
        tens_reader: bool = True,
        **detector_options: Any,
    ) -> None:
        """`detector_options` go to `Detector` (conf, iou, overlap, scale, threads). `two_stage`: use the
        index classifier (default: when the model folder has one for this backend). `min_confidence`:
        the classifier's readings below it are no card. `four_index`: whether the deck prints its index
        in all four corners (None: as each image shows it; see `pair_corners`). `deshake`: read the
        indices of a frame blurred by a shaken camera in a sharpened copy too (see shake.py). `jokers`:
        the deck's own joker marks, or the file `learn-jokers` wrote (see jokers.py; JokerMarksError
        when it cannot be used). `tens_reader`: ask the folder's tens reader, when it has one, where the
        classifier is unsure (see classify.TENS_ASK)."""
        self.min_confidence = min_confidence
        self.four_index = four_index
        self.deshake = deshake
        if two_stage is None:
            two_stage = has_index_model(model_dir, backend)
        threads = detector_options.get("threads")
        self.classifier = IndexClassifier(model_dir, backend, threads) if two_stage else None
        if self.classifier and tens_reader and has_index_model(model_dir, backend, TENS_STEM):
            self.classifier.with_tens_reader(model_dir, backend, threads)
        if two_stage:
            if detector_options.get("conf") is None:  # `conf=None` (a command's unset option) too
                detector_options["conf"] = TWO_STAGE_DETECTOR_CONF
            detector_options["agnostic"] = True
        self.detector = Detector(model_dir, backend, **detector_options)
        self.jokers: JokerMarks | None = None
        if jokers is not None:
            if not self.classifier:
                raise JokerMarksError(jokers if not isinstance(jokers, JokerMarks) else "given", "no card classifier")
            self.jokers = jokers if isinstance(jokers, JokerMarks) else JokerMarks.load(jokers, self.classifier_id)

    @cached_property
    def classifier_id(self) -> str:
        """The fingerprint of the classifier's weights (its checkpoint, whence every backend's file)."""
        if not self.classifier:
            return ""
        path = self.classifier.backend.path
        checkpoint = path.parent / "index.pt"
        own = path if path.is_file() else path / "model.ncnn.bin"
        return classifier_id(checkpoint if checkpoint.is_file() else own)

    def joker_marks(self, image_bgr: np.ndarray) -> list[tuple[Box, np.ndarray]]:
        """The marks (box, features) of a frame that shows only the deck's jokers, face up."""
        if not self.classifier:
            raise ValueError("learning jokers needs the card classifier")
        image = as_bgr(image_bgr)
        return self.classifier.joker_marks(image, [c.box for c in self.detector.detect(image)])

    def learn_jokers(self, images: list[np.ndarray]) -> JokerMarks:
        """The joker marks of frames that show only the deck's jokers (ValueError when none is found)."""
        marks = [features for image in images for _, features in self.joker_marks(image)]
        if not marks:
            raise ValueError("no joker's mark found: lay the jokers face up, alone, where the camera sees them")
        return JokerMarks.of(marks, self.classifier_id)

    def corners(self, image_bgr: np.ndarray) -> list[Corner]:
        """The named corner indices of an image, best first."""
        image = as_bgr(image_bgr)
        corners = self.detector.detect(image)
        if not self.classifier:
            return corners
        shake = find_shake(image) if self.deshake and corners else None
        sharpened = sharpen(image, shake) if shake else None
        return self.classifier.name_corners(image, corners, self.min_confidence, sharpened, self.jokers)

    def recognize(self, image_bgr: np.ndarray) -> list[PhysicalCard]:
        """The physical cards in an image, in reading order."""
        image = as_bgr(image_bgr)
        return pair_corners(self.corners(image), (image.shape[1], image.shape[0]), self.four_index)

    def recognize_file(self, path: Path | str) -> list[PhysicalCard]:
        """Load an image file (EXIF-upright) and recognise it; raises ImageLoadError for unreadable files."""
        return self.recognize(load_image(path))


def card_record(card: PhysicalCard, digits: int = 1) -> dict[str, Any]:
    """A card as the JSON output writes it."""
    out: dict[str, Any] = {
        "card": card.card,
        "confidence": round(card.confidence, 3),
        "box": [round(v, digits) for v in card.box],
    }
    if card.orientation is not None:
        out["orientation"] = round(card.orientation, 1)
    return out


_RED = {"H", "D"}


def annotate(image: np.ndarray, cards: list[PhysicalCard], corners: bool = True) -> np.ndarray:
    """A copy of a BGR image with each card's box and name drawn (and its corner boxes, thinly)."""
    import cv2

    out = as_bgr(image).copy()
    h, w = out.shape[:2]
    thick = max(1, round(max(h, w) / 800))
    font_scale = max(0.4, max(h, w) / 2400)
    for card in cards:
        colour = (40, 40, 220) if card.card[-1] in _RED else (220, 120, 20) if card.card == "JK" else (30, 160, 30)
        x1, y1, x2, y2 = (int(round(v)) for v in card.box)
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, thick + (1 if len(card.corners) == 2 else 0))
        if corners:
            for c in card.corners:
                cx1, cy1, cx2, cy2 = (int(round(v)) for v in c.box)
                cv2.rectangle(out, (cx1, cy1), (cx2, cy2), colour, 1)
        label = f"{card.card} {card.confidence:.2f}"
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thick)
        ty = y1 - 3 if y1 - th - base - 3 >= 0 else min(h - 1, y2 + th + 3)
        cv2.rectangle(out, (x1, ty - th - 2), (x1 + tw + 2, ty + base - 1), colour, -1)
        white = (255, 255, 255)
        cv2.putText(out, label, (x1 + 1, ty - 1), cv2.FONT_HERSHEY_SIMPLEX, font_scale, white, thick, cv2.LINE_AA)
    return out
