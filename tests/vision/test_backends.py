"""The three backends agree: same raw outputs (within float tolerance) and the same detections.

Until the trained model is committed under vision_models/, a deterministic fixture model (yolo11n from its
YAML, 53 classes, fixed seeds) is built and exported to ONNX and ncnn once per test run. A low confidence
threshold makes the random weights detect plenty, so agreement is not trivially about empty lists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mayi_table.vision.detect import Detector, make_tile
from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.recognize import Recognizer

from .helpers import FIXTURE_IMGSZ, table_image

CONF = 0.3
SCORE_TOL = 2e-3  # detections this close to the threshold may fall either side in another runtime
DEVICE = Path(__file__).resolve().parents[2] / "device"


def _folder(fixture: dict[str, Path | None]) -> Path:
    pt = fixture["pt"]
    assert pt is not None
    return pt.parent


def _need_ncnn(fixture: dict[str, Path | None]) -> None:
    pytest.importorskip("ncnn")
    if fixture["ncnn"] is None:
        pytest.skip("the ncnn export failed (pnnx missing?)")


def _matched(a: Detector, b: Detector, image: np.ndarray) -> int:
    """Assert both detectors find the same corners (ignoring those at the threshold); return how many."""
    da, db = a.detect_array(image), b.detect_array(image)
    sure_a = da.take(np.flatnonzero(da.scores > CONF + SCORE_TOL))
    sure_b = db.take(np.flatnonzero(db.scores > CONF + SCORE_TOL))
    for ref, other in ((sure_a, db), (sure_b, da)):
        for box, score, cls in zip(ref.boxes, ref.scores, ref.classes):
            same = np.flatnonzero((other.classes == cls) & (np.abs(other.boxes - box).max(axis=1) < 0.5))
            assert same.size == 1, (box, score, cls)
            assert abs(float(other.scores[same[0]]) - float(score)) < 1e-3
    return len(sure_a)


def test_fixture_raw_outputs_agree(yolo_fixture: dict[str, Path | None]) -> None:
    _need_ncnn(yolo_fixture)
    folder = _folder(yolo_fixture)
    tile = make_tile(table_image(480, 400, seed=5), 100, 60, FIXTURE_IMGSZ, FIXTURE_IMGSZ)
    outs = {b: Detector(folder, b, conf=CONF).raw(tile) for b in ("ultralytics", "onnx", "ncnn")}
    ref = outs["ultralytics"]
    assert ref.shape == (4 + 53, 2100)
    assert float(ref[4:].max()) > 0.9 and float(np.ptp(ref[4:])) > 0.5  # not a constant, input-blind network
    for name in ("onnx", "ncnn"):
        np.testing.assert_allclose(outs[name][:4], ref[:4], rtol=1e-4, atol=2e-2, err_msg=name)
        np.testing.assert_allclose(outs[name][4:], ref[4:], atol=1e-4, err_msg=name)


def test_fixture_detections_agree_across_backends(yolo_fixture: dict[str, Path | None]) -> None:
    _need_ncnn(yolo_fixture)
    folder = _folder(yolo_fixture)
    image = table_image(480, 400, seed=5)  # 2 x 2 tiles of 320
    dets = {b: Detector(folder, b, conf=CONF) for b in ("ultralytics", "onnx", "ncnn")}
    assert dets["onnx"].input_size == dets["ncnn"].input_size == dets["ultralytics"].input_size == (320, 320)
    n1 = _matched(dets["ultralytics"], dets["onnx"], image)
    n2 = _matched(dets["onnx"], dets["ncnn"], image)
    assert n1 >= 10 and n2 >= 10
    assert dets["onnx"].last_timing["tiles"] == 4
    # and the whole recognition (detection + pairing) is the same
    cards = {b: Recognizer(folder, b, conf=0.5).recognize(image) for b in ("onnx", "ncnn")}
    assert [(c.card, len(c.corners)) for c in cards["onnx"]] == [(c.card, len(c.corners)) for c in cards["ncnn"]]


def test_fixture_export_layout(yolo_fixture: dict[str, Path | None]) -> None:
    folder = _folder(yolo_fixture)
    assert (folder / "corners.pt").is_file() and (folder / "corners.onnx").is_file()
    assert (folder / "model.yaml").is_file()
    if yolo_fixture["ncnn"] is not None:
        ncnn_dir = folder / "corners_ncnn_model"
        assert yolo_fixture["ncnn"] == ncnn_dir
        for name in ("model.ncnn.param", "model.ncnn.bin", "metadata.yaml"):
            assert (ncnn_dir / name).is_file()


@pytest.mark.parametrize("backend", ["onnx", "ncnn"])
def test_runtime_backends_do_not_import_torch(yolo_fixture: dict[str, Path | None], backend: str) -> None:
    if backend == "ncnn":
        _need_ncnn(yolo_fixture)
    code = (
        "import sys; import numpy as np; from mayi_table.vision.recognize import Recognizer; "
        f"r = Recognizer({str(_folder(yolo_fixture))!r}, {backend!r}, conf=0.3); "
        "n = len(r.detector.detect(np.full((200, 200, 3), 90, np.uint8))); "
        "bad = [m for m in ('torch', 'ultralytics') if m in sys.modules]; print(n, bad); sys.exit(1 if bad else 0)"
    )
    env = {"PYTHONPATH": str(DEVICE), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_committed_model_backends_agree() -> None:
    """Once the trained model is committed, its three forms must agree too."""
    needed = [MODELS_DIR / "corners.pt", MODELS_DIR / "corners.onnx", MODELS_DIR / "corners_ncnn_model"]
    if not all(p.exists() for p in needed):
        pytest.skip("no trained model committed under vision_models/ yet")
    pytest.importorskip("ultralytics")
    pytest.importorskip("ncnn")
    image = table_image(700, 500, seed=9)
    dets = {b: Detector(MODELS_DIR, b, conf=0.05) for b in ("ultralytics", "onnx", "ncnn")}
    tile = make_tile(image, 0, 0, *dets["onnx"].input_size[::-1])
    ref = dets["ultralytics"].raw(tile)
    for name in ("onnx", "ncnn"):
        np.testing.assert_allclose(dets[name].raw(tile)[4:], ref[4:], atol=1e-3, err_msg=name)
    _matched(dets["ultralytics"], dets["onnx"], image)
    _matched(dets["onnx"], dets["ncnn"], image)


def test_committed_model_lean_backends_give_the_same_cards() -> None:
    """The committed model through onnx and ncnn (what a Pi runs, no torch) names the same cards on a
    rendered table frame; runs wherever the project is installed, training extra or not."""
    needed = [MODELS_DIR / "corners.onnx", MODELS_DIR / "corners_ncnn_model"]
    if not all(p.exists() for p in needed):
        pytest.skip("no trained model committed under vision_models/ yet")
    from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
    from mayi_table.vision.render.scene import render_table

    frame = render_table(31, HELD_OUT_DESIGNS).image
    onnx, ncnn = (Recognizer(MODELS_DIR, b) for b in ("onnx", "ncnn"))
    tile = make_tile(frame, 0, 0, *onnx.detector.input_size[::-1])
    np.testing.assert_allclose(ncnn.detector.raw(tile)[4:], onnx.detector.raw(tile)[4:], atol=1e-3)
    cards_onnx = sorted(onnx.recognize(frame), key=lambda c: (c.card, c.box))
    cards_ncnn = sorted(ncnn.recognize(frame), key=lambda c: (c.card, c.box))
    assert cards_onnx, "the trained model finds cards on a table"
    assert [c.card for c in cards_onnx] == [c.card for c in cards_ncnn]
    for a, b in zip(cards_onnx, cards_ncnn):
        assert np.abs(np.subtract(a.box, b.box)).max() < 1.0
