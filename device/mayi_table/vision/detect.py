"""The corner-index detector: one YOLO model, three interchangeable runtimes, one numpy decode.

Backends, chosen by name:

* ``ultralytics``: the trained ``corners.pt`` through Ultralytics and PyTorch (training machines);
* ``onnx``: the exported ``corners.onnx`` through onnxruntime (no torch, no ultralytics);
* ``ncnn``: the exported ``corners_ncnn_model/`` through the ``ncnn`` package (no torch, no ultralytics;
  the fastest on a Raspberry Pi).

Each backend only turns a ``(1, 3, H, W)`` float32 RGB tensor into the raw YOLO output ``(4 + nc, anchors)``
(box centre x, centre y, width, height in input pixels, then one sigmoid score per class). Everything
else is shared numpy code, so the three agree: thresholding, class-wise NMS, and tiling.

Corner indices are small (about 12 x 30 px in a 1080p frame) and the model is trained on crops at the
camera's native scale, so a large frame is not shrunk to the model's input: it is cut into overlapping
tiles of the input size (letterboxed with grey where the image is smaller than a tile), each tile is
detected on its own, detections cut by a tile's inner edge are dropped (the overlap guarantees the
neighbouring tile sees them whole), and the rest are merged with class-wise NMS in image coordinates.

The model folder (default ``vision_models/``) holds::

    corners.pt                      Ultralytics checkpoint
    corners.onnx                    exported ONNX (input "images" 1x3xHxW, output "output0" 1x(4+nc)xN)
    corners_ncnn_model/             exported ncnn: model.ncnn.param, model.ncnn.bin, metadata.yaml
    model.yaml                      optional fallback metadata: imgsz (int or [h, w]), names, conf

Input size and class names come from each file's own metadata (ONNX metadata_props and input shape,
ncnn ``metadata.yaml``, the checkpoint's train args and names), falling back to ``model.yaml``.
"""

from __future__ import annotations

import ast
import math
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .classes import CLASS_INDEX, Corner

BACKENDS: tuple[str, ...] = ("ultralytics", "onnx", "ncnn")
MODEL_FILES: dict[str, str] = {"ultralytics": "corners.pt", "onnx": "corners.onnx", "ncnn": "corners_ncnn_model"}


def model_file(backend: str, stem: str = "corners") -> str:
    """The file (or ncnn folder) name of a model inside the model folder: corners.onnx, index_ncnn_model, ..."""
    return MODEL_FILES[backend].replace("corners", stem, 1)


NCNN_PARAM, NCNN_BIN, NCNN_META = "model.ncnn.param", "model.ncnn.bin", "metadata.yaml"
METADATA_FILE = "model.yaml"

DEFAULT_CONF = 0.25
DEFAULT_IOU = 0.5
DEFAULT_OVERLAP = 0.25  # share of the tile size that neighbouring tiles overlap by
PAD_VALUE = 114  # Ultralytics' letterbox grey
EDGE_MARGIN = 2.0  # px: a box this close to a tile's inner edge counts as cut by it
MAX_CANDIDATES = 30000  # boxes entering NMS per tile, best first
MAX_DETECTIONS = 1000  # per image


class ModelError(RuntimeError):
    """A model that cannot be used: missing, unreadable, inconsistent, or its runtime is not installed."""

    def __init__(self, backend: str, path: Path | str, reason: str) -> None:
        self.backend = backend
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"cannot use the {backend} model at {path}: {reason}")


# ------------------------------------------------------------------ metadata


@dataclass(frozen=True)
class ModelInfo:
    """What the decode needs to know about a model."""

    input_size: tuple[int, int]  # (height, width) of the network input
    names: tuple[str, ...]  # class names, by class index


def _as_size(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (int(value), int(value))
    if isinstance(value, (list, tuple)) and len(value) in (1, 2) and all(isinstance(v, (int, float)) for v in value):
        return (int(value[0]), int(value[-1]))
    return None


def _as_names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    if isinstance(value, dict):
        try:
            items = sorted((int(k), str(v)) for k, v in value.items())
        except (TypeError, ValueError):
            return None
        if [k for k, _ in items] != list(range(len(items))):
            return None
        return tuple(v for _, v in items)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return None


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a YAML mapping")
    return data


def read_metadata_file(path: Path) -> dict[str, Any]:
    """The fallback metadata (``model.yaml``) as a dict; empty when the file is absent."""
    if not path.is_file():
        return {}
    try:
        return _read_yaml(path)
    except Exception as e:  # noqa: BLE001 - any parse failure is reported the same way
        raise ModelError("metadata", path, f"unreadable metadata ({e})") from e


def write_metadata_file(path: Path, input_size: int | Sequence[int], names: Sequence[str], **extra: Any) -> None:
    """Write a ``model.yaml`` the backends can fall back to (imgsz as [h, w], names as a list)."""
    import yaml

    size = _as_size(list(input_size) if not isinstance(input_size, int) else input_size)
    data = {"imgsz": list(size) if size else input_size, "names": list(names), **extra}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _model_info(
    backend: str,
    path: Path,
    size: tuple[int, int] | None,
    names: tuple[str, ...] | None,
    fallback: dict[str, Any],
    known: Sequence[str] | None = None,
) -> ModelInfo:
    """Input size and names from the model's own metadata, else the fallback; names must be in `known`
    (default: card names)."""
    size = size or _as_size(fallback.get("imgsz"))
    names = names or _as_names(fallback.get("names"))
    if size is None:
        raise ModelError(backend, path, f"no input size in the model's metadata or in {METADATA_FILE}")
    if names is None:
        raise ModelError(backend, path, f"no class names in the model's metadata or in {METADATA_FILE}")
    unknown = [n for n in names if n not in (CLASS_INDEX if known is None else known)]
    if unknown:
        raise ModelError(backend, path, f"class names are not card names: {', '.join(unknown[:5])}")
    if size[0] <= 0 or size[1] <= 0:
        raise ModelError(backend, path, f"bad input size {size}")
    return ModelInfo(size, names)


# ------------------------------------------------------------------ backends


def resolve_model_path(model: Path | str, backend: str, stem: str = "corners") -> Path:
    """The backend's model file (or ncnn folder) inside a model folder, or `model` itself when it is one."""
    if backend not in BACKENDS:
        raise ModelError(backend, model, f"unknown backend (choose one of {', '.join(BACKENDS)})")
    model = Path(model)
    if backend == "ncnn":
        return model if (model / NCNN_PARAM).exists() else model / model_file(backend, stem)
    return model if model.suffix in (".pt", ".onnx") else model / model_file(backend, stem)


class Backend(ABC):
    """A loaded network: a (1, 3, H, W) float32 RGB tensor in [0, 1] -> raw output (4 + nc, anchors)."""

    name: str = ""

    def __init__(self, path: Path, info: ModelInfo) -> None:
        self.path = path
        self.info = info

    @property
    def input_size(self) -> tuple[int, int]:
        return self.info.input_size

    @property
    def names(self) -> tuple[str, ...]:
        return self.info.names

    def forward(self, tensor: np.ndarray) -> np.ndarray:
        """Run the network on one (1, 3, H, W) tensor; its raw output as float32."""
        return np.asarray(self._run(self._input_of(tensor)), dtype=np.float32)

    def _input_of(self, tensor: np.ndarray) -> np.ndarray:
        h, w = self.input_size
        if tensor.shape != (1, 3, h, w):
            raise ValueError(f"expected input shape (1, 3, {h}, {w}), got {tensor.shape}")
        return np.ascontiguousarray(tensor, dtype=np.float32)

    def run(self, tensor: np.ndarray) -> np.ndarray:
        """Run a detection network on one tensor; return its output as (4 + nc, anchors) float32."""
        out = self.forward(tensor)
        out = out.reshape(out.shape[-2:]) if out.ndim > 2 else out
        rows = 4 + len(self.names)
        if out.ndim != 2 or rows not in out.shape:
            reason = f"output of shape {out.shape} does not fit {len(self.names)} classes"
            raise ModelError(self.name, self.path, reason)
        return out if out.shape[0] == rows else out.T

    def forward_features(self, tensor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A classification network's output and the features its last layer reads (one vector), from one
        run: what a deck's own joker looks like to the network (jokers.py)."""
        out, features = self._run_features(self._input_of(tensor))
        return np.asarray(out, np.float32), np.asarray(features, np.float32).reshape(-1)

    @abstractmethod
    def _run(self, tensor: np.ndarray) -> np.ndarray: ...

    def _run_features(self, tensor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise ModelError(self.name, self.path, "this model gives no features (not a classification network)")


class UltralyticsBackend(Backend):
    """The PyTorch checkpoint through Ultralytics (imports torch)."""

    name = "ultralytics"

    def __init__(
        self, path: Path, fallback: dict[str, Any], threads: int | None = None, known: Sequence[str] | None = None
    ) -> None:
        if not path.is_file():
            raise ModelError(self.name, path, "no such file")
        from .offline import prepare_ultralytics

        prepare_ultralytics()
        try:
            import torch
            from ultralytics import YOLO
        except ImportError as e:
            raise ModelError(self.name, path, f"needs torch and ultralytics installed ({e})") from e
        if threads:
            torch.set_num_threads(threads)
        try:
            yolo = YOLO(str(path), task="detect" if known is None else "classify")
            net = yolo.model
            if not isinstance(net, torch.nn.Module):
                raise TypeError("not a PyTorch checkpoint")
            train_args = (getattr(yolo, "ckpt", None) or {}).get("train_args") or {}
            names = _as_names(getattr(net, "names", None))
            net = net.float().eval().fuse(verbose=False)
        except ModelError:
            raise
        except Exception as e:  # noqa: BLE001 - any unreadable checkpoint is reported the same way
            raise ModelError(self.name, path, f"unreadable checkpoint ({type(e).__name__}: {e})") from e
        size = _as_size(train_args.get("imgsz"))
        super().__init__(path, _model_info(self.name, path, size, names, fallback, known))
        self._torch = torch
        self._net = net

    def _run(self, tensor: np.ndarray) -> np.ndarray:
        with self._torch.inference_mode():
            out = self._net(self._torch.from_numpy(tensor))
        if isinstance(out, (list, tuple)):
            out = out[0]
        return np.asarray(out.float().cpu().numpy())

    def _run_features(self, tensor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        linear = getattr(self._net.model[-1], "linear", None)  # an Ultralytics Classify head's last layer
        if linear is None:
            return super()._run_features(tensor)
        seen: list[Any] = []
        hook = linear.register_forward_pre_hook(lambda _module, args: seen.append(args[0]))
        try:
            out = self._run(tensor)
        finally:
            hook.remove()
        return out, seen[0].float().cpu().numpy()


class OnnxBackend(Backend):
    """The exported ONNX model through onnxruntime."""

    name = "onnx"

    def __init__(
        self, path: Path, fallback: dict[str, Any], threads: int | None = None, known: Sequence[str] | None = None
    ) -> None:
        if not path.is_file():
            raise ModelError(self.name, path, "no such file")
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise ModelError(self.name, path, "needs the onnxruntime package (pip install onnxruntime)") from e
        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        try:
            session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise ModelError(self.name, path, f"unreadable ONNX model ({e})") from e
        meta = session.get_modelmeta().custom_metadata_map
        inputs = session.get_inputs()
        if len(inputs) != 1 or len(inputs[0].shape) != 4:
            raise ModelError(self.name, path, "expected one 4-dimensional image input")
        shape = inputs[0].shape
        static = (shape[2], shape[3]) if isinstance(shape[2], int) and isinstance(shape[3], int) else None
        size = static or _as_size(meta.get("imgsz"))
        super().__init__(path, _model_info(self.name, path, size, _as_names(meta.get("names")), fallback, known))
        self._session = session
        self._input = inputs[0].name
        outputs = session.get_outputs()
        self._output = outputs[0].name
        # a classifier exported with its features as a second output (train.add_features_output)
        self._features = outputs[1].name if known is not None and len(outputs) > 1 else None

    def _run(self, tensor: np.ndarray) -> np.ndarray:
        return np.asarray(self._session.run([self._output], {self._input: tensor})[0])

    def _run_features(self, tensor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._features is None:
            return super()._run_features(tensor)
        out, features = self._session.run([self._output, self._features], {self._input: tensor})
        return np.asarray(out), np.asarray(features)


class NcnnBackend(Backend):
    """The exported ncnn model (``model.ncnn.param`` + ``model.ncnn.bin``) through the ``ncnn`` package."""

    name = "ncnn"

    def __init__(
        self, path: Path, fallback: dict[str, Any], threads: int | None = None, known: Sequence[str] | None = None
    ) -> None:
        param, weights = path / NCNN_PARAM, path / NCNN_BIN
        for f in (param, weights):
            if not f.is_file():
                raise ModelError(self.name, path, f"no such file {f}")
        # ncnn's OpenMP threads spin while waiting; on a busy machine (camera, UI, or another job on the same
        # cores) that spinning slowed inference 100-fold here. Passive waiting costs microseconds per layer.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import ncnn
        except ImportError as e:
            raise ModelError(self.name, path, "needs the ncnn package (pip install ncnn)") from e
        meta: dict[str, Any] = {}
        if (path / NCNN_META).is_file():
            try:
                meta = _read_yaml(path / NCNN_META)
            except Exception as e:  # noqa: BLE001
                raise ModelError(self.name, path, f"unreadable {NCNN_META} ({e})") from e
        net = ncnn.Net()
        net.opt.use_vulkan_compute = False
        if threads:
            net.opt.num_threads = threads
        if net.load_param(str(param)) != 0:
            raise ModelError(self.name, path, f"unreadable {param.name}")
        if net.load_model(str(weights)) != 0:
            raise ModelError(self.name, path, f"unreadable {weights.name}")
        in_names, out_names = list(net.input_names()), sorted(net.output_names())
        if len(in_names) != 1 or not out_names:
            raise ModelError(self.name, path, "expected one input and an output")
        size, names = _as_size(meta.get("imgsz")), _as_names(meta.get("names"))
        info = _model_info(self.name, path, size, names, fallback, known)
        super().__init__(path, info)
        self._ncnn = ncnn
        self._net = net
        self._input = in_names[0]
        self._output = out_names[0]
        self._features = _ncnn_features_blob(param) if known is not None else None

    def _run(self, tensor: np.ndarray) -> np.ndarray:
        return self._extract(tensor, self._output)[0]

    def _run_features(self, tensor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._features is None:
            return super()._run_features(tensor)
        out, features = self._extract(tensor, self._output, self._features)
        return out, features

    def _extract(self, tensor: np.ndarray, *blobs: str) -> list[np.ndarray]:
        mat = self._ncnn.Mat(np.ascontiguousarray(tensor[0])).clone()
        outs = []
        with self._net.create_extractor() as ex:
            ex.set_light_mode(len(blobs) == 1)  # light mode frees a blob once read: keep them for a second
            ex.input(self._input, mat)
            for blob in blobs:
                ret, out = ex.extract(blob)
                if ret != 0:
                    raise ModelError(self.name, self.path, f"ncnn extract failed with code {ret}")
                outs.append(np.array(out))
        return outs


def _ncnn_features_blob(param: Path) -> str | None:
    """The blob the last InnerProduct layer of an ncnn graph reads (a classifier's features), if any."""
    layers = [line.split() for line in param.read_text(errors="replace").splitlines()]
    products = [f for f in layers if len(f) > 4 and f[0] == "InnerProduct" and f[2] == "1"]
    return products[-1][4] if products else None


def load_backend(
    model: Path | str,
    backend: str = "onnx",
    threads: int | None = None,
    stem: str = "corners",
    known: Sequence[str] | None = None,
) -> Backend:
    """Load the named backend's model `stem` from a model folder (or from the model file/ncnn folder itself).

    `known`: the class names the model may have (default: card names)."""
    path = resolve_model_path(model, backend, stem)
    folder = path.parent
    if not path.exists():
        where = Path(model)
        reason = "no such model folder" if not where.exists() else f"no {model_file(backend, stem)} in it"
        raise ModelError(backend, where if not where.exists() else path, reason)
    fallback = read_metadata_file(folder / (METADATA_FILE if stem == "corners" else f"{stem}.yaml"))
    factories: dict[str, Callable[[Path, dict[str, Any], int | None, Sequence[str] | None], Backend]] = {
        "ultralytics": UltralyticsBackend,
        "onnx": OnnxBackend,
        "ncnn": NcnnBackend,
    }
    return factories[backend](path, fallback, threads, known)


# ------------------------------------------------------------------ decode and NMS (shared by all backends)


@dataclass(frozen=True)
class Detections:
    """Detections as arrays: boxes (N, 4) x1 y1 x2 y2, scores (N,), classes (N,) int."""

    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray

    @staticmethod
    def empty() -> Detections:
        return Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    def take(self, index: np.ndarray) -> Detections:
        return Detections(self.boxes[index], self.scores[index], self.classes[index])

    @staticmethod
    def concat(parts: Sequence[Detections]) -> Detections:
        if not parts:
            return Detections.empty()
        return Detections(
            np.concatenate([p.boxes for p in parts]).astype(np.float32),
            np.concatenate([p.scores for p in parts]).astype(np.float32),
            np.concatenate([p.classes for p in parts]).astype(np.int64),
        )


def box_iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one x1y1x2y2 box against many."""
    ix1 = np.maximum(box[0], boxes[:, 0])
    iy1 = np.maximum(box[1], boxes[:, 1])
    ix2 = np.minimum(box[2], boxes[:, 2])
    iy2 = np.minimum(box[3], boxes[:, 3])
    inter = np.clip(ix2 - ix1, 0, None) * np.clip(iy2 - iy1, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area + areas - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Greedy NMS; returns kept indices, best score first (ties keep the earlier box)."""
    order = np.argsort(-scores, kind="stable")
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        if order.size == 1:
            break
        rest = order[1:]
        order = rest[box_iou(boxes[i], boxes[rest]) <= iou]
    return np.asarray(keep, dtype=np.int64)


def batched_nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou: float) -> np.ndarray:
    """Class-wise NMS: boxes of different classes never suppress each other."""
    if boxes.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    offset = float(np.abs(boxes).max()) + 1.0
    shifted = boxes.astype(np.float64) + (classes.astype(np.float64) * offset)[:, None]
    return nms(shifted, scores, iou)


def decode(
    output: np.ndarray,
    conf: float = DEFAULT_CONF,
    iou: float = DEFAULT_IOU,
    max_det: int = MAX_DETECTIONS,
    agnostic: bool = False,
) -> Detections:
    """Raw YOLO output (4 + nc, anchors) -> thresholded, NMS'd detections in input pixels.

    NMS is class-wise, or across classes when `agnostic` (only where indices are matters)."""
    out = np.asarray(output, dtype=np.float32)
    out = out.reshape(out.shape[-2:]) if out.ndim > 2 else out
    if out.ndim != 2 or out.shape[0] < 5:
        raise ValueError(f"expected a (4 + classes, anchors) output, got shape {np.shape(output)}")
    class_scores = out[4:]
    classes = np.argmax(class_scores, axis=0)
    scores = class_scores[classes, np.arange(out.shape[1])]
    mask = scores > conf
    if not mask.any():
        return Detections.empty()
    xywh, scores, classes = out[:4, mask].T, scores[mask], classes[mask]
    if scores.shape[0] > MAX_CANDIDATES:
        best = np.argsort(-scores, kind="stable")[:MAX_CANDIDATES]
        xywh, scores, classes = xywh[best], scores[best], classes[best]
    boxes = np.empty_like(xywh)
    boxes[:, 0] = xywh[:, 0] - xywh[:, 2] / 2
    boxes[:, 1] = xywh[:, 1] - xywh[:, 3] / 2
    boxes[:, 2] = xywh[:, 0] + xywh[:, 2] / 2
    boxes[:, 3] = xywh[:, 1] + xywh[:, 3] / 2
    keep = (nms(boxes, scores, iou) if agnostic else batched_nms(boxes, scores, classes, iou))[:max_det]
    return Detections(boxes[keep], scores[keep], classes[keep].astype(np.int64))


# ------------------------------------------------------------------ tiling


def tile_starts(length: int, tile: int, overlap: int) -> list[int]:
    """Start offsets of tiles of `tile` px covering `length` px, neighbours overlapping by >= `overlap` px."""
    if length <= tile:
        return [0]
    stride = max(1, tile - overlap)
    n = math.ceil((length - tile) / stride) + 1
    return [round(i * (length - tile) / (n - 1)) for i in range(n)]


def tile_grid(
    width: int, height: int, tile_w: int, tile_h: int, overlap: float = DEFAULT_OVERLAP
) -> list[tuple[int, int]]:
    """Top-left corners (x0, y0) of the tiles covering a width x height image, row by row."""
    xs = tile_starts(width, tile_w, int(round(overlap * tile_w)))
    ys = tile_starts(height, tile_h, int(round(overlap * tile_h)))
    return [(x, y) for y in ys for x in xs]


def make_tile(image: np.ndarray, x0: int, y0: int, tile_w: int, tile_h: int) -> np.ndarray:
    """The tile of a BGR image at (x0, y0), padded right and bottom with grey where the image ends."""
    crop = image[y0 : y0 + tile_h, x0 : x0 + tile_w]
    if crop.shape[0] == tile_h and crop.shape[1] == tile_w:
        return crop
    out = np.full((tile_h, tile_w, 3), PAD_VALUE, dtype=np.uint8)
    out[: crop.shape[0], : crop.shape[1]] = crop
    return out


def to_tensor(tile_bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 HxWx3 -> (1, 3, H, W) float32 RGB in [0, 1], as Ultralytics feeds its models."""
    rgb = tile_bgr[:, :, ::-1].transpose(2, 0, 1)
    return np.ascontiguousarray(rgb, dtype=np.float32)[None] / np.float32(255.0)


def as_bgr(image: np.ndarray) -> np.ndarray:
    """Any 8-bit grey, BGR or BGRA array as contiguous BGR."""
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise ValueError(f"expected an 8-bit image, got {img.dtype}")
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    elif img.ndim == 3 and img.shape[2] == 4:
        img = img[:, :, :3]
    elif img.ndim == 3 and img.shape[2] == 1:
        img = np.repeat(img, 3, axis=2)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected an HxWx3 BGR image, got shape {np.shape(image)}")
    return np.ascontiguousarray(img)


def _inner_edge_cut(
    boxes: np.ndarray, x0: int, y0: int, tw: int, th: int, width: int, height: int, overlap: tuple[float, float]
) -> np.ndarray:
    """Mask of boxes (image coordinates) cut by an inner tile edge and small enough for a neighbour to hold."""
    ox, oy = overlap
    bw, bh = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    cut = np.zeros(boxes.shape[0], dtype=bool)
    if x0 > 0:
        cut |= (boxes[:, 0] <= x0 + EDGE_MARGIN) & (bw < ox)
    if x0 + tw < width:
        cut |= (boxes[:, 2] >= x0 + tw - EDGE_MARGIN) & (bw < ox)
    if y0 > 0:
        cut |= (boxes[:, 1] <= y0 + EDGE_MARGIN) & (bh < oy)
    if y0 + th < height:
        cut |= (boxes[:, 3] >= y0 + th - EDGE_MARGIN) & (bh < oy)
    return cut


def _min_overlap(starts: list[int], tile: int) -> float:
    if len(starts) < 2:
        return float(tile)
    return float(min(tile - (b - a) for a, b in zip(starts, starts[1:])))


# ------------------------------------------------------------------ the detector


class Detector:
    """Corner indices in BGR images of any size, through one backend."""

    def __init__(
        self,
        model: Path | str,
        backend: str = "onnx",
        conf: float | None = None,
        iou: float = DEFAULT_IOU,
        overlap: float = DEFAULT_OVERLAP,
        scale: float = 1.0,
        threads: int | None = None,
        agnostic: bool = False,
    ) -> None:
        """`agnostic`: find indices whatever their class (NMS across classes), for a second stage to name."""
        self.backend = load_backend(model, backend, threads)
        self.agnostic = agnostic
        fallback = read_metadata_file(self.backend.path.parent / METADATA_FILE)
        self.conf = float(conf if conf is not None else fallback.get("conf", DEFAULT_CONF))
        self.iou = iou
        self.overlap = overlap
        self.scale = scale
        self.last_timing: dict[str, float] = {}

    @property
    def input_size(self) -> tuple[int, int]:
        return self.backend.input_size

    @property
    def names(self) -> tuple[str, ...]:
        return self.backend.names

    def raw(self, tile_bgr: np.ndarray) -> np.ndarray:
        """The network's raw output (4 + nc, anchors) for one tile of exactly the input size."""
        return self.backend.run(to_tensor(tile_bgr))

    def detect_tile(self, tile_bgr: np.ndarray) -> Detections:
        """Detections in one tile of the input size, in tile pixels."""
        return decode(self.raw(tile_bgr), self.conf, self.iou, agnostic=self.agnostic)

    def detect_array(self, image_bgr: np.ndarray) -> Detections:
        """Detections in a whole image, tiled at native scale (or at `scale`), in image pixels."""
        t0 = time.perf_counter()
        image = as_bgr(image_bgr)
        if self.scale != 1.0:
            import cv2

            h, w = image.shape[:2]
            size = (max(1, round(w * self.scale)), max(1, round(h * self.scale)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA if self.scale < 1 else cv2.INTER_LINEAR)
        height, width = image.shape[:2]
        th, tw = self.input_size
        grid = tile_grid(width, height, tw, th, self.overlap)
        overlap = (
            _min_overlap(sorted({x for x, _ in grid}), tw),
            _min_overlap(sorted({y for _, y in grid}), th),
        )
        parts = []
        for x0, y0 in grid:
            det = self.detect_tile(make_tile(image, x0, y0, tw, th))
            if not len(det):
                continue
            boxes = det.boxes + np.array([x0, y0, x0, y0], dtype=np.float32)
            # clip to the real pixels of this tile (not its grey padding) and of the image
            boxes[:, [0, 2]] = np.clip(boxes[:, [0, 2]], x0, min(x0 + tw, width))
            boxes[:, [1, 3]] = np.clip(boxes[:, [1, 3]], y0, min(y0 + th, height))
            det = Detections(boxes, det.scores, det.classes)
            keep = ~_inner_edge_cut(boxes, x0, y0, tw, th, width, height, overlap)
            keep &= (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
            parts.append(det.take(np.flatnonzero(keep)))
        merged = Detections.concat(parts)
        if len(grid) > 1 and len(merged):
            if self.agnostic:
                keep = nms(merged.boxes, merged.scores, self.iou)
            else:
                keep = batched_nms(merged.boxes, merged.scores, merged.classes, self.iou)
            merged = merged.take(keep[:MAX_DETECTIONS])
        if self.scale != 1.0 and len(merged):
            merged = Detections(merged.boxes / np.float32(self.scale), merged.scores, merged.classes)
        self.last_timing = {"seconds": time.perf_counter() - t0, "tiles": float(len(grid))}
        return merged

    def detect(self, image_bgr: np.ndarray) -> list[Corner]:
        """Corner-index detections in a BGR image, best first."""
        det = self.detect_array(image_bgr)
        order = np.argsort(-det.scores, kind="stable")
        return [
            Corner(
                self.names[int(det.classes[i])],
                float(det.scores[i]),
                (float(det.boxes[i, 0]), float(det.boxes[i, 1]), float(det.boxes[i, 2]), float(det.boxes[i, 3])),
            )
            for i in order
        ]
