"""The tens reader: a second classifier asked where the first is unsure in a steady frame, whose mean
reading is kept only when it names a ten (a fanned "10" showing only its "1")."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mayi_table.vision.classify import TENS_ASK, TENS_STEM, IndexClassifier, has_index_model
from mayi_table.vision.detect import ModelError
from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
from mayi_table.vision.render.scene import render_spread

BOX = (10.0, 10.0, 30.0, 40.0)


def need_models() -> None:
    if not has_index_model(MODELS_DIR, "onnx", TENS_STEM):
        pytest.skip("no tens reader committed under vision_models/ yet")


class Said:
    """A classifier's mean reading of every box, as given, with the boxes it was asked about."""

    def __init__(self, names: tuple[str, ...], said: dict[str, float], size: int = 64) -> None:
        self.names, self.size, self.asked = names, size, 0
        self.p = np.zeros(len(names), np.float32)
        for name, p in said.items():
            self.p[names.index(name)] = p

    def mean_reading(self, image: Any, box: Any, size: int, features: bool = False) -> tuple[np.ndarray, np.ndarray]:
        self.asked += 1
        return self.p, np.zeros(0, np.float32)


def reader_with(first: dict[str, float], tens: dict[str, float]) -> tuple[IndexClassifier, Said]:
    reader = IndexClassifier(MODELS_DIR, "onnx")
    own = Said(reader.names, first)
    reader.mean_reading = own.mean_reading  # type: ignore[method-assign]
    reader.tens = Said(reader.names, tens)  # type: ignore[assignment]
    return reader, reader.tens  # type: ignore[return-value]


def test_an_unsure_reading_becomes_the_ten_the_tens_reader_sees() -> None:
    need_models()
    frame = np.zeros((50, 50, 3), np.uint8)
    reader, tens = reader_with({"none": 0.6, "AH": 0.3}, {"10H": 0.9, "none": 0.1})
    ((name, p, others),) = reader.read(frame, [BOX])
    assert tens.asked == 1 and name == "10H" and p == pytest.approx(0.45)
    assert ("AH", pytest.approx(0.15)) in others
    # the mean names no ten: the first classifier's reading stands
    reader, tens = reader_with({"none": 0.6, "AH": 0.3}, {"5H": 0.9})
    assert reader.read(frame, [BOX])[0][:2] == ("none", pytest.approx(0.6)) and tens.asked == 1


def test_the_tens_reader_is_not_asked_about_sure_readings_or_shaken_frames() -> None:
    need_models()
    frame = np.zeros((50, 50, 3), np.uint8)
    reader, tens = reader_with({"9H": TENS_ASK}, {"10H": 1.0})
    assert reader.read(frame, [BOX])[0][0] == "9H" and tens.asked == 0
    # a frame read in a sharpened copy too (found shaken): the tens reader reads blurred suits worse
    reader, tens = reader_with({"none": 0.6}, {"10H": 1.0})
    assert reader.read(frame, [BOX], sharpened=frame)[0][0] == "none" and tens.asked == 0


def test_the_tens_reader_finds_a_fanned_ten_the_classifier_misses() -> None:
    """A held-out hand spread (proc30, its wide bold "10"s fanned): the classifier alone misses a 10S
    that shows only its "1"; with the tens reader the hand has it, and nothing else changes."""
    need_models()
    from mayi_table.vision.recognize import Recognizer

    scene, truth = render_spread(33, HELD_OUT_DESIGNS)
    with_tens = Recognizer(MODELS_DIR, "onnx")
    alone = Recognizer(MODELS_DIR, "onnx", tens_reader=False)
    assert with_tens.classifier is not None and with_tens.classifier.tens is not None
    assert alone.classifier is not None and alone.classifier.tens is None
    seen_alone = Counter(c.card for c in alone.recognize(scene.image))
    seen = Counter(c.card for c in with_tens.recognize(scene.image))
    assert "10S" in truth and "10S" not in seen_alone
    assert seen - seen_alone == Counter(["10S"]) and not seen_alone - seen
    assert not seen - Counter(truth)


def test_a_tens_reader_naming_other_classes_is_refused(tmp_path: Path) -> None:
    """A tens reader whose classes are not the classifier's, in their order, cannot be averaged with it:
    the recogniser and `mayi-table recognize` say which file and why, and read without it when told to."""
    need_models()
    import onnx

    from .test_recognize import run_cli

    for name in ("corners.onnx", "index.onnx"):
        (tmp_path / name).symlink_to(MODELS_DIR / name)
    model = onnx.load(str(MODELS_DIR / "index_tens.onnx"))
    meta = next(p for p in model.metadata_props if p.key == "names")
    names = ast.literal_eval(meta.value)
    names[0], names[1] = names[1], names[0]
    meta.value = repr(names)
    onnx.save(model, str(tmp_path / "index_tens.onnx"))
    from mayi_table.vision.recognize import Recognizer

    with pytest.raises(ModelError, match="the tens reader names other classes than the classifier"):
        Recognizer(tmp_path, "onnx")
    assert Recognizer(tmp_path, "onnx", tens_reader=False).classifier is not None
    image = tmp_path / "hand.png"
    import cv2

    assert cv2.imwrite(str(image), render_spread(33, HELD_OUT_DESIGNS)[0].image)
    proc = run_cli(str(image), "--model", str(tmp_path))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "index_tens.onnx" in proc.stderr and "names other classes" in proc.stderr
    proc = run_cli(str(image), "--model", str(tmp_path), "--no-tens-reader")
    assert proc.returncode == 0, proc.stderr
