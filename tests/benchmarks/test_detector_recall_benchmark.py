"""The detector comparison (`benchmarks/detector_recall.py`): indices sorted by how much of them is
uncovered, the same detector twice boxing the same, a folder without a detector refused."""

from __future__ import annotations

import json
import subprocess
import sys

from mayi_table.vision.offline import MODELS_DIR

from .scripts import BENCHMARKS, load_benchmark


def test_indices_are_sorted_by_how_much_of_them_is_uncovered() -> None:
    bench = load_benchmark("detector_recall")
    assert bench.index_kind("7S", 0.95, 1.0) == "90% or more"
    assert bench.index_kind("7S", 0.8, 1.0) == "70-90%"
    assert bench.index_kind("7S", 0.6, 1.0) == "50-70%"
    assert bench.index_kind("10S", 0.4, 0.97) == "a 10's 1 only"  # index_crops.index_label names it
    assert bench.index_kind("10S", 0.4, 0.5) is None and bench.index_kind("7S", 0.4, 1.0) is None


def test_the_same_detector_twice_boxes_the_same(tmp_path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "corners.onnx").symlink_to(MODELS_DIR / "corners.onnx")
    (twin / "model.yaml").symlink_to(MODELS_DIR / "model.yaml")
    command = [sys.executable, str(BENCHMARKS / "detector_recall.py"), str(MODELS_DIR), str(twin)]
    command += ["--spreads", "4243:2", "--tables", "1234:1", "--designs", "procedural", "--json"]
    out = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert [(b["kind"], b["seed"]) for b in out["scenes"]] == [("spreads", 4243), ("tables", 1234)]
    for block in out["scenes"]:
        first, second = block["scores"]
        assert first == second and first["cards"] > 0
        assert all(first["boxed"][k] <= first["indices"][k] for k in first["indices"])
        assert first["indices"]["90% or more"] > 0 and first["cards_unboxed"] <= first["cards"]


def test_a_folder_without_a_detector_is_refused(tmp_path) -> None:
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / "detector_recall.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode != 0 and str(tmp_path) in run.stderr and "Traceback" not in run.stderr
