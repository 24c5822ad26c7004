"""The tens reader's rules compared (`benchmarks/tens_rules.py`): its committed rule reads as the
recogniser does, and the comparison runs and refuses a folder without a tens reader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mayi_table.vision.classes import MIN_CONFIDENCE
from mayi_table.vision.classify import TENS_ASK, TENS_STEM, IndexClassifier, has_index_model
from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
from mayi_table.vision.render.scene import render_spread

from .scripts import BENCHMARKS, load_benchmark


def need_tens_reader() -> None:
    if not has_index_model(MODELS_DIR, "onnx", TENS_STEM):
        pytest.skip("no tens reader committed under vision_models/ yet")


def test_the_committed_rule_reads_as_the_recogniser_does() -> None:
    need_tens_reader()
    bench = load_benchmark("tens_rules")
    (committed,) = [r for r in bench.RULES if r.name.endswith("(committed)")]
    assert committed.ask_below == TENS_ASK and committed.steady_only and committed.keep == "mean ten"
    scene, _ = render_spread(33, HELD_OUT_DESIGNS)  # a hand whose fanned 10S only the tens reader reads
    from mayi_table.vision.recognize import Recognizer

    boxes = [c.box for c in Recognizer(MODELS_DIR, "onnx").detector.detect(scene.image)]
    library = IndexClassifier(MODELS_DIR, "onnx")
    library.with_tens_reader(MODELS_DIR, "onnx")
    first = bench.Readings(IndexClassifier(MODELS_DIR, "onnx"))
    second = bench.Readings(IndexClassifier(MODELS_DIR, "onnx", stem=TENS_STEM))
    asked = [0, 0]
    ruled = bench.RuledClassifier(first, second, committed, asked)
    got, want = ruled.read(scene.image, boxes), library.read(scene.image, boxes)
    assert [r[0] for r in got] == [r[0] for r in want]
    assert [r[1] for r in got] == pytest.approx([r[1] for r in want], abs=1e-5)
    assert asked[0] == len(boxes) and 0 < asked[1] < len(boxes)
    never = bench.RuledClassifier(first, second, bench.RULES[0], [0, 0])

    def sure_tens(readings: list) -> int:
        return sum(name == "10S" and p >= MIN_CONFIDENCE for name, p, _ in readings)

    assert sure_tens(never.read(scene.image, boxes)) < sure_tens(got)


def test_the_comparison_prints_every_rule_and_refuses_a_folder_without_a_tens_reader(tmp_path: Path) -> None:
    need_tens_reader()
    script = str(BENCHMARKS / "tens_rules.py")
    run = subprocess.run(
        [sys.executable, script, "--tables", "1234:0", "--spreads", "2001:1", "--jokers", "off", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(run.stdout)["rules"]
    bench = load_benchmark("tens_rules")
    assert [r["rule"] for r in rows] == [r.name for r in bench.RULES]
    assert rows[0]["asked_share"] == 0 and rows[1]["asked_share"] == 1
    assert all(r["spreads"]["2001"] in (0, 1) for r in rows)
    run = subprocess.run([sys.executable, script, "--model", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode != 0 and "holds no tens reader" in run.stderr and "Traceback" not in run.stderr
