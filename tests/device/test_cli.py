"""`mayi-table run`, `export` and `replay` as a family's table meets them: a bad config, a missing
model or a busy port is one clear line and exit status 2, never a traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from mayi_table.launch import ORACLE_ENV, ROUNDS_ENV

from .conftest import DirectRun, write_config

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    full.update(env or {})
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "device"), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "mayi_table.cli", *args], env=full, capture_output=True, text=True, timeout=60
    )


def _one_clear_line(res: subprocess.CompletedProcess[str], *words: str) -> None:
    out = (res.stdout + res.stderr).strip()
    assert res.returncode == 2, out
    assert "Traceback" not in out
    assert len(out.splitlines()) == 1, out
    assert out.startswith("error: ") and all(w in out for w in words), out


def test_check_config_passes_the_shipped_config_and_names_the_line_of_a_broken_one(tmp_path: Path) -> None:
    shipped = ROOT / "firmware_config" / "mayi-table.yaml"
    res = _cli("run", "--check-config", "--config", str(shipped))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "OK" in res.stdout

    broken = tmp_path / "broken.yaml"
    lines = shipped.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("port:"))
    lines[at] = lines[at].replace("8000", "80000")
    broken.write_text("\n".join(lines) + "\n")
    _one_clear_line(_cli("run", "--check-config", "--config", str(broken)), f"{broken}:{at + 1}:", "web.port")


def test_run_without_the_model_folder_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    text = (ROOT / "firmware_config" / "mayi-table.yaml").read_text()
    text = text.replace("/opt/mayi-table/app/vision_models", str(tmp_path / "no-models"))
    text = text.replace("/var/lib/mayi-table", str(tmp_path))
    config.write_text(text)
    _one_clear_line(_cli("run", "--config", str(config)), "no-models")
    assert not (tmp_path / "journal.sqlite3").exists()  # it stopped before touching the journal


def test_run_on_a_busy_web_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = write_config(tmp_path, port, tmp_path / "journal.sqlite3")
        res = _cli("run", "--config", str(config), env={ORACLE_ENV: "1", ROUNDS_ENV: "1"})
    _one_clear_line(res, f"127.0.0.1:{port}")


def test_export_writes_a_record_that_replay_accepts(tmp_path: Path, direct_run: DirectRun) -> None:
    out = tmp_path / "round.mayi.jsonl"
    res = _cli("export", "--journal", str(direct_run.journal), str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    res = _cli("replay", "--json", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    result = json.loads(res.stdout)
    assert result["ok"] is True
    lines = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert len(lines) == len(direct_run.events)  # every accepted event, nothing else
    assert _cli("export", "--journal", str(tmp_path / "missing.sqlite3"), str(out)).returncode != 0
