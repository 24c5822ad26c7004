"""Constructed inputs for the vision tests: corner sets of posed cards, a tiny block-detector ONNX model,
synthetic table images, and the deterministic YOLO fixture model."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mayi_table.vision.classes import CLASS_NAMES, Corner
from mayi_table.vision.pairing import CARD_HEIGHT_MM, CARD_WIDTH_MM

# ------------------------------------------------------------------ posed cards


def card_corners(
    card: str,
    centre: tuple[float, float],
    angle: float,
    *args: Any,
    confidence: tuple[float, float] = (0.9, 0.8),
    **kw: Any,
) -> tuple[Corner, Corner]:
    """The (top-left, bottom-right) corner-index boxes of a card lying flat at `angle` degrees counter-clockwise
    (the further arguments as `four_index_corners` takes them)."""
    tl, br, _, _ = four_index_corners(card, centre, angle, *args, confidence=(*confidence, 0.0, 0.0), **kw)
    return tl, br


def four_index_corners(
    card: str,
    centre: tuple[float, float],
    angle: float,
    px_per_mm: float = 2.0,
    index_mm: tuple[float, float] = (8.0, 16.0),
    margin_mm: float = 3.0,
    confidence: tuple[float, float, float, float] = (0.9, 0.8, 0.7, 0.6),
) -> tuple[Corner, Corner, Corner, Corner]:
    """The (top-left, bottom-right, top-right, bottom-left) index boxes of a four-index card lying flat."""
    iw, ih = index_mm
    ox = CARD_WIDTH_MM / 2 - margin_mm - iw / 2
    oy = CARD_HEIGHT_MM / 2 - margin_mm - ih / 2
    t = math.radians(angle)
    c, s = math.cos(t), math.sin(t)
    bw = (iw * abs(c) + ih * abs(s)) * px_per_mm
    bh = (iw * abs(s) + ih * abs(c)) * px_per_mm
    out = []
    for (sx, sy), conf in zip(((-1, -1), (1, 1), (1, -1), (-1, 1)), confidence):
        u, v = sx * ox * px_per_mm, sy * oy * px_per_mm
        x, y = centre[0] + u * c + v * s, centre[1] - u * s + v * c
        out.append(Corner(card, conf, (x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2)))
    return out[0], out[1], out[2], out[3]


def fan_corners(
    cards: Sequence[str],
    start: tuple[float, float],
    angle: float,
    step_mm: float,
    px_per_mm: float = 2.0,
    four_index: bool = False,
) -> list[Corner]:
    """The indices a fanned row leaves showing: each card shifted `step_mm` along the row, covering the
    previous card's bottom-right index (its top-left one, and on a four-index deck its bottom-left one)."""
    t = math.radians(angle)
    dx, dy = math.cos(t) * step_mm * px_per_mm, -math.sin(t) * step_mm * px_per_mm
    out = []
    for i, card in enumerate(cards):
        tl, _, _, bl = four_index_corners(card, (start[0] + i * dx, start[1] + i * dy), angle, px_per_mm)
        out += [tl, bl] if four_index else [tl]
    return out


# ------------------------------------------------------------------ a tiny ONNX "detector" of bright squares


def block_detector_onnx(
    path: Path, size: int = 64, stride: int = 8, cls: int = 0, names: Sequence[str] = CLASS_NAMES
) -> Path:
    """An ONNX model in the YOLO output layout that 'detects' bright stride x stride squares on the stride grid.

    Output (1, 4 + nc, (size / stride)^2): every grid cell's box (its own square), class `cls` scored with the
    cell's mean brightness in [0, 1], all other classes 0. Needs the onnx package (test-only).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    g = size // stride
    n, nc = g * g, len(names)
    ys, xs = np.mgrid[0:g, 0:g]
    boxes = np.stack(
        [(xs + 0.5) * stride, (ys + 0.5) * stride, np.full_like(xs, stride), np.full_like(ys, stride)]
    ).reshape(1, 4, n)
    inits = [
        numpy_helper.from_array(boxes.astype(np.float32), "boxes"),
        numpy_helper.from_array(np.zeros((1, cls, n), np.float32), "before"),
        numpy_helper.from_array(np.zeros((1, nc - cls - 1, n), np.float32), "after"),
        numpy_helper.from_array(np.array([1, 1, n], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["grey"], axes=[1], keepdims=1),
        helper.make_node("AveragePool", ["grey"], ["pooled"], kernel_shape=[stride, stride], strides=[stride, stride]),
        helper.make_node("Reshape", ["pooled", "shape"], ["score"]),
        helper.make_node("Concat", ["boxes", "before", "score", "after"], ["output0"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "blocks",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 4 + nc, n])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    for key, value in (("imgsz", str([size, size])), ("names", str(dict(enumerate(names)))), ("task", "detect")):
        meta = model.metadata_props.add()
        meta.key, meta.value = key, value
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def blocks_image(width: int, height: int, blocks: Sequence[tuple[int, int]], size: int = 8) -> np.ndarray:
    """A black BGR image with white size x size squares at the given top-left corners."""
    img = np.zeros((height, width, 3), np.uint8)
    for x, y in blocks:
        img[y : y + size, x : x + size] = 255
    return img


# ------------------------------------------------------------------ synthetic table images


def table_image(width: int, height: int, seed: int = 0, cards: int = 8) -> np.ndarray:
    """A green 'felt' with white cards carrying red/black text, deterministic per seed."""
    import cv2

    rng = np.random.default_rng(seed)
    img = np.zeros((height, width, 3), np.uint8)
    img[:] = (40, 110, 40)
    noise = rng.normal(0, 6, (height, width, 1))
    img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    names = ["7H", "QS", "10D", "AC", "JK", "3H", "KC", "9S"]
    for i in range(cards):
        w, h = int(rng.integers(50, 70)), int(rng.integers(70, 95))
        x, y = int(rng.integers(0, max(1, width - w))), int(rng.integers(0, max(1, height - h)))
        cv2.rectangle(img, (x, y), (x + w, y + h), (245, 245, 240), -1)
        cv2.rectangle(img, (x, y), (x + w, y + h), (150, 150, 150), 1)
        colour = (30, 30, 200) if i % 2 == 0 else (20, 20, 20)
        cv2.putText(img, names[i % len(names)], (x + 3, y + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 2)
    return img


# ------------------------------------------------------------------ the deterministic YOLO fixture model

FIXTURE_IMGSZ = 320


def build_fixture_model(folder: Path, imgsz: int = FIXTURE_IMGSZ, seed: int = 0) -> dict[str, Path | None]:
    """yolo11n built from its YAML with the 53 card classes, made input-sensitive, saved and exported.

    Random YOLO weights give features that hardly depend on the input and scores near zero, so the fixture
    calibrates its batch norms on a synthetic table image and re-draws the head's last layers: its raw outputs
    then vary with the image and it detects plenty at a low threshold. Returns the paths (ncnn None when its
    export failed, e.g. without pnnx).
    """
    from mayi_table.vision.detect import to_tensor, write_metadata_file
    from mayi_table.vision.offline import prepare_ultralytics

    prepare_ultralytics()
    import torch
    from ultralytics import YOLO  # type: ignore[import-untyped]
    from ultralytics.nn.tasks import DetectionModel  # type: ignore[import-untyped]

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    net = DetectionModel("yolo11n.yaml", nc=len(CLASS_NAMES), verbose=False)
    net.names = dict(enumerate(CLASS_NAMES))
    calib = torch.from_numpy(to_tensor(table_image(imgsz, imgsz, seed=seed + 100, cards=6)))
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # a plain average over the calibration batch
    net.train()
    with torch.no_grad():
        net(torch.cat([calib, calib.flip(3), calib.flip(2), calib.flip(2).flip(3)]))
    net.eval()
    gen = torch.Generator().manual_seed(seed + 1)
    head = net.model[-1]
    for branch, bias in [(b, -4.0) for b in head.cv3] + [(b, None) for b in head.cv2]:
        conv = branch[-1]
        conv.weight.data = torch.randn(conv.weight.shape, generator=gen) / conv.weight[0].numel() ** 0.5
        if bias is not None:
            conv.bias.data.fill_(bias)
    yolo = YOLO("yolo11n.yaml", task="detect")
    yolo.model = net
    yolo.ckpt = {"train_args": {"imgsz": imgsz, "task": "detect"}}
    pt = folder / "corners.pt"
    yolo.save(str(pt))
    write_metadata_file(folder / "model.yaml", imgsz, CLASS_NAMES)
    with warnings.catch_warnings():  # torch's legacy ONNX exporter and jit.trace deprecations
        warnings.simplefilter("ignore")
        onnx_path = YOLO(str(pt), task="detect").export(format="onnx", imgsz=imgsz, simplify=False, dynamic=False)
        try:
            ncnn_path: Path | None = Path(YOLO(str(pt), task="detect").export(format="ncnn", imgsz=imgsz))
        except Exception:  # noqa: BLE001 - the ncnn tests skip without it
            ncnn_path = None
    return {"pt": pt, "onnx": Path(onnx_path), "ncnn": ncnn_path}
