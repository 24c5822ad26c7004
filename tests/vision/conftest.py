from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def yolo_fixture(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, Path | None]:
    """The deterministic fixture model (built once per test run, shared by xdist workers through a lock)."""
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    pytest.importorskip("onnxruntime")
    from .helpers import build_fixture_model

    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # an xdist worker
        root = root.parent  # shared by all workers of this run
    folder = root / "yolo_fixture"
    done = root / "yolo_fixture.json"
    with open(root / "yolo_fixture.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                t0 = time.perf_counter()
                paths = build_fixture_model(folder)
                record = {k: (str(v) if v else None) for k, v in paths.items()}
                record["seconds"] = f"{time.perf_counter() - t0:.1f}"
                done.write_text(json.dumps(record))
            record = json.loads(done.read_text())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return {k: (Path(v) if v else None) for k, v in record.items() if k != "seconds"}
