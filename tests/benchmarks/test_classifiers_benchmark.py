"""The classifier comparison (`benchmarks/classifiers.py`): one detection per frame, shared by every
classifier, and the same figures for the same classifier."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mayi_table.vision.classes import Corner
from mayi_table.vision.offline import MODELS_DIR

from .scripts import BENCHMARKS, load_benchmark


class CountingDetector:
    def __init__(self) -> None:
        self.calls = 0

    def detect(self, image: np.ndarray) -> list[Corner]:
        self.calls += 1
        return [Corner("QH", 0.9, (0, 0, 10, 20 + self.calls))]


def test_each_frame_is_detected_once_for_every_classifier() -> None:
    bench = load_benchmark("classifiers")
    counting = CountingDetector()
    once = bench.DetectedOnce(counting)
    a, b = np.zeros((8, 8, 3), np.uint8), np.ones((8, 8, 3), np.uint8)
    first = once.detect(a)
    assert once.detect(a.copy()) == first and counting.calls == 1
    assert once.detect(b) != first and counting.calls == 2
    once.detect(b).clear()  # a reader may change its list; the next reader still gets the corners
    assert len(once.detect(b)) == 1 and counting.calls == 2


def test_seeds_and_counts_are_read_or_refused() -> None:
    bench = load_benchmark("classifiers")
    assert bench.seeds_and_counts("1234:30,777:5", "--tables") == [(1234, 30), (777, 5)]
    with pytest.raises(SystemExit, match="--tables '777': give SEED:COUNT"):
        bench.seeds_and_counts("777", "--tables")


def compare(*args: str) -> dict:
    """The comparison's JSON on the procedural held-out designs."""
    command = [sys.executable, str(BENCHMARKS / "classifiers.py"), *args, "--designs", "procedural", "--json"]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def test_the_same_classifier_twice_scores_the_same() -> None:
    out = compare(str(MODELS_DIR), str(MODELS_DIR), "--tables", "1234:1", "--spreads", "4243:2")
    first, second = out["tables"][0]["scores"]
    assert first == second and first["errors"] == first["fp"] + first["fn"]
    assert out["spreads"][0]["exact"][0] == out["spreads"][0]["exact"][1] <= 2
    assert out["all"][0] == out["all"][1] and out["all"][0]["spreads"] == 2


def test_a_folder_without_a_classifier_is_refused(tmp_path) -> None:
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / "classifiers.py"), str(tmp_path), "--tables", "1:1"],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0 and "holds no index classifier" in run.stderr and "Traceback" not in run.stderr


def test_an_unknown_backend_is_refused() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / "classifiers.py"), str(MODELS_DIR), "--backend", "tflite"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "invalid choice: 'tflite'" in run.stderr and "Traceback" not in run.stderr


def test_jokers_shown_and_not_are_read_side_by_side() -> None:
    out = compare(str(MODELS_DIR), "--tables", "1234:0", "--spreads", "4243:2", "--jokers", "both")
    assert out["classifiers"] == [str(MODELS_DIR), f"{MODELS_DIR} (jokers)"]
    assert len(out["spreads"][0]["exact"]) == 2


def test_two_detectors_boxes_are_read_by_every_classifier(tmp_path) -> None:
    """Given two detector folders (here the same detector twice), each classifier reads each one's
    boxes, labelled by the detector: the same detector scores the same."""
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "corners.onnx").symlink_to(MODELS_DIR / "corners.onnx")
    (twin / "model.yaml").symlink_to(MODELS_DIR / "model.yaml")
    out = compare(
        str(MODELS_DIR), "--detector", str(MODELS_DIR), str(twin), "--tables", "1234:1", "--spreads", "4243:2"
    )
    assert out["classifiers"] == [f"{MODELS_DIR} boxes, {MODELS_DIR}", f"{twin} boxes, {MODELS_DIR}"]
    assert out["tables"][0]["scores"][0] == out["tables"][0]["scores"][1]
    assert out["all"][0] == out["all"][1]


def test_a_folder_without_a_detector_is_refused(tmp_path) -> None:
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / "classifiers.py"), str(MODELS_DIR), "--detector", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0 and str(tmp_path) in run.stderr and "Traceback" not in run.stderr
