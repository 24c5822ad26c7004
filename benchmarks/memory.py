"""Resident memory of the running device on the built-in demo, per recogniser backend, in one run.

Each backend runs `mayi-table demo` (the whole device: rendered camera, recogniser worker, table
reader, referee, journal, web server) as its own process until it has processed `--frames` frames;
its resident memory is sampled from /proc while it runs, and its peak (VmHWM) is read before it is
stopped. The lean backends (onnx, ncnn) must stay under the Pi budget (400 MB) and never load torch
(checked in the process's memory map).

    .venv/bin/python benchmarks/memory.py [--frames 12] [--backends onnx,ncnn,ultralytics]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_MB = 400.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def loads_torch(pid: int) -> bool:
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    return "libtorch" in maps


def frames_processed(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2) as r:
            state = json.load(r)
    except (OSError, ValueError):
        return -1
    return int((state.get("device") or {}).get("frames_processed") or 0)


def measure(backend: str, frames: int, timeout: float) -> dict[str, object]:
    port = free_port()
    exe = Path(sys.executable).parent / "mayi-table"
    cmd = [str(exe), "demo", "--backend", backend, "--port", str(port), "--seed", "3", "--exit-at-end"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples: list[int] = []
    done = -1
    torch = False
    t0 = time.monotonic()
    try:
        while proc.poll() is None and time.monotonic() - t0 < timeout:
            samples.append(status_kb(proc.pid, "VmRSS"))
            torch = torch or loads_torch(proc.pid)
            done = frames_processed(port)
            if done >= frames:
                break
            time.sleep(1.0)
        peak = status_kb(proc.pid, "VmHWM") if proc.poll() is None else max(samples, default=0)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    err = proc.stderr.read() if proc.stderr else ""
    if done < frames:
        return {"backend": backend, "error": f"processed {done} frames in {timeout:.0f} s; {err.strip()[-300:]}"}
    return {
        "backend": backend,
        "frames": done,
        "peak_rss_mb": round(peak / 1024, 1),
        "median_rss_mb": round(sorted(samples)[len(samples) // 2] / 1024, 1) if samples else None,
        "torch_loaded": torch,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=12, help="frames the device processes before it is measured")
    ap.add_argument("--backends", default="onnx,ncnn,ultralytics")
    ap.add_argument("--timeout", type=float, default=400.0, help="seconds per backend at most")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    rows = [measure(b, args.frames, args.timeout) for b in args.backends.split(",")]
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"running device on the demo, {args.frames} frames each (1920x1080), peak resident memory")
        print(f"{'backend':<12} {'peak MB':>9} {'median MB':>10} {'torch':>6}")
        for r in rows:
            if "error" in r:
                print(f"{r['backend']:<12} error: {r['error']}")
            else:
                print(f"{r['backend']:<12} {r['peak_rss_mb']:>9} {r['median_rss_mb']:>10} {str(r['torch_loaded']):>6}")
        ok = [r for r in rows if "error" not in r]
        ultra = next((r for r in ok if r["backend"] == "ultralytics"), None)
        for r in ok:
            if r["backend"] != "ultralytics" and ultra:
                ratio = float(r["peak_rss_mb"]) / float(ultra["peak_rss_mb"])  # type: ignore[arg-type]
                print(f"{r['backend']} / ultralytics peak memory: {ratio:.2f}")
    lean = [r for r in rows if r["backend"] in ("onnx", "ncnn")]
    bad = [r for r in lean if "error" in r or float(r["peak_rss_mb"]) > BUDGET_MB or r["torch_loaded"]]  # type: ignore[arg-type]
    if bad:
        print(f"FAIL: lean backend over {BUDGET_MB:.0f} MB, loading torch, or not running: {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
