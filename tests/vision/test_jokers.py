"""The deck's own jokers, shown once: the marks file, the verdicts, the backends' features, the
recogniser told a deck's jokers, and `mayi-table learn-jokers`."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from mayi_table.vision import jokers as J
from mayi_table.vision.jokers import JokerMarks, JokerMarksError
from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
from mayi_table.vision.render.scene import Scene, draw_scene, render_jokers, spread_layout

DEFAULT = Path(__file__).resolve().parents[2] / "firmware_config" / "mayi-table.yaml"


def need_models() -> None:
    if not (MODELS_DIR / "index.onnx").exists():
        pytest.skip("no models committed under vision_models/ yet")


def at_cosine(c: float, dims: int = 8) -> np.ndarray:
    """A vector at cosine `c` from the first axis."""
    v = np.zeros(dims, np.float32)
    v[0], v[1] = c, np.sqrt(1 - c * c)
    return v


# ------------------------------------------------------------------ the marks file


def test_marks_are_kept_in_a_file_and_read_back(tmp_path: Path) -> None:
    marks = JokerMarks.of([np.arange(1, 9, dtype=np.float32), at_cosine(0.3) * 5], classifier="abc")
    assert np.allclose(np.linalg.norm(marks.features, axis=1), 1)
    path = tmp_path / "deck" / "jokers.npz"
    marks.save(path)
    back = JokerMarks.load(path, classifier="abc")
    assert np.array_equal(back.features, marks.features) and back.classifier == "abc"
    assert JokerMarks.load(path).classifier == "abc"  # not checked when not asked
    no_suffix = tmp_path / "jokers.marks"
    marks.save(no_suffix)
    assert no_suffix.is_file() and JokerMarks.load(no_suffix).features.shape == (2, 8)


def test_a_bad_marks_file_is_refused_with_its_name_and_why(tmp_path: Path) -> None:
    with pytest.raises(JokerMarksError, match=r"jokers file .*missing\.npz: no such file"):
        JokerMarks.load(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_text("not numbers")
    with pytest.raises(JokerMarksError, match=r"junk\.npz: not a jokers file"):
        JokerMarks.load(junk)
    old = tmp_path / "old.npz"
    with open(old, "wb") as f:
        np.savez(f, format=99, features=np.ones((1, 4)), classifier="abc")
    with pytest.raises(JokerMarksError, match="format 99"):
        JokerMarks.load(old)
    empty = tmp_path / "empty.npz"
    with open(empty, "wb") as f:
        np.savez(f, format=J.FORMAT, features=np.zeros((0, 4)), classifier="abc")
    with pytest.raises(JokerMarksError, match="no usable marks"):
        JokerMarks.load(empty)
    other = tmp_path / "other.npz"
    JokerMarks.of([np.ones(4)], classifier="abc").save(other)
    with pytest.raises(JokerMarksError, match="another card classifier"):
        JokerMarks.load(other, classifier="def")
    with pytest.raises(ValueError, match="no joker's mark"):
        JokerMarks.of([])


def test_a_mark_near_a_kept_one_is_a_joker_and_one_far_from_all_is_not() -> None:
    """At MATCH or nearer: a joker; under UNLIKE: no joker; between: the classifier's reading stands."""
    marks = JokerMarks.of([at_cosine(1.0), -at_cosine(1.0)])
    assert marks.similarity(at_cosine(J.MATCH + 0.01) * 3) == pytest.approx(J.MATCH + 0.01, abs=1e-5)
    assert marks.verdict(at_cosine(J.MATCH + 0.01)) is True
    assert marks.verdict(-at_cosine(0.99)) is True  # the nearest mark counts
    assert marks.verdict(at_cosine((J.MATCH + J.UNLIKE) / 2)) is None
    assert marks.verdict(at_cosine(J.UNLIKE - 0.01)) is False


# ------------------------------------------------------------------ the classifier's features


def test_every_backend_reads_the_same_features() -> None:
    """Marks learnt through one backend hold for another: the features agree as the outputs do."""
    need_models()
    from mayi_table.vision.detect import ModelError, load_backend
    from mayi_table.vision.index_crops import INDEX_CLASSES

    backends = ["onnx", "ncnn"]
    try:
        import torch  # noqa: F401
        import ultralytics  # noqa: F401

        backends.append("ultralytics")
    except ImportError:
        pass
    x = np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32)
    runs = {b: load_backend(MODELS_DIR, b, stem="index", known=INDEX_CLASSES).forward_features(x) for b in backends}
    out, features = runs["onnx"]
    assert features.shape == (1280,) and out.size == 54
    for b in backends[1:]:
        assert np.allclose(runs[b][0].reshape(-1), out.reshape(-1), atol=1e-4)
        assert np.allclose(runs[b][1], features, atol=1e-3), b
    with pytest.raises(ModelError, match="gives no features"):
        load_backend(MODELS_DIR, "onnx").forward_features(np.zeros((1, 3, 320, 320), np.float32))


# ------------------------------------------------------------------ the recogniser told a deck's jokers


def hand_with_a_joker(seed: int, design_index: int) -> Scene:
    rng = random.Random(seed)
    placed = spread_layout(["9C", "JK", "KH", "4D", "QS"], (250, 190), 5, "hand", rng)
    return draw_scene(
        placed, HELD_OUT_DESIGNS[design_index], rng, size=(800, 600), table_mm=(500, 375), spoil=False, tilt_deg=0
    )


def marks_on(scene: Scene, boxes: list[tuple[float, float, float, float]], card: str) -> list[int]:
    """Which boxes have their centre on an uncovered index of `card`."""
    out = []
    for i, (x1, y1, x2, y2) in enumerate(boxes):
        centre = ((x1 + x2) / 2, (y1 + y2) / 2)
        for label in (lab for lab in scene.labels if lab.card == card):
            for quad, share in zip(label.quads, label.corner_shares):
                if share > 0.9 and cv2.pointPolygonTest(quad.astype(np.float32), centre, False) >= 0:
                    out.append(i)
    return out


@pytest.mark.parametrize("design_index", [0, 6])
def test_a_decks_jokers_are_learnt_and_told_from_its_other_cards(design_index: int) -> None:
    """Marks learnt from a frame of a held-out deck's jokers alone find its joker in a hand (its
    whole index: a box on part of it, the J of JOKER, may be left to the classifier), and none of the
    hand's other indices."""
    need_models()
    from mayi_table.vision.recognize import Recognizer

    reader = Recognizer(MODELS_DIR, "onnx")
    marks = reader.learn_jokers([render_jokers(3, HELD_OUT_DESIGNS[design_index]).image])
    assert len(marks.features) >= 2 and marks.classifier == reader.classifier_id
    scene = hand_with_a_joker(11, design_index)
    corners = reader.detector.detect(scene.image)
    boxes = [c.box for c in corners]
    assert reader.classifier is not None
    _, features = zip(*(reader.classifier.mean_reading(scene.image, b, 64, features=True) for b in boxes))
    joker = marks_on(scene, boxes, "JK")
    others = [i for card in ("9C", "KH", "4D", "QS") for i in marks_on(scene, boxes, card)]
    assert joker and len(others) >= 4
    best = max(joker, key=lambda i: marks.similarity(features[i]))
    assert marks.verdict(features[best]) is True
    assert all(marks.verdict(features[i]) is not False for i in joker)
    assert not any(marks.verdict(features[i]) for i in others)


def test_the_decks_marks_decide_what_is_a_joker() -> None:
    """Told a deck whose joker looks like this hand's KH, the recogniser reads the KH as a joker and
    the hand's own joker, unlike that mark, as none; told nothing, it reads both as printed."""
    need_models()
    from mayi_table.vision.recognize import Recognizer

    reader = Recognizer(MODELS_DIR, "onnx")
    scene = hand_with_a_joker(11, 0)
    assert sorted(c.card for c in reader.recognize(scene.image)) == ["4D", "9C", "JK", "KH", "QS"]
    assert reader.classifier is not None
    boxes = [c.box for c in reader.detector.detect(scene.image)]
    king = marks_on(scene, boxes, "KH")
    reader.jokers = JokerMarks.of(reader.classifier.mean_reading(scene.image, boxes[i], 64, True)[1] for i in king)
    assert sorted(c.card for c in reader.recognize(scene.image)) == ["4D", "9C", "JK", "QS"]


def test_a_frame_without_a_joker_teaches_nothing() -> None:
    need_models()
    from mayi_table.vision.recognize import Recognizer

    empty = draw_scene([], HELD_OUT_DESIGNS[0], random.Random(1), spoil=False)
    with pytest.raises(ValueError, match="no joker's mark found"):
        Recognizer(MODELS_DIR, "onnx").learn_jokers([empty.image])


# ------------------------------------------------------------------ the device and the commands


def config_for(tmp_path: Path, jokers: Path) -> Path:
    text = DEFAULT.read_text(encoding="utf-8").replace("/opt/mayi-table/app/vision_models", str(MODELS_DIR))
    text = text.replace("  backend: ncnn", "  backend: onnx")
    config = tmp_path / "config.yaml"
    config.write_text(text + f"reading:\n  jokers: {jokers}\n", encoding="utf-8")
    return config


def test_learn_jokers_writes_the_marks_the_device_then_reads(tmp_path: Path) -> None:
    need_models()
    from mayi_table.config import load_config
    from mayi_table.launch import load_recognizer
    from mayi_table.learn_jokers import learn_jokers_main

    target = tmp_path / "state" / "jokers.npz"
    config = config_for(tmp_path, target)
    assert load_config(config).reading.jokers == target
    frame = tmp_path / "jokers.png"
    assert cv2.imwrite(str(frame), render_jokers(5, HELD_OUT_DESIGNS[2]).image)
    said: list[str] = []
    assert learn_jokers_main(config, [frame], tmp_path / "seen.png", dry_run=True, echo=said.append) == 0
    assert not target.exists() and "dry run" in said[-1]
    assert learn_jokers_main(config, [frame], tmp_path / "seen.png", echo=said.append) == 0
    assert target.is_file() and f"wrote the deck's jokers to {target}" in said[-1]
    assert cv2.imread(str(tmp_path / "seen.png")).shape == (1080, 1920, 3)
    reader = load_recognizer(MODELS_DIR, "onnx", jokers=target).reader  # type: ignore[attr-defined]
    assert reader.jokers is not None and len(reader.jokers.features) >= 2
    assert load_recognizer(MODELS_DIR, "onnx", jokers=tmp_path / "none.npz").reader.jokers is None  # type: ignore[attr-defined]


def test_learn_jokers_errors_are_messages_and_exit_2(tmp_path: Path) -> None:
    need_models()
    from mayi_table.launch import LaunchError, load_recognizer
    from mayi_table.learn_jokers import learn_jokers_main

    config = config_for(tmp_path, tmp_path / "jokers.npz")
    said: list[str] = []
    assert learn_jokers_main(config, [tmp_path / "missing.png"], echo=said.append) == 2
    assert said[-1].startswith("error: cannot read the image") and "missing.png" in said[-1]
    empty = tmp_path / "empty.png"
    assert cv2.imwrite(str(empty), draw_scene([], HELD_OUT_DESIGNS[0], random.Random(1), spoil=False).image)
    assert learn_jokers_main(config, [empty], tmp_path / "p.png", echo=said.append) == 2
    assert said[-1].startswith(f"error: no joker's mark found in {empty}")
    assert learn_jokers_main(tmp_path / "no-config.yaml", [empty], echo=said.append) == 2
    bad = tmp_path / "bad.npz"
    bad.write_text("junk")
    with pytest.raises(LaunchError, match=r"bad\.npz: not a jokers file"):
        load_recognizer(MODELS_DIR, "onnx", jokers=bad)


def test_recognize_reads_with_the_jokers_file_or_says_why_not(tmp_path: Path) -> None:
    need_models()
    from .test_recognize import run_cli

    scene = hand_with_a_joker(11, 0)
    image = tmp_path / "hand.png"
    assert cv2.imwrite(str(image), scene.image)
    marks = tmp_path / "jokers.npz"
    from mayi_table.vision.recognize import Recognizer

    Recognizer(MODELS_DIR, "onnx").learn_jokers([render_jokers(3, HELD_OUT_DESIGNS[0]).image]).save(marks)
    proc = run_cli(str(image), "--model", str(MODELS_DIR), "--jokers", str(marks))
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split(": ")[-1].split()) == ["4D", "9C", "JK", "KH", "QS"], proc.stdout
    proc = run_cli(str(image), "--model", str(MODELS_DIR), "--jokers", str(tmp_path / "nope.npz"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "nope.npz: no such file" in proc.stderr


def test_evaluate_can_show_each_design_its_jokers(tmp_path: Path) -> None:
    need_models()
    import json
    import os
    import subprocess
    import sys

    device = Path(__file__).resolve().parents[2] / "device"
    args = ["evaluate", "--scenes", "0", "--spreads", "2", "--designs", "procedural", "--real-photos", str(tmp_path)]
    code = "from mayi_table.cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(device)}
    for extra, shown in (([], False), (["--jokers-shown"], True)):
        proc = subprocess.run(
            [sys.executable, "-c", code, *args, *extra, "--json", "--model", str(MODELS_DIR)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["jokers_shown"] is shown and out["spreads"]["spreads"] == 2


def test_an_exported_classifier_gives_its_features_as_a_second_output(tmp_path: Path) -> None:
    """`add_features_output` (run by every classifier export) names the input of the last matrix
    product an output, once, and the onnx backend reads it; a graph without one is refused."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from mayi_table.vision.train import add_features_output

    weights = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    graph = helper.make_graph(
        [
            helper.make_node("Flatten", ["x"], ["features"]),
            helper.make_node("Gemm", ["features", "w"], ["logits"], transB=1),
            helper.make_node("Softmax", ["logits"], ["p"], axis=1),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1, 1])],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor("w", TensorProto.FLOAT, [3, 4], weights.ravel().tolist())],
    )
    path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    assert add_features_output(path) == "features" and add_features_output(path) == "features"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == ["p", "features"]
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 4, 1, 1)
    p, features = session.run(None, {"x": x})
    assert np.allclose(features, x.reshape(1, 4)) and p.shape == (1, 3)
    plain = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    onnx.save(helper.make_model(plain, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "plain.onnx"))
    with pytest.raises(ValueError, match="not a classification network"):
        add_features_output(tmp_path / "plain.onnx")


def test_the_device_says_whether_it_was_shown_the_jokers(tmp_path: Path) -> None:
    from mayi_table.launch import jokers_status

    path = tmp_path / "jokers.npz"
    assert jokers_status(path).startswith("the deck's jokers: not shown;") and "learn-jokers" in jokers_status(path)
    JokerMarks.of([np.ones(4)]).save(path)
    assert jokers_status(path) == f"the deck's jokers: shown ({path})"
