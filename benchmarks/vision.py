"""Recogniser speed and memory, measured side by side in one run on the same model and frame.

    .venv/bin/python benchmarks/vision.py [--model vision_models] [--runs 5] [--threads 1]

For one rendered 1920x1080 table frame it prints the milliseconds per frame of the whole
recogniser (tiling, detection, pairing) with each backend, the milliseconds of a plain
Ultralytics PyTorch `predict` of the same model on the same frame at full size, the ratio of the
fastest lean backend (onnx, ncnn) to that `predict`, and the peak resident memory of a separate
process that only runs the lean backend (and must not import torch). The onnx recogniser is also
timed without its camera-shake check (`deshake=False`), and on the frame shaken (a 6 px streak)
with and without it: what the check costs a steady frame, and the sharpened second reading a shaken one;
and told the deck's jokers (jokers.py: every index then read with its features too), and without the
tens reader (classify.py: the second classifier asked where the first is unsure).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "device"))

LEAN_PROBE = r"""
import json, sys, time
sys.path.insert(0, {device!r})
import numpy as np
from mayi_table.vision.recognize import Recognizer
frame = np.load({frame!r})
r = Recognizer({model!r}, {backend!r}, threads={threads})
for _ in range({runs}):
    r.recognize(frame)
# VmHWM: this process's own peak (ru_maxrss would keep the parent's peak across exec)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({{"peak_rss_mb": hwm / 1024,
                  "torch_imported": "torch" in sys.modules, "ultralytics_imported": "ultralytics" in sys.modules}}))
"""


def ms_per_call(fn, runs: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=ROOT / "vision_models")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="threads per backend (the same for all)")
    args = ap.parse_args()

    import numpy as np

    from mayi_table.vision.offline import prepare_ultralytics
    from mayi_table.vision.recognize import Recognizer
    from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
    from mayi_table.vision.render.scene import render_table

    frame = render_table(2026, HELD_OUT_DESIGNS).image
    assert frame.shape[:2] == (1080, 1920)
    results: dict[str, float] = {}
    for backend in ("ultralytics", "onnx", "ncnn"):
        rec = Recognizer(args.model, backend, threads=args.threads)
        results[backend] = ms_per_call(lambda rec=rec: rec.recognize(frame), args.runs)
    # what the shake check costs a steady frame, and a shaken frame its sharpened second reading
    import cv2

    from mayi_table.vision.shake import streak_kernel

    unchecked = Recognizer(args.model, "onnx", threads=args.threads, deshake=False)
    results["onnx, no shake check"] = ms_per_call(lambda: unchecked.recognize(frame), args.runs)
    alone = Recognizer(args.model, "onnx", threads=args.threads, tens_reader=False)
    results["onnx, no tens reader"] = ms_per_call(lambda: alone.recognize(frame), args.runs)
    shaken = cv2.filter2D(frame, -1, streak_kernel(6, 40.0))
    checked = Recognizer(args.model, "onnx", threads=args.threads)
    results["onnx, the frame shaken (6 px streak)"] = ms_per_call(lambda: checked.recognize(shaken), args.runs)
    results["onnx, the frame shaken, no shake check"] = ms_per_call(lambda: unchecked.recognize(shaken), args.runs)
    from mayi_table.vision.render.scene import render_jokers

    told = Recognizer(args.model, "onnx", threads=args.threads)
    told.jokers = told.learn_jokers([render_jokers(99, HELD_OUT_DESIGNS[0]).image])
    results["onnx, told the deck's jokers"] = ms_per_call(lambda: told.recognize(frame), args.runs)
    prepare_ultralytics()
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(args.threads)
    model = YOLO(str(args.model / "corners.pt"))
    # the same model through Ultralytics' own predict: over the very tiles the recogniser cuts, and
    # (for reference) on the whole frame at once, which sees fewer pixels since tiles overlap
    from mayi_table.vision.detect import make_tile, tile_grid

    h, w = frame.shape[:2]
    th, tw = Recognizer(args.model, "onnx").detector.input_size
    tiles = [make_tile(frame, x, y, tw, th) for x, y in tile_grid(w, h, tw, th, 0.25)]
    lean_rec = Recognizer(args.model, "onnx")
    crops: list = []
    boxes: list = []
    classifier = tens = None
    tens_crops: list = []
    if lean_rec.classifier is not None:
        # the second stage: the index classifier through predict, on the very crops the recogniser cuts
        # (each index framed and turned as the recogniser reads it), and the tens reader's on those of
        # the indices the recogniser asks it about (the frame is steady)
        from mayi_table.vision.classify import index_views

        classifier = YOLO(str(args.model / "index.pt"), task="classify")
        size = lean_rec.classifier.size
        boxes = [c.box for c in lean_rec.detector.detect(frame)]
        crops = [view for box in boxes for view in index_views(frame, box, size)]
        if lean_rec.classifier.tens is not None:
            tens = YOLO(str(args.model / "index_tens.pt"), task="classify")
            first = lean_rec.classifier
            unsure = [b for b in boxes if first.asks_tens(first.mean_reading(frame, b, size)[0], None)]
            tens_crops = [view for box in unsure for view in index_views(frame, box, size)]

    def predict_same() -> None:
        for t in tiles:
            model.predict(t, imgsz=th, device="cpu", verbose=False)
        for c in crops:
            assert classifier is not None
            classifier.predict(c, imgsz=c.shape[0], device="cpu", verbose=False)
        for c in tens_crops:
            assert tens is not None
            tens.predict(c, imgsz=c.shape[0], device="cpu", verbose=False)

    results["ultralytics predict (same tiles)"] = ms_per_call(predict_same, args.runs)
    results["ultralytics predict (full frame)"] = ms_per_call(
        lambda: model.predict(frame, imgsz=1920, device="cpu", verbose=False), args.runs
    )
    lean = min(("onnx", "ncnn"), key=lambda b: results[b])
    frame_file = Path("/tmp/mayi_bench_frame.npy")
    np.save(frame_file, frame)
    memory = {}
    for backend in ("onnx", "ncnn"):
        probe = LEAN_PROBE.format(
            device=str(ROOT / "device"),
            frame=str(frame_file),
            model=str(args.model),
            backend=backend,
            threads=args.threads,
            runs=3,
        )
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ}, check=True
        )
        memory[backend] = json.loads(out.stdout.strip().splitlines()[-1])
    stage = f", detector + index classifier on {len(crops)} crops ({len(boxes)} indices)" if crops else ""
    if tens_crops:
        stage += f", tens reader on {len(tens_crops)}"
    print(f"one 1920x1080 frame, {args.threads} thread(s), median of {args.runs} runs{stage}:")
    for name, ms in results.items():
        print(f"  {name:34s} {ms:8.1f} ms")
    for ref in ("ultralytics predict (same tiles)", "ultralytics predict (full frame)"):
        base = results[ref]
        print(f"  fastest lean backend ({lean}) / {ref}: {results[lean] / base:.2f}")
    for backend, m in memory.items():
        print(
            f"  peak RSS of a process running only {backend}: {m['peak_rss_mb']:.0f} MB "
            f"(torch imported: {m['torch_imported']}, ultralytics imported: {m['ultralytics_imported']})"
        )


if __name__ == "__main__":
    main()
