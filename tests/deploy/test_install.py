"""The Raspberry Pi installer (firmware_config/install.sh) and the systemd unit (systemd/mayi-table.service).

The installer runs for real with ``--root TMP`` from a small copy of the repository, with fake apt-get,
useradd, systemctl, ... first on PATH that record any call, so a test proves they were only printed.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL = Path("firmware_config/install.sh")
UNIT = REPO / "systemd" / "mayi-table.service"
FRAGMENT_MARKER = "# >>> mayi-table"
SYSTEM_COMMANDS = ("apt-get", "apt", "useradd", "usermod", "groupadd", "systemctl", "chown", "pip", "python3")

EXPECTED_PRINTED = [
    "would run: apt-get install -y python3-venv python3-picamera2 fonts-dejavu-core fonts-dejavu-extra",
    "would run: useradd --system --user-group --groups video,gpio",
    "would run: python3 -m venv --system-site-packages /opt/mayi-table/venv",
    "would run: /opt/mayi-table/venv/bin/pip install '/opt/mayi-table/app[pi]'",
    "would run: systemctl daemon-reload",
    "would run: systemctl enable --now mayi-table",
]

# files of the repository copy: kept ones, and ones the installer must leave out
KEPT = [
    "README.md",
    "device/mayi_table/__init__.py",
    "device/mayi_table/data/keep.txt",  # only top-level data/ is training output
    "vision_models/corners_ncnn_model/model.ncnn.param",
    "vision_models/corners_ncnn_model/model.ncnn.bin",
]
LEFT_OUT = [
    ".venv/bin/python",
    ".git/HEAD",
    ".mypy_cache/x.json",
    ".pytest_cache/v",
    "device/mayi_table/__pycache__/cli.cpython-311.pyc",
    "data/corners/images/a.png",
    "runs/corners/weights/best.pt",
    "vision_models/ultralytics_config/Arial.ttf",
    "mayi_table.egg-info/PKG-INFO",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small checkout: the real installer, unit, config and fragment, plus files to copy or leave out."""
    root = tmp_path / "repo"
    for rel in ("firmware_config", "systemd"):
        shutil.copytree(REPO / rel, root / rel, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    for rel in KEPT + LEFT_OUT:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"contents of {rel}\n")
    return root


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    """Stand-ins for the system commands: each call is appended to calls.log."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    log = tmp_path / "calls.log"
    for name in SYSTEM_COMMANDS:
        script = folder / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexit 0\n')
        script.chmod(0o755)
    return folder


def run_install(repo: Path, fake_bin: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    return subprocess.run(
        ["bash", str(repo / INSTALL), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def calls(fake_bin: Path) -> str:
    log = fake_bin.parent / "calls.log"
    return log.read_text() if log.exists() else ""


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under root: its mode and its bytes."""
    return {
        str(p.relative_to(root)): (stat.S_IMODE(p.stat().st_mode), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------------------------ installer


def test_root_install_places_every_file_and_runs_no_system_command(repo: Path, fake_bin: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    done = run_install(repo, fake_bin, "--root", str(target))
    assert done.returncode == 0, done.stderr

    config = target / "etc/mayi-table/config.yaml"
    unit = target / "etc/systemd/system/mayi-table.service"
    boot = target / "boot/firmware/config.txt"
    app = target / "opt/mayi-table/app"
    assert config.read_bytes() == (repo / "firmware_config/mayi-table.yaml").read_bytes()
    assert unit.read_bytes() == (repo / "systemd/mayi-table.service").read_bytes()
    assert boot.read_bytes() == (repo / "firmware_config/config.txt.fragment").read_bytes()
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    assert stat.S_IMODE(unit.stat().st_mode) == 0o644

    for rel in KEPT:
        assert (app / rel).read_text() == f"contents of {rel}\n", rel
    for rel in LEFT_OUT:
        assert not (app / rel).exists(), rel
    for rel in ("firmware_config/install.sh", "systemd/mayi-table.service", "pyproject.toml"):
        assert (app / rel).read_bytes() == (repo / rel).read_bytes()
    assert not (target / "opt/mayi-table/app.new").exists()
    assert not (target / "opt/mayi-table/venv").exists()  # created on the Pi, not under --root

    # exactly these places, nothing else
    placed = {str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()}
    assert {p for p in placed if not p.startswith("opt/mayi-table/app/")} == {
        "etc/mayi-table/config.yaml",
        "etc/systemd/system/mayi-table.service",
        "boot/firmware/config.txt",
    }

    for line in EXPECTED_PRINTED:
        assert line in done.stdout, line
    assert "would run: chown root:mayi-table /etc/mayi-table/config.yaml" in done.stdout
    assert calls(fake_bin) == ""  # printed, never executed


def test_second_run_gives_the_same_files(repo: Path, fake_bin: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    assert run_install(repo, fake_bin, "--root", str(target)).returncode == 0
    first = snapshot(target)
    second_run = run_install(repo, fake_bin, "--root", str(target))
    assert second_run.returncode == 0, second_run.stderr
    assert snapshot(target) == first
    assert (target / "boot/firmware/config.txt").read_text().count(FRAGMENT_MARKER) == 1
    assert "already has the mayi-table block" in second_run.stdout
    assert calls(fake_bin) == ""


def test_config_is_never_overwritten_and_boot_config_gets_the_block_once(
    repo: Path, fake_bin: Path, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    boot = target / "boot/firmware/config.txt"
    boot.parent.mkdir(parents=True)
    original_boot = "dtparam=audio=on\n[cm4]\notg_mode=1"  # no newline at the end, as edited by hand
    boot.write_text(original_boot)

    assert run_install(repo, fake_bin, "--root", str(target)).returncode == 0
    config = target / "etc/mayi-table/config.yaml"
    family = config.read_text().replace('host_pin: "0000"', 'host_pin: "4711"')
    config.write_text(family)
    unit = target / "etc/systemd/system/mayi-table.service"
    unit.write_text("stale\n")  # the unit, unlike the config, is the installer's own

    again = run_install(repo, fake_bin, "--root", str(target))
    assert again.returncode == 0, again.stderr
    assert config.read_text() == family
    assert "kept:" in again.stdout
    assert unit.read_bytes() == (repo / "systemd/mayi-table.service").read_bytes()

    fragment = (repo / "firmware_config/config.txt.fragment").read_text()
    text = boot.read_text()
    assert text == original_boot + "\n" + fragment
    assert text.count(FRAGMENT_MARKER) == 1
    assert [line for line in text.splitlines() if line == "camera_auto_detect=1"] == ["camera_auto_detect=1"]
    assert calls(fake_bin) == ""


def test_files_removed_from_the_checkout_leave_the_device_too(repo: Path, fake_bin: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    extra = repo / "device/mayi_table/old_module.py"
    extra.write_text("x = 1\n")
    assert run_install(repo, fake_bin, "--root", str(target)).returncode == 0
    assert (target / "opt/mayi-table/app/device/mayi_table/old_module.py").exists()
    extra.unlink()
    assert run_install(repo, fake_bin, "--root", str(target)).returncode == 0
    assert not (target / "opt/mayi-table/app/device/mayi_table/old_module.py").exists()


def test_dry_run_writes_nothing(repo: Path, fake_bin: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    done = run_install(repo, fake_bin, "--dry-run", "--root", str(target))
    assert done.returncode == 0, done.stderr
    assert not target.exists()
    assert "DRY RUN" in done.stdout
    for line in EXPECTED_PRINTED:
        assert line in done.stdout, line
    assert (
        f"would append {repo}/firmware_config/config.txt.fragment to {target}/boot/firmware/config.txt" in done.stdout
    )
    assert calls(fake_bin) == ""


def test_refuses_to_install_off_a_raspberry_pi(repo: Path, fake_bin: Path) -> None:
    model = Path("/proc/device-tree/model")
    if model.exists() and "Raspberry Pi" in model.read_text(errors="replace"):
        pytest.skip("this machine is a Raspberry Pi")
    done = run_install(repo, fake_bin)
    assert done.returncode == 2
    assert "this is not a Raspberry Pi" in done.stderr
    assert "--dry-run" in done.stderr and "--root DIR" in done.stderr
    assert "Nothing was changed" in done.stderr
    assert done.stdout == ""
    assert calls(fake_bin) == ""


@pytest.mark.parametrize("args", [["--bogus"], ["--root"], ["--root="]])
def test_bad_arguments(repo: Path, fake_bin: Path, args: list[str]) -> None:
    done = run_install(repo, fake_bin, *args)
    assert done.returncode == 2
    assert done.stderr.startswith("install.sh: ")
    assert calls(fake_bin) == ""


def test_help(repo: Path, fake_bin: Path) -> None:
    done = run_install(repo, fake_bin, "--help")
    assert done.returncode == 0
    assert "--dry-run" in done.stdout and "--root DIR" in done.stdout


# ------------------------------------------------------------------ the unit


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """systemd's INI dialect: sections of keys that may repeat (DeviceAllow=, SystemCallFilter=)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"setting outside a section: {line}"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def test_unit_settings() -> None:
    unit = parse_unit(UNIT)
    service, head = unit["Service"], unit["Unit"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert service["ExecStart"] == ["/opt/mayi-table/venv/bin/mayi-table run --config /etc/mayi-table/config.yaml"]
    assert service["WatchdogSec"] == ["30"]
    assert service["Restart"] == ["on-failure"]
    assert service["RestartSec"] == ["5"]
    assert "StartLimitIntervalSec" in head and "StartLimitBurst" in head
    assert service["User"] == ["mayi-table"] and service["Group"] == ["mayi-table"]
    assert set(service["SupplementaryGroups"][0].split()) == {"video", "gpio"}
    assert service["StateDirectory"] == ["mayi-table"]
    assert service["ConfigurationDirectory"] == ["mayi-table"]
    assert service["PrivateDevices"] == ["no"] and service["DevicePolicy"] == ["closed"]
    allowed = " ".join(service["DeviceAllow"])
    for device in ("char-video4linux", "char-media", "char-dma_heap", "char-gpiochip", "/dev/gpiomem"):
        assert device in allowed, device
    assert set(service["RestrictAddressFamilies"][0].split()) == {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}
    assert service["IPAddressDeny"] == ["any"]
    assert {"localhost", "link-local", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"} <= set(
        service["IPAddressAllow"][0].split()
    )
    assert service["CapabilityBoundingSet"] == [""]
    assert service["MemoryMax"] == ["600M"]
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_the_config_fragment_and_default_config_agree_on_the_pins() -> None:
    import yaml

    config = yaml.safe_load((REPO / "firmware_config/mayi-table.yaml").read_text())
    fragment = (REPO / "firmware_config/config.txt.fragment").read_text()
    settings: dict[str, str] = {}  # "ip,pu" -> "5,6,13,..."
    for line in fragment.splitlines():
        if line.startswith("gpio="):
            pins, mode = line.removeprefix("gpio=").split("=")
            settings[mode] = pins
    pulled_up = {int(p) for p in settings["ip,pu"].split(",")}
    driven_low = {int(p) for p in settings["op,dl"].split(",")}
    assert pulled_up == {seat["button"] for seat in config["seats"]}
    assert driven_low == {seat["led"] for seat in config["seats"]}
    assert fragment.splitlines()[0].startswith(FRAGMENT_MARKER)
    assert "camera_auto_detect=1" in fragment.splitlines()


SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd_analyze = pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")


@needs_systemd_analyze
def test_unit_exposure_is_at_most_2() -> None:
    assert SYSTEMD_ANALYZE is not None
    done = subprocess.run(
        [SYSTEMD_ANALYZE, "security", "--offline=true", str(UNIT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    found = re.search(r"Overall exposure level for mayi-table\.service: (\d+(?:\.\d+)?)", done.stdout)
    assert found, done.stdout + done.stderr
    assert float(found.group(1)) <= 2.0, done.stdout


@needs_systemd_analyze
def test_unit_verifies(tmp_path: Path) -> None:
    """`systemd-analyze verify`, with ExecStart pointed at /bin/true (the venv exists only on the Pi)."""
    assert SYSTEMD_ANALYZE is not None
    text = UNIT.read_text()
    assert "ExecStart=/opt/mayi-table/venv/bin/mayi-table " in text
    copy = tmp_path / "mayi-table.service"
    copy.write_text(text.replace("ExecStart=/opt/mayi-table/venv/bin/mayi-table ", "ExecStart=/bin/true "))
    done = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mayi-table.service" not in done.stderr, done.stderr  # no warning about the unit
