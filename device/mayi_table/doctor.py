"""The checks behind ``mayi-table doctor``: is this Raspberry Pi ready to referee?

Each check is a function that takes what it inspects as parameters (the config values, a module
finder, a command runner, a camera lister, ...) and returns a :class:`Check`, so every failure can be
faked in a test without a camera, GPIO pins or systemd. The defaults look at the real machine.
Nothing heavy is imported: libraries are located with :func:`importlib.util.find_spec`, and only the
camera and pin probes import ``picamera2``/``gpiozero``/``cv2``, inside the probe.

:func:`run_all` runs every check in order from the config file; :func:`format_report` prints them::

    OK    config: /etc/mayi-table/config.yaml (profile petras, 6 seats)
    FAIL  camera: libcamera lists no camera
          fix: check the ribbon cable (contacts facing the right way), then `rpicam-hello --list-cameras`
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Protocol, Sequence

import yaml

# ------------------------------------------------------------------ types


@dataclass(frozen=True)
class Check:
    """One check's verdict: ``fix`` says what to do about a failure (empty when ``ok``)."""

    name: str
    ok: bool
    message: str
    fix: str = ""


class RunResult(NamedTuple):
    returncode: int
    stdout: str
    stderr: str = ""


Runner = Callable[[Sequence[str]], RunResult]
SpecFinder = Callable[[str], object | None]
CameraLister = Callable[[], Sequence[Mapping[str, Any]]]
CameraOpener = Callable[[str | int], bool]
PinFactoryProbe = Callable[[], str]


class _FreeSpace(Protocol):
    @property
    def free(self) -> int: ...


DiskUsage = Callable[[str], _FreeSpace]  # shutil.disk_usage


# ------------------------------------------------------------------ what the device expects

DEFAULT_CONFIG = Path("/etc/mayi-table/config.yaml")
DEFAULT_CONFIG_SOURCE = Path("/opt/mayi-table/app/firmware_config/mayi-table.yaml")
DEFAULT_MODEL_DIR = Path("/opt/mayi-table/app/vision_models")
DEFAULT_JOURNAL = Path("/var/lib/mayi-table/journal.sqlite3")
DEFAULT_JOKERS = Path("/var/lib/mayi-table/jokers.npz")
SERVICE = "mayi-table"
REQUIRED_KEYS: tuple[str, ...] = ("profile", "seats", "camera", "detector", "web", "host_pin", "journal")
MIN_FREE_BYTES = 200 * 1000 * 1000
BCM_PINS = range(2, 28)  # the 40-pin header's GPIO 2..27
DEFAULT_HOST_PIN = "0000"

# what each detector backend needs: (file or folder under the model folder, files inside it, library)
# (the same layout as mayi_table.vision.detect.MODEL_FILES; kept here so the doctor imports no numpy)
BACKEND_NEEDS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "onnx": ("corners.onnx", (), "onnxruntime"),
    "ncnn": ("corners_ncnn_model", ("model.ncnn.param", "model.ncnn.bin"), "ncnn"),
    "ultralytics": ("corners.pt", (), "ultralytics"),
}

REINSTALL = "sudo /opt/mayi-table/app/firmware_config/install.sh"
PIP_PI = "sudo /opt/mayi-table/venv/bin/pip install '/opt/mayi-table/app[pi]'"


# ------------------------------------------------------------------ default probes (the real machine)


def subprocess_runner(args: Sequence[str]) -> RunResult:
    """Run a command for a check: output captured, never raises, 10 s at most."""
    try:
        done = subprocess.run(list(args), capture_output=True, text=True, timeout=10, check=False)
    except FileNotFoundError:
        return RunResult(127, "", f"{args[0]}: command not found")
    except subprocess.TimeoutExpired:
        return RunResult(124, "", f"{args[0]}: timed out")
    except OSError as exc:
        return RunResult(126, "", f"{args[0]}: {exc}")
    return RunResult(done.returncode, done.stdout, done.stderr)


def find_spec(name: str) -> object | None:
    """importlib.util.find_spec that answers None instead of raising (locates, does not import)."""
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def picamera2_cameras() -> Sequence[Mapping[str, Any]]:
    """The cameras libcamera sees, through ``Picamera2.global_camera_info()`` (ImportError without it)."""
    module = importlib.import_module("picamera2")
    cameras: Sequence[Mapping[str, Any]] = module.Picamera2.global_camera_info()
    return cameras


def opencv_opens(source: str | int) -> bool:
    """Whether OpenCV opens ``source`` (a device index, a /dev/video path or a URL) and reads a frame."""
    cv2 = importlib.import_module("cv2")
    capture = cv2.VideoCapture(source)
    try:
        return bool(capture.isOpened()) and bool(capture.read()[0])
    finally:
        capture.release()


def gpiozero_pin_factory() -> str:
    """The class name of the pin factory gpiozero picks here (raises when none works).

    lgpio writes its notification pipes into ``LG_WD`` (default: the working directory), so the probe
    points it at the temporary folder when unset; the service sets it to its state directory.
    """
    os.environ.setdefault("LG_WD", tempfile.gettempdir())
    gpiozero = importlib.import_module("gpiozero")
    device = gpiozero.Device
    ensure = getattr(device, "ensure_pin_factory", None)
    if callable(ensure):
        ensure()
    elif device.pin_factory is None:
        device.pin_factory = device._default_pin_factory()
    return type(device.pin_factory).__name__


# ------------------------------------------------------------------ config


def load_config(path: Path | str) -> tuple[Check, dict[str, Any] | None]:
    """Read the device config: the verdict, and the mapping when it is usable."""
    p = Path(path)
    fix_install = f"copy the default: sudo install -m 0640 -g {SERVICE} {DEFAULT_CONFIG_SOURCE} {p}"
    if not p.is_file():
        return Check("config", False, f"{p} does not exist", fix_install), None
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return Check("config", False, f"cannot read {p}: {exc}", f"sudo chmod 0640 {p}; sudo chgrp {SERVICE} {p}"), None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        return Check("config", False, f"{p} is not valid YAML{at}", f"fix the YAML in {p}: sudoedit {p}"), None
    if not isinstance(data, dict):
        return Check("config", False, f"{p} is not a mapping of settings", fix_install), None
    from .config import ConfigError
    from .config import load_config as load_device_config

    try:
        cfg = load_device_config(p)
    except ConfigError as exc:
        # the other checks still look at what parses (pins, model folder, ...)
        return Check("config", False, str(exc), f"fix it: sudoedit {p}"), data
    return Check("config", True, f"{p} (profile {cfg.profile}, {len(cfg.seats)} seats)"), data


def check_config(path: Path | str) -> Check:
    return load_config(path)[0]


def check_host_pin(pin: object) -> Check:
    """The host PIN guards the scoreboard's host controls on the LAN: it must not stay the default."""
    text = str(pin) if pin is not None else ""
    if not text:
        return Check("host PIN", False, "no host_pin set", "set host_pin in /etc/mayi-table/config.yaml")
    if text == DEFAULT_HOST_PIN:
        return Check(
            "host PIN",
            False,
            f"host_pin is still the default {DEFAULT_HOST_PIN}",
            "choose another: sudoedit /etc/mayi-table/config.yaml, then sudo systemctl restart mayi-table",
        )
    return Check("host PIN", True, "host_pin changed from the default")


# ------------------------------------------------------------------ camera


def check_camera(
    source: str | int = "picamera2",
    device: str | int | None = None,
    *,
    cameras: CameraLister = picamera2_cameras,
    opener: CameraOpener = opencv_opens,
) -> Check:
    """``source`` picamera2: libcamera must list a camera; anything else: OpenCV must open ``device``."""
    if source == "picamera2":
        try:
            found = list(cameras())
        except ImportError:
            return Check(
                "camera",
                False,
                "picamera2 is not importable",
                "sudo apt install python3-picamera2; the venv must see it: "
                "python3 -m venv --system-site-packages /opt/mayi-table/venv",
            )
        except ValueError as exc:
            if "size changed" not in str(exc):
                return Check(
                    "camera", False, f"libcamera failed: {exc}", "sudo reboot; then rpicam-hello --list-cameras"
                )
            # apt's simplejpeg (imported by picamera2) is built for Debian's numpy 1.x, the venv has numpy 2
            return Check(
                "camera",
                False,
                f"picamera2 does not import with the venv's numpy: {exc}",
                "sudo /opt/mayi-table/venv/bin/pip install --force-reinstall simplejpeg "
                "(a simplejpeg built for the venv's numpy)",
            )
        except Exception as exc:  # libcamera errors come as anything
            return Check("camera", False, f"libcamera failed: {exc}", "sudo reboot; then rpicam-hello --list-cameras")
        if not found:
            return Check(
                "camera",
                False,
                "libcamera lists no camera",
                "power off, check the ribbon cable (contacts facing the right way, both ends latched); "
                "camera_auto_detect=1 in /boot/firmware/config.txt; then rpicam-hello --list-cameras",
            )
        models = ", ".join(str(c.get("Model", "?")) for c in found)
        return Check("camera", True, f"{len(found)} camera(s) via picamera2: {models}")
    target: str | int = device if device is not None else 0
    try:
        opened = opener(target)
    except ImportError:
        return Check("camera", False, "OpenCV (cv2) is not importable", PIP_PI)
    except Exception as exc:
        opened = False
        detail = f": {exc}"
    else:
        detail = ""
    if not opened:
        return Check(
            "camera",
            False,
            f"OpenCV cannot open camera {target!r}{detail}",
            "check the camera.device setting (v4l2-ctl --list-devices lists the cameras) and the cable",
        )
    return Check("camera", True, f"OpenCV opens camera {target!r}")


# ------------------------------------------------------------------ pins


def seat_pins(config: Mapping[str, Any]) -> list[tuple[str, object]]:
    """Every configured pin with a label: ("seat 1 (Anna) button", 5), ..."""
    pins: list[tuple[str, object]] = []
    seats = config.get("seats")
    if not isinstance(seats, list):
        return pins
    for i, seat in enumerate(seats, 1):
        if not isinstance(seat, Mapping):
            continue
        who = f"seat {i} ({seat['name']})" if seat.get("name") else f"seat {i}"
        for role in ("button", "led"):
            if role in seat and seat[role] is not None:
                pins.append((f"{who} {role}", seat[role]))
    return pins


def check_pins(
    pins: Sequence[tuple[str, object]],
    *,
    find: SpecFinder = find_spec,
    pin_factory: PinFactoryProbe = gpiozero_pin_factory,
) -> Check:
    """The pins are distinct BCM numbers 2-27, gpiozero is installed and has a working pin factory."""
    if not pins:
        return Check("pins", False, "no seat button/LED pins configured", "give each seat a button and led BCM pin")
    bad = [f"{label}={pin!r}" for label, pin in pins if not (type(pin) is int and pin in BCM_PINS)]
    if bad:
        return Check(
            "pins", False, f"not a BCM GPIO number 2-27: {', '.join(bad)}", "use BCM numbers (GPIO17), not board pins"
        )
    users: dict[object, list[str]] = {}
    for label, pin in pins:
        users.setdefault(pin, []).append(label)
    clashes = [f"GPIO{pin}: {' and '.join(labels)}" for pin, labels in users.items() if len(labels) > 1]
    if clashes:
        return Check("pins", False, f"pins used twice: {'; '.join(clashes)}", "give every button and LED its own pin")
    if find("gpiozero") is None:
        return Check("pins", False, "gpiozero is not installed", PIP_PI)
    try:
        factory = pin_factory()
    except Exception as exc:
        return Check(
            "pins",
            False,
            f"gpiozero has no working pin factory: {exc}",
            f"{PIP_PI} (installs lgpio); the user needs the gpio group: sudo usermod -aG gpio {SERVICE}",
        )
    return Check("pins", True, f"{len(pins)} pins distinct and valid, gpiozero pin factory {factory}")


# ------------------------------------------------------------------ model


def check_model(model_dir: Path | str, backend: str, *, find: SpecFinder = find_spec) -> Check:
    """The model folder holds what ``backend`` loads, and the backend's library is installed."""
    name = "model"
    if backend not in BACKEND_NEEDS:
        return Check(
            name, False, f"unknown detector backend {backend!r}", f"detector.backend: one of {', '.join(BACKEND_NEEDS)}"
        )
    entry, inside, library = BACKEND_NEEDS[backend]
    folder = Path(model_dir)
    path = folder / entry
    needed = [path / f for f in inside] if inside else [path]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        return Check(
            name,
            False,
            f"the {backend} model is missing: {', '.join(missing)}",
            f"copy the exported model into {folder} (mayi-table train exports it), then reinstall: {REINSTALL}",
        )
    if find(library) is None:
        return Check(name, False, f"the {backend} backend's library {library} is not installed", PIP_PI)
    return Check(name, True, f"{backend}: {path} with {library}")


def check_jokers(path: Path | str, model_dir: Path | str) -> Check:
    """The deck's jokers file, when one was written: readable, and learnt with the installed classifier.
    None written is fine (the classifier alone names jokers), and said."""
    from .vision.jokers import JokerMarks, JokerMarksError, classifier_id

    name, path = "jokers", Path(path)
    learn = (
        "lay the deck's jokers face up on the empty table; sudo systemctl stop mayi-table; "
        "sudo -u mayi-table mayi-table learn-jokers; sudo systemctl start mayi-table"
    )
    if not path.exists():
        return Check(name, True, f"none shown yet ({path}): the classifier alone names jokers; to show them: {learn}")
    checkpoint = Path(model_dir) / "index.pt"
    try:
        marks = JokerMarks.load(path, classifier_id(checkpoint) if checkpoint.is_file() else "")
    except (JokerMarksError, OSError) as exc:
        return Check(name, False, str(exc), learn)
    return Check(name, True, f"{len(marks.features)} marks of the deck's jokers in {path}")


# ------------------------------------------------------------------ disk, time, service


def check_disk(
    journal: Path | str,
    *,
    disk_usage: DiskUsage = shutil.disk_usage,
    min_free: int = MIN_FREE_BYTES,
) -> Check:
    """At least ``min_free`` bytes free where the journal lives (its nearest existing folder)."""
    folder = Path(journal).parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = int(disk_usage(str(folder)).free)
    except OSError as exc:
        return Check("disk", False, f"cannot measure free space in {folder}: {exc}", "check the SD card: sudo dmesg")
    mb = free / 1e6
    if free < min_free:
        return Check(
            "disk",
            False,
            f"{mb:.0f} MB free in {folder}, {min_free / 1e6:.0f} MB needed",
            "free space: sudo apt clean; sudo journalctl --vacuum-size=50M; remove old files",
        )
    return Check("disk", True, f"{mb:.0f} MB free in {folder}")


def check_time_sync(runner: Runner = subprocess_runner) -> Check:
    """The clock is NTP-synchronised (the Pi has no battery clock: game records need the right time)."""
    result = runner(["timedatectl", "show", "-p", "NTPSynchronized", "--value"])
    answer = result.stdout.strip()
    if result.returncode == 0 and answer == "yes":
        return Check("time", True, "clock synchronised by NTP")
    why = answer or result.stderr.strip() or f"timedatectl exited {result.returncode}"
    return Check(
        "time",
        False,
        f"clock not synchronised ({why})",
        "connect the Pi to the network and run: sudo timedatectl set-ntp true",
    )


def check_service(runner: Runner = subprocess_runner, unit: str = SERVICE) -> Check:
    """The systemd service is running."""
    result = runner(["systemctl", "is-active", unit])
    state = result.stdout.strip() or result.stderr.strip() or f"exit {result.returncode}"
    if result.returncode == 0 and state == "active":
        return Check("service", True, f"{unit} is active")
    return Check(
        "service",
        False,
        f"{unit} is {state}",
        f"sudo systemctl enable --now {unit}; see why it stopped: journalctl -u {unit} -b",
    )


# ------------------------------------------------------------------ all together


def _section(config: Mapping[str, Any] | None, key: str) -> Mapping[str, Any]:
    value = config.get(key) if config else None
    return value if isinstance(value, Mapping) else {}


def journal_path(config: Mapping[str, Any] | None) -> Path:
    """The journal's path: ``journal: {path: ...}`` or ``journal: PATH``."""
    value = config.get("journal") if config else None
    if isinstance(value, Mapping) and value.get("path"):
        return Path(str(value["path"]))
    if isinstance(value, str) and value:
        return Path(value)
    return DEFAULT_JOURNAL


def run_all(
    config_path: Path | str = DEFAULT_CONFIG,
    runner: Runner = subprocess_runner,
    *,
    find: SpecFinder = find_spec,
    cameras: CameraLister = picamera2_cameras,
    opener: CameraOpener = opencv_opens,
    pin_factory: PinFactoryProbe = gpiozero_pin_factory,
    disk_usage: DiskUsage = shutil.disk_usage,
) -> list[Check]:
    """Every check, in order. A config that does not load leaves the other checks on the defaults."""
    config_check, config = load_config(config_path)
    checks = [config_check]
    if config is not None:
        checks.append(check_host_pin(config.get("host_pin")))
    camera = _section(config, "camera")
    checks.append(check_camera(camera.get("source", "picamera2"), camera.get("device"), cameras=cameras, opener=opener))
    checks.append(check_pins(seat_pins(config or {}), find=find, pin_factory=pin_factory))
    detector = _section(config, "detector")
    model_dir = detector.get("model_dir", DEFAULT_MODEL_DIR)
    checks.append(check_model(model_dir, str(detector.get("backend", "ncnn")), find=find))
    if config is not None:
        checks.append(check_jokers(_section(config, "reading").get("jokers", DEFAULT_JOKERS), model_dir))
    checks.append(check_disk(journal_path(config), disk_usage=disk_usage))
    checks.append(check_time_sync(runner))
    checks.append(check_service(runner))
    return checks


def all_ok(checks: Iterable[Check]) -> bool:
    return all(c.ok for c in checks)


def format_report(checks: Iterable[Check]) -> str:
    """One line per check (OK/FAIL, name, message) and, under each failure, its fix."""
    lines: list[str] = []
    for c in checks:
        lines.append(f"{'OK' if c.ok else 'FAIL':<5} {c.name}: {c.message}")
        if not c.ok and c.fix:
            lines.append(f"      fix: {c.fix}")
    return "\n".join(lines) + "\n"
