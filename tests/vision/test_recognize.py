"""Image loading (EXIF, formats), recognition, annotation, and the `recognize` command's output and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from mayi_table.vision.classes import Corner, PhysicalCard
from mayi_table.vision.recognize import ImageLoadError, Recognizer, annotate, card_record, load_image

from .helpers import block_detector_onnx, blocks_image

DEVICE = Path(__file__).resolve().parents[2] / "device"


@pytest.fixture(scope="module")
def blocks_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    folder = tmp_path_factory.mktemp("blocks_cli")
    block_detector_onnx(folder / "corners.onnx")
    return folder


def _save(img_bgr: np.ndarray, path: Path, orientation: int | None = None) -> Path:
    im = Image.fromarray(img_bgr[:, :, ::-1].copy())
    kwargs: dict[str, Any] = {}
    if orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = orientation
        kwargs["exif"] = exif.tobytes()
    if path.suffix.lower() in (".jpg", ".jpeg"):
        kwargs["quality"] = 100
    im.save(path, **kwargs)
    return path


# ------------------------------------------------------------------ loading


def test_load_png_and_jpeg_as_bgr(tmp_path: Path) -> None:
    img = np.zeros((20, 30, 3), np.uint8)
    img[:, :, 2] = 250  # red
    for name in ("a.png", "a.jpg"):
        got = load_image(_save(img, tmp_path / name))
        assert got.shape == (20, 30, 3) and got.dtype == np.uint8
        assert got[10, 10, 2] > 230 and got[10, 10, 0] < 25


def test_load_applies_exif_orientation(tmp_path: Path) -> None:
    stored = np.zeros((40, 60, 3), np.uint8)  # 60 wide, 40 tall as stored
    stored[0:8, 0:8] = 255  # a white square in the stored top-left corner
    for suffix in (".jpg", ".png"):
        got = load_image(_save(stored, tmp_path / f"rot{suffix}", orientation=6))  # 6: turn 90 degrees clockwise
        assert got.shape == (60, 40, 3)
        # the stored top-left ends up top-right once turned clockwise
        assert got[2:6, 34:38].mean() > 200 and got[2:6, 2:6].mean() < 50


def test_load_other_modes(tmp_path: Path) -> None:
    Image.new("L", (10, 8), 128).save(tmp_path / "grey.png")
    Image.new("RGBA", (10, 8), (0, 0, 255, 100)).save(tmp_path / "alpha.png")
    Image.new("P", (10, 8), 3).save(tmp_path / "palette.png")
    for name in ("grey.png", "alpha.png", "palette.png"):
        assert load_image(tmp_path / name).shape == (8, 10, 3)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "text.jpg").write_text("hello")
    good = _save(np.zeros((50, 50, 3), np.uint8), tmp_path / "whole.jpg")
    (tmp_path / "cut.jpg").write_bytes(good.read_bytes()[:200])
    (tmp_path / "empty.png").write_bytes(b"")
    for name in ("missing.png", "text.jpg", "cut.jpg", "empty.png", ""):
        path = tmp_path / name
        with pytest.raises(ImageLoadError) as e:
            load_image(path)
        assert str(path) in str(e.value)


# ------------------------------------------------------------------ recognition and annotation


def test_recognizer_on_an_exif_turned_photo(tmp_path: Path, blocks_model: Path) -> None:
    stored = blocks_image(96, 64, [(8, 16)])  # 96 x 64 stored; square at x 8..16, y 16..24
    path = _save(stored, tmp_path / "turned.jpg", orientation=6)
    cards = Recognizer(blocks_model, "onnx", conf=0.5).recognize_file(path)
    # shown turned clockwise: 64 wide, 96 tall; stored (x, y) -> shown (63 - y, x)
    assert [c.box for c in cards] == [(40.0, 8.0, 48.0, 16.0)]


def test_annotate_draws_on_a_copy() -> None:
    img = np.zeros((120, 200, 3), np.uint8)
    corner = Corner("10H", 0.87, (20.0, 30.0, 32.0, 60.0))
    cards = [
        PhysicalCard("10H", 0.87, (20.0, 30.0, 90.0, 110.0), (corner,)),
        PhysicalCard("JK", 0.5, (5.0, 5.0, 15.0, 15.0), ()),
    ]
    out = annotate(img, cards)
    assert out.shape == img.shape and out is not img
    assert img.max() == 0 and out.max() > 0
    assert out[30, 20:90].any()  # the box's top edge


def test_card_record() -> None:
    corner = Corner("QH", 0.9349, (1.0, 2.0, 3.0, 4.0))
    assert card_record(PhysicalCard("QH", 0.9349, (1.04, 2.0, 3.0, 4.0), (corner,))) == {
        "card": "QH",
        "confidence": 0.935,
        "box": [1.0, 2.0, 3.0, 4.0],
    }
    rec = card_record(PhysicalCard("QH", 0.9, (1.0, 2.0, 3.0, 4.0), (corner, corner), 12.345))
    assert rec["orientation"] == 12.3


# ------------------------------------------------------------------ the command


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from mayi_table.vision.recognize_cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(DEVICE)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_json_with_a_bad_file_among_good_ones(tmp_path: Path, blocks_model: Path) -> None:
    good1 = _save(blocks_image(112, 112, [(8, 8), (88, 56)]), tmp_path / "one.png")
    bad = tmp_path / "broken.jpg"
    bad.write_text("not a jpeg")
    good2 = _save(blocks_image(64, 64, []), tmp_path / "two.png")
    missing = tmp_path / "missing.jpg"
    out_dir = tmp_path / "annotated"
    proc = run_cli(
        str(good1), str(bad), str(good2), str(missing),
        "--json", "--model", str(blocks_model), "--annotate", str(out_dir), "--conf", "0.5",
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert str(bad) in proc.stderr and str(missing) in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [rec["image"] for rec in lines] == [str(good1), str(bad), str(good2), str(missing)]
    assert "error" in lines[1] and "error" in lines[3]
    first = lines[0]["cards"]
    assert sorted(c["box"] for c in first) == [[8.0, 8.0, 16.0, 16.0], [88.0, 56.0, 96.0, 64.0]]
    assert all(c["card"] == "AS" and 0.5 < c["confidence"] <= 1 for c in first)
    assert lines[2]["cards"] == []
    assert sorted(p.name for p in out_dir.iterdir()) == ["one.cards.png", "two.cards.png"]


def test_cli_plain_output(tmp_path: Path, blocks_model: Path) -> None:
    good = _save(blocks_image(64, 64, [(8, 8)]), tmp_path / "g.png")
    proc = run_cli(str(good), "--model", str(blocks_model))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{good}: 1 card: AS"


def test_cli_missing_model(tmp_path: Path) -> None:
    img = _save(blocks_image(64, 64, []), tmp_path / "g.png")
    for backend in ("onnx", "ncnn", "ultralytics"):
        proc = run_cli(str(img), "--model", str(tmp_path / "no_models"), "--backend", backend)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr
        assert str(tmp_path / "no_models") in proc.stderr and backend in proc.stderr


def test_cli_unknown_backend(tmp_path: Path, blocks_model: Path) -> None:
    proc = run_cli(str(tmp_path / "x.png"), "--model", str(blocks_model), "--backend", "tpu")
    assert proc.returncode == 2 and "unknown backend" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_reads_as_the_recogniser_does(tmp_path: Path) -> None:
    """Without --conf the command's detector proposes indices from the recogniser's own level (it
    once took the detector's standalone threshold and lost the faint indices of unseen designs)."""
    from mayi_table.vision.offline import MODELS_DIR
    from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
    from mayi_table.vision.render.scene import render_spread

    if not (MODELS_DIR / "index.onnx").exists():
        pytest.skip("no models committed under vision_models/ yet")
    image = _save(render_spread(3, HELD_OUT_DESIGNS[:1])[0].image, tmp_path / "hand.png")
    proc = run_cli(str(image), "--json", "--model", str(MODELS_DIR))
    assert proc.returncode == 0, proc.stderr
    cards = json.loads(proc.stdout)["cards"]
    expected = Recognizer(MODELS_DIR, "onnx").recognize_file(image)
    assert len(expected) >= 3
    assert [c["card"] for c in cards] == [c.card for c in expected]
