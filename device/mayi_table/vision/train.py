"""Train the corner-index detector with Ultralytics YOLO from a YAML, fully offline, resumable.

The recipe (`vision_models/recipe.yaml`) is sized for two CPU cores: yolo11n built from its YAML
(no pretrained weights exist here), native-scale 320 px crops, no left-right flips (a mirrored
index is not a card), rotations come from the renderer. Ultralytics writes `last.pt` every epoch,
so an interrupted run resumes where it stopped (`--resume`), and a finished run can be extended
with more epochs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .offline import MODELS_DIR, prepare_ultralytics

MODELS = MODELS_DIR
RECIPE = MODELS / "recipe.yaml"
INDEX_RECIPE = MODELS / "index_recipe.yaml"


def load_recipe(path: Path = RECIPE) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"{path}: cannot read the recipe ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({' '.join(str(e).split())})") from None
    if not isinstance(data, dict) or "train" not in data:
        raise ValueError(f"{path}: the recipe needs a 'train' mapping")
    return data


def train(
    data_yaml: Path,
    run_dir: Path,
    epochs: int | None = None,
    resume: bool = False,
    threads: int = 2,
    recipe: Path = RECIPE,
    init_from: Path | None = None,
    device: str = "cpu",
) -> Path:
    """Train (or resume) and return the best weights' path. `init_from`: start a new run from these
    weights (e.g. a model trained on part of the data) instead of from scratch. `device`: "cpu", or a
    CUDA device number ("0") where a machine has a GPU."""
    prepare_ultralytics()
    import torch
    import ultralytics.utils.torch_utils as tu
    from ultralytics import YOLO

    tu.NUM_THREADS = threads  # ultralytics drops torch to one thread on a 2-core machine
    torch.set_num_threads(threads)
    args = dict(load_recipe(recipe)["train"])
    model_yaml = args.pop("model", "yolo11n.yaml")
    if epochs is not None:
        args["epochs"] = epochs
    run_dir = run_dir.resolve()  # Ultralytics puts a relative project under its own runs folder
    last = run_dir / "weights" / "last.pt"
    fresh = dict(
        data=str(data_yaml),
        project=str(run_dir.parent),
        name=run_dir.name,
        exist_ok=True,
        device=device,
        plots=False,
        **args,
    )
    if resume and last.exists():
        model = YOLO(str(last))
        ckpt = torch.load(str(last), map_location="cpu", weights_only=False)
        if ckpt.get("epoch", -1) == -1 or int(ckpt["epoch"]) + 1 >= args["epochs"]:
            # a finished run: train on from its weights for more epochs
            model.train(pretrained=str(last), **fresh)
        else:
            model.train(resume=True, device=device, plots=False)  # an interrupted run: carry on
    elif init_from is not None:
        YOLO(str(init_from)).train(pretrained=str(init_from), **fresh)
    else:
        YOLO(model_yaml).train(**fresh)
    return run_dir / "weights" / "best.pt"


def export(weights: Path, out_dir: Path = MODELS, imgsz: int = 320, stem: str = "corners") -> dict[str, Path]:
    """Copy the weights to `out_dir/<stem>.pt` and export ONNX and NCNN beside them."""
    prepare_ultralytics()
    from ultralytics import YOLO

    out_dir.mkdir(parents=True, exist_ok=True)
    pt = out_dir / f"{stem}.pt"
    if weights.resolve() != pt.resolve():
        shutil.copyfile(weights, pt)
    model = YOLO(str(pt))
    onnx_path = Path(model.export(format="onnx", imgsz=imgsz, simplify=False, dynamic=False))
    if getattr(model, "task", None) == "classify":
        add_features_output(onnx_path)
    model = YOLO(str(pt))
    ncnn_path = Path(model.export(format="ncnn", imgsz=imgsz))
    return {"pt": pt, "onnx": onnx_path, "ncnn": ncnn_path}


def add_features_output(onnx_path: Path) -> str:
    """Make the input of a classifier's last matrix product (the features its last layer reads) the
    ONNX model's second output, beside its probabilities, so that the device reads both from one run
    (the deck's jokers, jokers.py) without the onnx package; returns that output's name."""
    import onnx

    model = onnx.load(str(onnx_path))
    products = [n for n in model.graph.node if n.op_type in ("Gemm", "MatMul")]
    if not products:
        raise ValueError(f"{onnx_path}: no matrix product, not a classification network")
    name = products[-1].input[0]
    if name not in {o.name for o in model.graph.output}:
        model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
        onnx.save(model, str(onnx_path))
    return str(name)
