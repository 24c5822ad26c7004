"""The shared numpy decode, NMS and tiling, on synthetic outputs and a tiny ONNX 'detector' of squares."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from mayi_table.vision.classes import CLASS_NAMES
from mayi_table.vision.detect import (
    Detections,
    Detector,
    ModelError,
    batched_nms,
    decode,
    load_backend,
    make_tile,
    nms,
    resolve_model_path,
    tile_grid,
    tile_starts,
    to_tensor,
)

from .helpers import block_detector_onnx, blocks_image

NC = len(CLASS_NAMES)


def raw_output(rows: list[tuple[float, float, float, float, int, float]], anchors: int = 20) -> np.ndarray:
    """A (4 + nc, anchors) output holding the given (cx, cy, w, h, class, score) rows, then empty anchors."""
    out = np.zeros((4 + NC, anchors), np.float32)
    out[:4] = 5.0
    for i, (cx, cy, w, h, cls, score) in enumerate(rows):
        out[:4, i] = (cx, cy, w, h)
        out[4 + cls, i] = score
    return out


# ------------------------------------------------------------------ decode and NMS


def test_decode_thresholds_converts_and_suppresses_per_class() -> None:
    out = raw_output(
        [
            (100, 100, 20, 40, 5, 0.9),  # kept
            (102, 101, 20, 40, 5, 0.8),  # same class, overlapping: suppressed
            (102, 101, 20, 40, 6, 0.7),  # other class, overlapping: kept
            (300, 50, 10, 10, 5, 0.6),  # same class, apart: kept
            (200, 200, 10, 10, 7, 0.2),  # under the threshold
        ]
    )
    det = decode(out, conf=0.25, iou=0.5)
    assert len(det) == 3
    assert det.scores.tolist() == pytest.approx([0.9, 0.7, 0.6])
    assert det.classes.tolist() == [5, 6, 5]
    assert det.boxes[0].tolist() == pytest.approx([90, 80, 110, 120])
    assert det.boxes[2].tolist() == pytest.approx([295, 45, 305, 55])


def test_decode_takes_the_best_class_and_accepts_a_batch_axis() -> None:
    out = raw_output([(50, 50, 10, 10, 3, 0.4)])
    out[4 + 9, 0] = 0.6
    det = decode(out[None], conf=0.3)
    assert det.classes.tolist() == [9] and det.scores.tolist() == pytest.approx([0.6])
    assert len(decode(out, conf=0.7)) == 0
    with pytest.raises(ValueError):
        decode(np.zeros((3, 10), np.float32))


def test_nms_keeps_best_first_and_breaks_ties_by_position() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60], [0, 0, 10, 10]], np.float32)
    scores = np.array([0.5, 0.9, 0.7, 0.9], np.float32)
    assert nms(boxes, scores, 0.5).tolist() == [1, 2]
    # equal scores: the earlier box wins
    assert nms(boxes[[3, 0]], np.array([0.9, 0.9], np.float32), 0.5).tolist() == [0]
    assert batched_nms(boxes, scores, np.array([0, 0, 0, 1]), 0.5).tolist() == [1, 3, 2]
    assert batched_nms(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64), 0.5).size == 0


# ------------------------------------------------------------------ tiling


@pytest.mark.parametrize("length", [1, 100, 320, 321, 500, 1080, 1920, 4032])
@pytest.mark.parametrize("tile,overlap", [(320, 80), (640, 160), (64, 16)])
def test_tiles_cover_with_the_overlap(length: int, tile: int, overlap: int) -> None:
    starts = tile_starts(length, tile, overlap)
    assert starts[0] == 0
    if length <= tile:
        assert starts == [0]
        return
    assert starts[-1] + tile == length  # the last tile ends at the image's edge
    assert all(b - a <= tile - overlap for a, b in zip(starts, starts[1:]))  # overlap at least as asked
    assert all(b > a for a, b in zip(starts, starts[1:]))


def test_a_1080p_frame_in_320_tiles() -> None:
    grid = tile_grid(1920, 1080, 320, 320, overlap=0.25)
    xs, ys = sorted({x for x, _ in grid}), sorted({y for _, y in grid})
    assert len(grid) == len(xs) * len(ys) == 8 * 5
    covered = np.zeros((1080, 1920), bool)
    for x, y in grid:
        covered[y : y + 320, x : x + 320] = True
    assert covered.all()


def test_make_tile_pads_with_grey_and_to_tensor_is_rgb() -> None:
    img = np.zeros((30, 50, 3), np.uint8)
    img[..., 2] = 200  # red in BGR
    tile = make_tile(img, 0, 0, 64, 64)
    assert tile.shape == (64, 64, 3)
    assert (tile[40, 10] == 114).all() and (tile[10, 60] == 114).all()
    tensor = to_tensor(tile)
    assert tensor.shape == (1, 3, 64, 64) and tensor.dtype == np.float32
    assert tensor[0, 0, 5, 5] == pytest.approx(200 / 255) and tensor[0, 2, 5, 5] == 0


# ------------------------------------------------------------------ a real (tiny) ONNX model through the tiling


@pytest.fixture(scope="module")
def blocks_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    folder = tmp_path_factory.mktemp("blocks")
    block_detector_onnx(folder / "corners.onnx")
    return folder


def test_onnx_backend_reads_size_and_names_from_the_model(blocks_model: Path) -> None:
    backend = load_backend(blocks_model, "onnx")
    assert backend.input_size == (64, 64)
    assert backend.names == CLASS_NAMES
    out = backend.run(to_tensor(blocks_image(64, 64, [(8, 16)])))
    assert out.shape == (4 + NC, 64)
    assert out[4, 2 * 8 + 1] == pytest.approx(1.0)


def test_blocks_across_tile_edges_are_found_once(blocks_model: Path) -> None:
    """160 x 112 px in 64 px tiles overlapping by 16: starts x 0, 48, 96 and y 0, 48."""
    blocks = [(0, 0), (56, 8), (48, 48), (152, 104), (96, 56), (120, 24)]
    det = Detector(blocks_model, "onnx", conf=0.5, overlap=0.25)
    found = det.detect_array(blocks_image(160, 112, blocks))
    assert det.last_timing["tiles"] == 6
    got = sorted((int(round(b[0])), int(round(b[1]))) for b in found.boxes)
    assert got == sorted(blocks)
    assert all((b[2] - b[0], b[3] - b[1]) == (8, 8) for b in found.boxes.tolist())
    corners = det.detect(blocks_image(160, 112, blocks))
    assert len(corners) == len(blocks) and all(c.card == "AS" for c in corners)


def test_a_small_image_is_letterboxed_not_scaled(blocks_model: Path) -> None:
    det = Detector(blocks_model, "onnx", conf=0.5)
    corners = det.detect(blocks_image(40, 24, [(8, 8), (32, 16)]))
    assert sorted(c.box for c in corners) == [(8.0, 8.0, 16.0, 16.0), (32.0, 16.0, 40.0, 24.0)]


def test_scale_option_maps_boxes_back(blocks_model: Path) -> None:
    det = Detector(blocks_model, "onnx", conf=0.5, scale=0.5)
    corners = det.detect(blocks_image(128, 128, [(32, 48)], size=16))
    assert [c.box for c in corners] == [(32.0, 48.0, 48.0, 64.0)]


def test_grey_and_bgra_images_are_accepted(blocks_model: Path) -> None:
    det = Detector(blocks_model, "onnx", conf=0.5)
    grey = blocks_image(64, 64, [(8, 8)])[:, :, 0]
    assert len(det.detect(grey)) == 1
    bgra = np.dstack([blocks_image(64, 64, [(8, 8)]), np.full((64, 64), 255, np.uint8)])
    assert len(det.detect(bgra)) == 1


def test_onnx_backend_does_not_import_torch(blocks_model: Path) -> None:
    import subprocess

    code = (
        "import sys; import numpy as np; from mayi_table.vision.recognize import Recognizer; "
        f"r = Recognizer({str(blocks_model)!r}, 'onnx'); r.recognize(np.zeros((100, 100, 3), np.uint8)); "
        "bad = [m for m in ('torch', 'ultralytics') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    device = Path(__file__).resolve().parents[2] / "device"
    env = {"PYTHONPATH": str(device), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ model errors


def test_missing_model_folder_names_path_and_backend(tmp_path: Path) -> None:
    for backend in ("onnx", "ncnn", "ultralytics"):
        with pytest.raises(ModelError) as e:
            Detector(tmp_path / "nowhere", backend)
        assert str(tmp_path / "nowhere") in str(e.value) and backend in str(e.value)
        assert e.value.backend == backend


def test_missing_model_file_in_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="corners.onnx"):
        load_backend(tmp_path, "onnx")
    with pytest.raises(ModelError, match="corners_ncnn_model"):
        load_backend(tmp_path, "ncnn")
    with pytest.raises(ModelError, match="corners.pt"):
        load_backend(tmp_path, "ultralytics")


def test_unknown_backend(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown backend"):
        load_backend(tmp_path, "tflite")


def test_unreadable_model_files(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    (tmp_path / "corners.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="unreadable ONNX") as e:
        load_backend(tmp_path, "onnx")
    assert str(tmp_path / "corners.onnx") in str(e.value)
    pytest.importorskip("ncnn")
    ncnn_dir = tmp_path / "corners_ncnn_model"
    ncnn_dir.mkdir()
    (ncnn_dir / "model.ncnn.param").write_text("garbage\n")
    (ncnn_dir / "model.ncnn.bin").write_bytes(b"\0" * 16)
    with pytest.raises(ModelError, match="model.ncnn.param"):
        load_backend(tmp_path, "ncnn")


def test_unreadable_metadata_file(tmp_path: Path, blocks_model: Path) -> None:
    import shutil

    shutil.copy(blocks_model / "corners.onnx", tmp_path / "corners.onnx")
    (tmp_path / "model.yaml").write_text("imgsz: [64,\n")
    with pytest.raises(ModelError, match="model.yaml"):
        load_backend(tmp_path, "onnx")


def test_model_without_names_falls_back_to_model_yaml(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    onnx = pytest.importorskip("onnx")
    path = block_detector_onnx(tmp_path / "corners.onnx")
    model = onnx.load(str(path))
    keep = [(p.key, p.value) for p in model.metadata_props if p.key != "names"]
    del model.metadata_props[:]
    for k, v in keep:
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))
    with pytest.raises(ModelError, match="no class names"):
        load_backend(tmp_path, "onnx")
    from mayi_table.vision.detect import write_metadata_file

    write_metadata_file(tmp_path / "model.yaml", 64, CLASS_NAMES, conf=0.4)
    assert load_backend(tmp_path, "onnx").names == CLASS_NAMES
    assert Detector(tmp_path, "onnx").conf == pytest.approx(0.4)


def test_class_names_must_be_cards(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    block_detector_onnx(tmp_path / "corners.onnx", names=[f"class{i}" for i in range(NC)])
    with pytest.raises(ModelError, match="not card names"):
        load_backend(tmp_path, "onnx")


def test_resolve_model_path(tmp_path: Path) -> None:
    assert resolve_model_path(tmp_path, "onnx") == tmp_path / "corners.onnx"
    assert resolve_model_path(tmp_path / "x.onnx", "onnx") == tmp_path / "x.onnx"
    assert resolve_model_path(tmp_path, "ncnn") == tmp_path / "corners_ncnn_model"
    (tmp_path / "model.ncnn.param").write_text("")
    assert resolve_model_path(tmp_path, "ncnn") == tmp_path


def test_detections_helpers() -> None:
    empty = Detections.empty()
    assert len(empty) == 0 and len(Detections.concat([])) == 0
    both = Detections.concat([empty, Detections(np.ones((1, 4), np.float32), np.ones(1, np.float32), np.ones(1))])
    assert len(both) == 1 and both.classes.dtype == np.int64
