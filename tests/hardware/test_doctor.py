"""`mayi-table doctor` checks: every failure faked (no camera, pins or systemd needed), and an all-green run."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pytest

from mayi_table import doctor
from mayi_table.doctor import (
    REQUIRED_KEYS,
    Check,
    RunResult,
    check_camera,
    check_config,
    check_disk,
    check_host_pin,
    check_model,
    check_pins,
    check_service,
    check_time_sync,
    format_report,
    journal_path,
    load_config,
    run_all,
    seat_pins,
)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_YAML = REPO / "firmware_config" / "mayi-table.yaml"


# ------------------------------------------------------------------ fakes


class Usage(NamedTuple):
    total: int
    used: int
    free: int


def free_space(free: int) -> Any:
    def usage(path: str) -> Usage:
        return Usage(10**10, 10**10 - free, free)

    return usage


class FakeRunner:
    """Answers commands from a table; records what was asked."""

    def __init__(self, answers: Mapping[str, RunResult]) -> None:
        self.answers = answers
        self.asked: list[list[str]] = []

    def __call__(self, args: Sequence[str]) -> RunResult:
        self.asked.append(list(args))
        return self.answers.get(args[0], RunResult(127, "", f"{args[0]}: command not found"))


GREEN_RUNNER = {"timedatectl": RunResult(0, "yes\n"), "systemctl": RunResult(0, "active\n")}


def found(name: str) -> object | None:
    return object()


def nothing_found(name: str) -> object | None:
    return None


def one_camera() -> Sequence[Mapping[str, Any]]:
    return [{"Model": "imx708", "Location": 2, "Rotation": 180, "Id": "/base/soc/i2c0mux/i2c@1/imx708@1a"}]


def no_picamera2() -> Sequence[Mapping[str, Any]]:
    raise ImportError("No module named 'picamera2'")


def fine_factory() -> str:
    return "LGPIOFactory"


def ncnn_model(folder: Path) -> Path:
    model = folder / "corners_ncnn_model"
    model.mkdir(parents=True)
    (model / "model.ncnn.param").write_text("7767517\n")
    (model / "model.ncnn.bin").write_bytes(b"\0" * 16)
    return folder


def write_config(path: Path, **changes: Any) -> Path:
    import yaml

    data = yaml.safe_load(DEFAULT_YAML.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))
    return path


# ------------------------------------------------------------------ config


def test_the_default_config_loads_with_every_required_key() -> None:
    verdict, config = load_config(DEFAULT_YAML)
    assert verdict.ok, verdict
    assert config is not None and set(REQUIRED_KEYS) <= set(config)
    assert verdict.message.endswith("(profile petras, 6 seats)")
    assert config["camera"] == {"source": "picamera2", "width": 1920, "height": 1080}
    assert config["detector"]["backend"] == "ncnn"
    assert config["web"] == {"host": "0.0.0.0", "port": 8000}
    assert config["host_pin"] == "0000"
    assert journal_path(config) == Path("/var/lib/mayi-table/journal.sqlite3")
    assert len(config["zones"]["seats"]) == len(config["seats"]) == 6


def test_config_missing(tmp_path: Path) -> None:
    verdict = check_config(tmp_path / "config.yaml")
    assert not verdict.ok and "does not exist" in verdict.message and "install" in verdict.fix


def test_config_not_yaml(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("profile: petras\nseats: [\n")
    verdict, config = load_config(path)
    assert not verdict.ok and "not valid YAML" in verdict.message and config is None


def test_config_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("- profile\n- seats\n")
    verdict = check_config(path)
    assert not verdict.ok and "not a mapping" in verdict.message


def test_config_missing_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("profile: petras\nseats: []\ncamera: {source: picamera2}\n")
    verdict, config = load_config(path)
    assert not verdict.ok
    # the device's own loader names file, line and key of each problem
    assert f"{path}: host_pin: missing (required)" in verdict.message
    assert f"{path}:2: seats:" in verdict.message
    assert config is not None  # still usable for the other checks


def test_host_pin() -> None:
    assert not check_host_pin("0000").ok
    assert "still the default" in check_host_pin("0000").message
    assert not check_host_pin(None).ok
    assert not check_host_pin("").ok
    assert check_host_pin("4711").ok
    assert check_host_pin(4711).ok


# ------------------------------------------------------------------ camera


def test_camera_picamera2_missing() -> None:
    verdict = check_camera("picamera2", cameras=no_picamera2)
    assert not verdict.ok and "picamera2 is not importable" in verdict.message
    assert "python3-picamera2" in verdict.fix and "--system-site-packages" in verdict.fix


def test_camera_none_listed() -> None:
    verdict = check_camera("picamera2", cameras=lambda: [])
    assert not verdict.ok and verdict.message == "libcamera lists no camera"
    assert "ribbon cable" in verdict.fix and "camera_auto_detect=1" in verdict.fix


def test_camera_libcamera_error() -> None:
    def broken() -> Sequence[Mapping[str, Any]]:
        raise RuntimeError("Failed to acquire camera: Device or resource busy")

    verdict = check_camera("picamera2", cameras=broken)
    assert not verdict.ok and "resource busy" in verdict.message


def test_camera_picamera2_against_numpy_2() -> None:
    def abi_clash() -> Sequence[Mapping[str, Any]]:
        raise ValueError("numpy.dtype size changed, may indicate binary incompatibility. Expected 96, got 88")

    verdict = check_camera("picamera2", cameras=abi_clash)
    assert not verdict.ok and "numpy" in verdict.message and "simplejpeg" in verdict.fix


def test_camera_picamera2_ok() -> None:
    verdict = check_camera("picamera2", cameras=one_camera)
    assert verdict.ok and verdict.message == "1 camera(s) via picamera2: imx708"


def test_camera_opencv_cannot_open() -> None:
    seen: list[str | int] = []

    def opener(source: str | int) -> bool:
        seen.append(source)
        return False

    verdict = check_camera("opencv", "/dev/video0", opener=opener)
    assert not verdict.ok and "cannot open camera '/dev/video0'" in verdict.message
    assert seen == ["/dev/video0"]


def test_camera_opencv_missing_or_crashing() -> None:
    def no_cv2(source: str | int) -> bool:
        raise ImportError("No module named 'cv2'")

    def crash(source: str | int) -> bool:
        raise RuntimeError("VIDIOC_STREAMON: Invalid argument")

    assert "cv2" in check_camera("opencv", 0, opener=no_cv2).message
    verdict = check_camera("opencv", 0, opener=crash)
    assert not verdict.ok and "VIDIOC_STREAMON" in verdict.message


def test_camera_opencv_ok_defaults_to_device_0() -> None:
    verdict = check_camera("opencv", opener=lambda source: source == 0)
    assert verdict.ok and verdict.message == "OpenCV opens camera 0"


# ------------------------------------------------------------------ pins


def default_pins() -> list[tuple[str, object]]:
    _, config = load_config(DEFAULT_YAML)
    assert config is not None
    return seat_pins(config)


def test_seat_pins_labels() -> None:
    pins = default_pins()
    assert len(pins) == 12
    assert pins[:2] == [("seat 1 (Seat 1) button", 5), ("seat 1 (Seat 1) led", 17)]


def test_pins_none_configured() -> None:
    verdict = check_pins([], find=found, pin_factory=fine_factory)
    assert not verdict.ok and "no seat" in verdict.message


@pytest.mark.parametrize("bad", [1, 28, -3, "GPIO5", 5.0, True, None])
def test_pins_not_bcm(bad: object) -> None:
    verdict = check_pins([("seat 1 button", 5), ("seat 1 led", bad)], find=found, pin_factory=fine_factory)
    assert not verdict.ok and f"seat 1 led={bad!r}" in verdict.message


def test_pins_used_twice() -> None:
    pins = [("seat 1 button", 5), ("seat 1 led", 17), ("seat 2 button", 17)]
    verdict = check_pins(pins, find=found, pin_factory=fine_factory)
    assert not verdict.ok
    assert verdict.message == "pins used twice: GPIO17: seat 1 led and seat 2 button"


def test_pins_without_gpiozero() -> None:
    verdict = check_pins(default_pins(), find=nothing_found, pin_factory=fine_factory)
    assert not verdict.ok and verdict.message == "gpiozero is not installed" and "[pi]" in verdict.fix


def test_pins_without_a_pin_factory() -> None:
    def bad_factory() -> str:
        raise RuntimeError("Unable to load any default pin factory!")

    verdict = check_pins(default_pins(), find=found, pin_factory=bad_factory)
    assert not verdict.ok and "no working pin factory" in verdict.message and "gpio" in verdict.fix


def test_pins_ok() -> None:
    verdict = check_pins(default_pins(), find=found, pin_factory=fine_factory)
    assert verdict.ok and verdict.message == "12 pins distinct and valid, gpiozero pin factory LGPIOFactory"


def test_default_pin_factory_probe_uses_gpiozero(monkeypatch: pytest.MonkeyPatch) -> None:
    class Factory:
        pass

    class Device:
        pin_factory: object | None = None

        @classmethod
        def ensure_pin_factory(cls) -> None:
            cls.pin_factory = Factory()

    monkeypatch.setitem(sys.modules, "gpiozero", types.SimpleNamespace(Device=Device))
    monkeypatch.delenv("LG_WD", raising=False)
    assert doctor.gpiozero_pin_factory() == "Factory"


# ------------------------------------------------------------------ model


@pytest.mark.parametrize(
    "backend, missing",
    [("ncnn", "corners_ncnn_model/model.ncnn.param"), ("onnx", "corners.onnx"), ("ultralytics", "corners.pt")],
)
def test_model_file_missing(tmp_path: Path, backend: str, missing: str) -> None:
    verdict = check_model(tmp_path, backend, find=found)
    assert not verdict.ok and str(tmp_path / missing) in verdict.message


def test_model_ncnn_weights_missing(tmp_path: Path) -> None:
    ncnn_model(tmp_path)
    (tmp_path / "corners_ncnn_model/model.ncnn.bin").unlink()
    verdict = check_model(tmp_path, "ncnn", find=found)
    assert not verdict.ok and "model.ncnn.bin" in verdict.message


@pytest.mark.parametrize(
    "backend, library", [("ncnn", "ncnn"), ("onnx", "onnxruntime"), ("ultralytics", "ultralytics")]
)
def test_model_library_missing(tmp_path: Path, backend: str, library: str) -> None:
    ncnn_model(tmp_path)
    (tmp_path / "corners.onnx").write_bytes(b"onnx")
    (tmp_path / "corners.pt").write_bytes(b"pt")
    asked: list[str] = []

    def finder(name: str) -> object | None:
        asked.append(name)
        return None

    verdict = check_model(tmp_path, backend, find=finder)
    assert not verdict.ok and f"library {library} is not installed" in verdict.message
    assert asked == [library]
    assert check_model(tmp_path, backend, find=found).ok


def test_model_unknown_backend(tmp_path: Path) -> None:
    verdict = check_model(tmp_path, "tflite", find=found)
    assert not verdict.ok and "unknown detector backend 'tflite'" in verdict.message


def test_model_layout_matches_the_detector() -> None:
    from mayi_table.vision import detect

    assert {b: need[0] for b, need in doctor.BACKEND_NEEDS.items()} == detect.MODEL_FILES
    assert doctor.BACKEND_NEEDS["ncnn"][1] == (detect.NCNN_PARAM, detect.NCNN_BIN)


def test_default_finder_locates_without_raising() -> None:
    assert doctor.find_spec("json") is not None
    assert doctor.find_spec("no_such_module_for_mayi_table") is None
    assert doctor.find_spec("") is None


# ------------------------------------------------------------------ disk, time, service


def test_disk_low(tmp_path: Path) -> None:
    verdict = check_disk(tmp_path / "journal.sqlite3", disk_usage=free_space(150 * 10**6))
    assert not verdict.ok and verdict.message == f"150 MB free in {tmp_path}, 200 MB needed"


def test_disk_unreadable(tmp_path: Path) -> None:
    def broken(path: str) -> Usage:
        raise OSError(5, "Input/output error")

    verdict = check_disk(tmp_path / "journal.sqlite3", disk_usage=broken)
    assert not verdict.ok and "Input/output error" in verdict.message


def test_disk_ok_measures_the_nearest_existing_folder(tmp_path: Path) -> None:
    measured: list[str] = []

    def usage(path: str) -> Usage:
        measured.append(path)
        return Usage(10**10, 0, 5 * 10**9)

    verdict = check_disk(tmp_path / "not/yet/journal.sqlite3", disk_usage=usage)
    assert verdict.ok and verdict.message == f"5000 MB free in {tmp_path}"
    assert measured == [str(tmp_path)]


def test_time_not_synchronised() -> None:
    runner = FakeRunner({"timedatectl": RunResult(0, "no\n")})
    verdict = check_time_sync(runner)
    assert not verdict.ok and verdict.message == "clock not synchronised (no)" and "set-ntp" in verdict.fix
    assert runner.asked == [["timedatectl", "show", "-p", "NTPSynchronized", "--value"]]


def test_time_without_timedatectl() -> None:
    verdict = check_time_sync(FakeRunner({}))
    assert not verdict.ok and "command not found" in verdict.message


def test_time_ok() -> None:
    assert check_time_sync(FakeRunner(GREEN_RUNNER)).ok


@pytest.mark.parametrize("state, code", [("inactive", 3), ("failed", 3), ("activating", 3)])
def test_service_not_active(state: str, code: int) -> None:
    runner = FakeRunner({"systemctl": RunResult(code, state + "\n")})
    verdict = check_service(runner)
    assert not verdict.ok and verdict.message == f"mayi-table is {state}" and "journalctl -u mayi-table" in verdict.fix
    assert runner.asked == [["systemctl", "is-active", "mayi-table"]]


def test_service_ok() -> None:
    assert check_service(FakeRunner(GREEN_RUNNER)) == Check("service", True, "mayi-table is active")


def test_subprocess_runner() -> None:
    done = doctor.subprocess_runner([sys.executable, "-c", "print('yes')"])
    assert done == RunResult(0, "yes\n", "")
    missing = doctor.subprocess_runner(["no-such-command-for-mayi-table"])
    assert missing.returncode == 127 and "not found" in missing.stderr


# ------------------------------------------------------------------ everything


def test_all_green(tmp_path: Path) -> None:
    models = ncnn_model(tmp_path / "models")
    config = write_config(
        tmp_path / "config.yaml",
        host_pin="4711",
        detector={"backend": "ncnn", "model_dir": str(models)},
        journal={"path": str(tmp_path / "state/journal.sqlite3")},
    )
    checks = run_all(
        config,
        FakeRunner(GREEN_RUNNER),
        find=found,
        cameras=one_camera,
        opener=lambda source: False,
        pin_factory=fine_factory,
        disk_usage=free_space(10**9),
    )
    names = ["config", "host PIN", "camera", "pins", "model", "jokers", "disk", "time", "service"]
    assert [c.name for c in checks] == names
    assert all(c.ok for c in checks), checks
    assert doctor.all_ok(checks)
    report = format_report(checks)
    lines = report.splitlines()
    assert len(lines) == len(checks)
    assert all(line.startswith("OK    ") for line in lines)
    assert lines[0] == f"OK    config: {config} (profile petras, 6 seats)"
    assert "fix:" not in report


def test_every_check_failing(tmp_path: Path) -> None:
    checks = run_all(
        tmp_path / "missing.yaml",
        FakeRunner({"timedatectl": RunResult(0, "no\n"), "systemctl": RunResult(3, "inactive\n")}),
        find=nothing_found,
        cameras=lambda: [],
        pin_factory=fine_factory,
        disk_usage=free_space(10**6),
    )
    # without a config: no host PIN to check, the others fall back on the defaults
    assert [c.name for c in checks] == ["config", "camera", "pins", "model", "disk", "time", "service"]
    assert not any(c.ok for c in checks)
    assert "/opt/mayi-table/app/vision_models" in checks[3].message
    report = format_report(checks)
    lines = report.splitlines()
    assert len(lines) == 2 * len(checks)  # each failure and its fix
    assert all(line.startswith("FAIL  ") for line in lines[0::2])
    assert all(line.startswith("      fix: ") for line in lines[1::2])
    assert not doctor.all_ok(checks)


def test_opencv_source_from_config(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.yaml", camera={"source": "opencv", "device": "/dev/video2"})
    opened: list[str | int] = []

    def opener(source: str | int) -> bool:
        opened.append(source)
        return True

    checks = run_all(config, FakeRunner(GREEN_RUNNER), find=found, cameras=no_picamera2, opener=opener)
    camera = next(c for c in checks if c.name == "camera")
    assert camera.ok and opened == ["/dev/video2"]


def test_format_report_shape() -> None:
    report = format_report(
        [Check("camera", False, "libcamera lists no camera", "check the cable"), Check("time", True, "synced")]
    )
    assert report == ("FAIL  camera: libcamera lists no camera\n      fix: check the cable\nOK    time: synced\n")


def test_default_camera_probes_with_fake_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    class Picamera2:
        @staticmethod
        def global_camera_info() -> list[dict[str, Any]]:
            return [{"Model": "imx477"}]

    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=Picamera2))
    assert check_camera("picamera2").message == "1 camera(s) via picamera2: imx477"

    released: list[bool] = []

    class Capture:
        def __init__(self, source: object) -> None:
            self.source = source

        def isOpened(self) -> bool:
            return True

        def read(self) -> tuple[bool, None]:
            return (self.source == 0, None)

        def release(self) -> None:
            released.append(True)

    monkeypatch.setitem(sys.modules, "cv2", types.SimpleNamespace(VideoCapture=Capture))
    assert doctor.opencv_opens(0) is True
    assert doctor.opencv_opens(1) is False
    assert released == [True, True]


# ------------------------------------------------------------------ the deck's jokers


def test_the_decks_jokers_file_is_checked_when_there_is_one(tmp_path: Path) -> None:
    """None shown is fine and said; a file is read and must be the installed classifier's."""
    from mayi_table.vision.jokers import JokerMarks, classifier_id

    models = tmp_path / "models"
    models.mkdir()
    (models / "index.pt").write_bytes(b"weights")
    path = tmp_path / "jokers.npz"
    none_yet = doctor.check_jokers(path, models)
    assert none_yet.ok and "none shown yet" in none_yet.message and "learn-jokers" in none_yet.message
    JokerMarks.of([np.ones(4), np.arange(4)], classifier_id(models / "index.pt")).save(path)
    good = doctor.check_jokers(path, models)
    assert good.ok and good.message == f"2 marks of the deck's jokers in {path}"
    (models / "index.pt").write_bytes(b"other weights")
    stale = doctor.check_jokers(path, models)
    assert not stale.ok and "another card classifier" in stale.message and "learn-jokers" in stale.fix
    path.write_text("junk")
    broken = doctor.check_jokers(path, models)
    assert not broken.ok and "not a jokers file" in broken.message
    config = write_config(tmp_path / "config.yaml", reading={"jokers": str(path)})
    checks = run_all(config, FakeRunner(GREEN_RUNNER), find=found, cameras=one_camera, pin_factory=fine_factory)
    assert next(c for c in checks if c.name == "jokers") == doctor.check_jokers(path, doctor.DEFAULT_MODEL_DIR)
