"""The device config: the shipped default loads; every kind of mistake names file, line and key."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mayi_table.config import (
    ConfigError,
    DeviceConfig,
    FolderCamera,
    OpenCVCamera,
    default_zones,
    load_config,
    point_in_polygon,
    write_zones,
)

DEFAULT = Path(__file__).resolve().parents[2] / "firmware_config" / "mayi-table.yaml"


def default_text() -> str:
    return DEFAULT.read_text(encoding="utf-8")


def line_of(text: str, needle: str, start: bool = False) -> int:
    """The 1-based line of the first line containing `needle` (`start`: beginning with it)."""
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith(needle) if start else needle in line:
            return i
    raise AssertionError(f"{needle!r} not in the text")


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def error_of(tmp_path: Path, text: str) -> ConfigError:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(p)
    return info.value


def edited(old: str, new: str) -> str:
    text = default_text()
    assert old in text, old
    return text.replace(old, new, 1)


# ------------------------------------------------------------------ the default


def test_the_shipped_default_loads_with_every_value() -> None:
    c = load_config(DEFAULT)
    assert isinstance(c, DeviceConfig)
    assert c.profile == "petras" and c.variants == []
    assert c.seat_names == [f"Seat {i}" for i in range(1, 7)]
    assert (c.seats[0].button, c.seats[0].led) == (5, 17)
    assert len(c.zones.seats) == 6
    assert c.zones.seats[0][0] == (0.15, 0.72)
    assert c.camera.source == "picamera2" and (c.camera.width, c.camera.height) == (1920, 1080)
    assert c.detector.backend == "ncnn" and str(c.detector.model_dir) == "/opt/mayi-table/app/vision_models"
    assert c.web.host == "0.0.0.0" and c.web.port == 8000
    assert c.host_pin == "0000"
    assert str(c.journal.path) == "/var/lib/mayi-table/journal.sqlite3"
    # keys the default leaves out take their defaults
    assert c.reading.stable_frames == 3
    assert c.reading.faint_from == 0.25
    assert c.claims.window_s == 3.0 and c.claims.long_press_s == 2.0


def test_other_camera_sources_and_short_journal(tmp_path: Path) -> None:
    text = edited("  source: picamera2\n  width: 1920\n  height: 1080\n", "  source: opencv\n  device: /dev/video2\n")
    text = text.replace("journal:\n  path: /var/lib/mayi-table/journal.sqlite3", "journal: /tmp/j.sqlite3")
    c = load_config(write(tmp_path, text))
    assert isinstance(c.camera, OpenCVCamera) and c.camera.device == "/dev/video2" and c.camera.width is None
    assert str(c.journal.path) == "/tmp/j.sqlite3"
    text = edited(
        "  source: picamera2\n  width: 1920\n  height: 1080\n", "  source: folder\n  path: /data/f\n  fps: 5\n"
    )
    c = load_config(write(tmp_path, text))
    assert isinstance(c.camera, FolderCamera) and c.camera.fps == 5.0 and c.camera.loop is True


def test_classic_with_variants_loads(tmp_path: Path) -> None:
    text = edited("profile: petras\nvariants: []", "profile: classic\nvariants: [no-buy, ace-high]")
    assert load_config(write(tmp_path, text)).variants == ["no-buy", "ace-high"]


# ------------------------------------------------------------------ errors name file:line: key


def test_a_polygon_with_two_points(tmp_path: Path) -> None:
    old = "    - [[0.15, 0.02], [0.48, 0.02], [0.48, 0.28], [0.15, 0.28]]  # Seat 3: top edge, left"
    text = edited(old, "    - [[0.15, 0.02], [0.48, 0.02]]")
    err = error_of(tmp_path, text)
    line = line_of(text, "    - [[0.15, 0.02], [0.48, 0.02]]")
    assert str(err) == f"{tmp_path / 'config.yaml'}:{line}: zones.seats[2]: a polygon needs at least 3 points, not 2"


def test_a_point_outside_the_frame_and_a_flat_polygon(tmp_path: Path) -> None:
    text = edited("  stock: [[0.38, 0.38]", "  stock: [[1.38, 0.38]")
    err = error_of(tmp_path, text)
    assert f":{line_of(text, '  stock:')}: zones.stock: point 0 [1.38, 0.38] is outside 0.0-1.0" in str(err)
    text = edited(
        "  discard: [[0.52, 0.38], [0.62, 0.38], [0.62, 0.62], [0.52, 0.62]]",
        "  discard: [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]]",
    )
    err = error_of(tmp_path, text)
    assert f":{line_of(text, '  discard:')}: zones.discard: the polygon has (almost) no area" in str(err)


def test_a_pin_used_twice_names_the_second_seat_and_the_first(tmp_path: Path) -> None:
    text = edited("  - {name: Seat 2, button: 6, led: 27}", "  - {name: Seat 2, button: 6, led: 17}")
    err = error_of(tmp_path, text)
    line = line_of(text, "name: Seat 2")
    assert str(err).endswith(f":{line}: seats[1].led: GPIO17 is already seats[0].led (Seat 1); every pin is used once")


def test_a_pin_out_of_range_and_a_board_pin(tmp_path: Path) -> None:
    text = edited("  - {name: Seat 4, button: 19, led: 23}", "  - {name: Seat 4, button: 40, led: 23}")
    err = error_of(tmp_path, text)
    assert f":{line_of(text, 'name: Seat 4')}: seats[3].button: GPIO40 is not a BCM GPIO number 2-27" in str(err)
    text = edited("  - {name: Seat 4, button: 19, led: 23}", "  - {name: Seat 4, button: yes, led: 23}")
    assert "seats[3].button: a pin is a BCM GPIO number 2-27, not True" in str(error_of(tmp_path, text))


def test_unknown_keys_list_the_allowed_ones(tmp_path: Path) -> None:
    text = edited("web:\n", "web:\n  hots: 1.2.3.4\n")
    err = error_of(tmp_path, text)
    assert str(err).endswith(f":{line_of(text, 'hots:')}: web.hots: unknown key (the keys here: host, port)")
    text = edited("camera:\n  source: picamera2\n", "camera:\n  source: picamera2\n  device: 0\n")
    err = error_of(tmp_path, text)
    assert f":{line_of(text, '  device: 0')}: camera.device: unknown key (the keys here: source, width, height)" in str(
        err
    )
    text = default_text() + "\ncammera: {}\n"
    assert f":{line_of(text, 'cammera')}: cammera: unknown key" in str(error_of(tmp_path, text))


def test_camera_source_errors_and_per_source_keys(tmp_path: Path) -> None:
    text = edited("  source: picamera2", "  source: webcam")
    err = error_of(tmp_path, text)
    assert f":{line_of(text, 'source: webcam')}: camera.source: unknown camera source 'webcam'" in str(err)
    text = edited("  source: picamera2\n  width: 1920\n  height: 1080\n", "  source: folder\n  fps: 0\n")
    msg = str(error_of(tmp_path, text))
    # a missing key: the line of the mapping that lacks it
    assert f":{line_of(text, 'camera:', start=True)}: camera.path: missing (required)" in msg
    assert f":{line_of(text, '  fps: 0')}: camera.fps: Input should be greater than 0, not 0" in msg


def test_a_missing_section_and_a_wrong_type(tmp_path: Path) -> None:
    text = default_text().replace('host_pin: "0000"\n', "")
    err = error_of(tmp_path, text)
    assert str(err) == f"{tmp_path / 'config.yaml'}: host_pin: missing (required)"
    text = edited("  port: 8000", "  port: eighty")
    assert f":{line_of(text, 'port: eighty')}: web.port: Input should be a valid integer" in str(
        error_of(tmp_path, text)
    )


def test_an_unquoted_pin_loses_its_zeros(tmp_path: Path) -> None:
    text = edited('host_pin: "0000"', "host_pin: 0042")
    err = error_of(tmp_path, text)
    assert f':{line_of(text, "host_pin: 0042")}: host_pin: write the PIN in quotes, e.g. host_pin: "0042"' in str(err)
    text = edited('host_pin: "0000"', 'host_pin: "12a4"')
    assert "host_pin: the host PIN is 4 to 12 digits, not '12a4'" in str(error_of(tmp_path, text))


def test_seat_zones_must_match_the_seats(tmp_path: Path) -> None:
    text = edited("  - {name: Seat 6, button: 21, led: 25}\n", "")
    err = error_of(tmp_path, text)
    assert str(err).endswith(
        f":{line_of(text, '  seats:')}: zones.seats: 6 seat zones for 5 seats: give one polygon per seat, "
        "in the seats' order (mayi-table calibrate writes them)"
    )


def test_variants_go_through_the_rules(tmp_path: Path) -> None:
    text = edited("variants: []", "variants: [no-buy]")
    err = error_of(tmp_path, text)
    assert f":{line_of(text, 'variants: [no-buy]')}: variants: variants (no-buy) belong to the classic profile" in str(
        err
    )
    text = edited("profile: petras\nvariants: []", "profile: classic\nvariants: [no-bye]")
    assert "variants: unknown variant 'no-bye'" in str(error_of(tmp_path, text))
    text = edited("profile: petras", "profile: petra")
    assert f":{line_of(text, 'profile: petra')}: profile: Input should be 'petras' or 'classic', not 'petra'" in str(
        error_of(tmp_path, text)
    )


def test_seat_names_must_differ(tmp_path: Path) -> None:
    text = edited("{name: Seat 2,", "{name: Seat 1,")
    err = error_of(tmp_path, text)
    assert str(err).endswith(f":{line_of(text, 'button: 6')}: seats[1].name: 'Seat 1' is already the name of seats[0]")


def test_several_problems_one_line_each(tmp_path: Path) -> None:
    text = edited("  port: 8000", "  port: 0").replace("  backend: ncnn", "  backend: tflite")
    lines = str(error_of(tmp_path, text)).splitlines()
    assert len(lines) == 2
    assert any(f":{line_of(text, 'backend: tflite')}: detector.backend:" in x for x in lines)
    assert any(f":{line_of(text, 'port: 0')}: web.port:" in x for x in lines)


def test_yaml_syntax_errors_and_duplicate_keys(tmp_path: Path) -> None:
    text = edited("  port: 8000", "  port: [8000")
    err = error_of(tmp_path, text)
    assert str(err).startswith(f"{tmp_path / 'config.yaml'}:")
    line = int(str(err).split(":")[1])
    assert line_of(text, "port: [8000") <= line <= line_of(text, "port: [8000") + 5
    assert "not valid YAML" in str(err)
    text = default_text() + "\nprofile: classic\n"
    err = error_of(tmp_path, text)
    assert str(err) == f"{tmp_path / 'config.yaml'}:{len(text.splitlines())}: profile: written twice; keep one"


def test_not_a_mapping_and_no_file(tmp_path: Path) -> None:
    assert "the config is empty" in str(error_of(tmp_path, "# nothing\n"))
    assert "the config is a list" in str(error_of(tmp_path, "- a\n- b\n"))
    with pytest.raises(ConfigError, match="nope.yaml: no such file"):
        load_config(tmp_path / "nope.yaml")


def test_skip_zones_lets_calibration_read_a_config_with_broken_zones(tmp_path: Path) -> None:
    text = edited("  - {name: Seat 6, button: 21, led: 25}\n", "")
    p = write(tmp_path, text)
    with pytest.raises(ConfigError):
        load_config(p)
    c = load_config(p, skip_zones=True)
    assert len(c.zones.seats) == 5


# ------------------------------------------------------------------ the default layout


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6, 8])
def test_default_zones_are_valid_and_disjoint(n: int) -> None:
    z = default_zones(n)
    assert len(z.seats) == n
    # a grid of points: none lies in two zones
    for i in range(1, 40):
        for j in range(1, 40):
            pt = (i / 40 + 0.003, j / 40 + 0.003)
            hits = [k for k, poly in enumerate([*z.seats, z.stock, z.discard]) if point_in_polygon(pt, poly)]
            assert len(hits) <= 1, (pt, hits)
    # the seats go clockwise from the bottom edge, as in the shipped config: seat 1 bottom, seat 2 left
    if n == 4:  # one seat a side, facing its edge
        assert z.facing == [0, 270, 180, 90]
        assert point_in_polygon((0.5, 0.9), z.seats[0]) and point_in_polygon((0.05, 0.5), z.seats[1])
    if n == 6:
        assert z.facing == [0, 270, 180, 180, 90, 0]
        assert point_in_polygon((0.3, 0.9), z.seats[0])
        assert point_in_polygon((0.05, 0.5), z.seats[1])
        assert point_in_polygon((0.3, 0.1), z.seats[2])
        assert point_in_polygon((0.95, 0.5), z.seats[4])


# ------------------------------------------------------------------ write_zones


def test_write_zones_keeps_every_other_line_and_comment(tmp_path: Path) -> None:
    p = write(tmp_path, default_text())
    p.chmod(0o640)
    before = default_text().splitlines()
    zones = default_zones(6)
    write_zones(p, zones, [f"Seat {i}" for i in range(1, 7)])
    after = p.read_text(encoding="utf-8").splitlines()
    start = before.index("zones:")
    end = before.index("  discard: [[0.52, 0.38], [0.62, 0.38], [0.62, 0.62], [0.52, 0.62]]")
    new_end = next(i for i, line in enumerate(after) if line.startswith("  facing:"))
    assert after[:start] == before[:start]  # the comments above, word for word
    assert after[new_end + 1 :] == before[end + 1 :]  # the camera section's comments and the rest
    assert after[start] == "zones:" and after[start + 2].endswith("  # Seat 1")
    assert load_config(p).zones == zones
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert not [f for f in tmp_path.iterdir() if f.name != "config.yaml"]  # no temporary file left


def test_write_zones_twice_is_stable_and_appends_when_missing(tmp_path: Path) -> None:
    p = write(tmp_path, default_text())
    write_zones(p, default_zones(6))
    once = p.read_text(encoding="utf-8")
    write_zones(p, default_zones(6))
    assert p.read_text(encoding="utf-8") == once
    # a config without zones (and without a final line break) gets them at the end
    text = default_text()
    start, end = text.index("zones:\n"), text.index("# The camera:")
    p.write_text((text[:start] + text[end:]).rstrip("\n"), encoding="utf-8")
    write_zones(p, default_zones(6))
    assert load_config(p).zones == default_zones(6)
    assert p.read_text(encoding="utf-8").endswith(
        "  discard: [[0.52, 0.382], [0.618, 0.382], [0.618, 0.618], [0.52, 0.618]]\n"
        "  facing: [0, 270, 180, 180, 90, 0]  # degrees; 0 = the bottom edge\n"
    )


def test_write_zones_with_the_next_key_right_below(tmp_path: Path) -> None:
    text = (
        "# top comment\nprofile: petras\nzones:\n  seats:\n  - [[0, 0], [1, 0], [1, 1]]\n"
        "  stock: [[0, 0], [1, 0], [1, 1]]\n  discard: [[0, 0], [1, 0],\n    [1, 1]]   # trailing\n"
        "# about the seats\nseats:\n  - {name: A, button: 5, led: 17}\nhost_pin: '1234'\n"
    )
    p = write(tmp_path, text)
    write_zones(p, default_zones(1), ["A"])
    out = p.read_text(encoding="utf-8")
    assert out.startswith("# top comment\nprofile: petras\nzones:\n")
    assert out.endswith("# about the seats\nseats:\n  - {name: A, button: 5, led: 17}\nhost_pin: '1234'\n")
    assert "trailing" not in out
    assert load_config(p).zones == default_zones(1)


def test_write_zones_refuses_what_it_cannot_edit(tmp_path: Path) -> None:
    p = write(tmp_path, "{profile: petras, zones: {}}\n")
    with pytest.raises(ConfigError, match="flow mapping"):
        write_zones(p, default_zones(1))
    p = write(tmp_path, "profile: [petras\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+: not valid YAML"):
        write_zones(p, default_zones(1))
    assert p.read_text(encoding="utf-8") == "profile: [petras\n"


def test_facing_is_optional_and_one_angle_per_seat(tmp_path: Path) -> None:
    line = "  discard: [[0.52, 0.38], [0.62, 0.38], [0.62, 0.62], [0.52, 0.62]]\n"
    text = edited(line, line + "  facing: [0, 270, 180, 180, 90, 0]\n")
    assert load_config(write(tmp_path, text)).zones.facing == [0, 270, 180, 180, 90, 0]
    text = edited(line, line + "  facing: [0, 270]\n")
    assert f":{line_of(text, 'facing:')}: zones.facing: 2 angles for 6 seat zones: give one per seat" in str(
        error_of(tmp_path, text)
    )
    text = edited(line, line + "  facing: [0, 270, 180, 180, 90, 360]\n")
    assert f":{line_of(text, 'facing:')}: zones.facing[5]: Input should be less than 360, not 360" in str(
        error_of(tmp_path, text)
    )


def test_the_decks_kind_is_told_by_the_table_unless_set(tmp_path: Path) -> None:
    """reading.four_index_deck: null (the default) lets each frame show it; true or false sets it; any
    other value is refused with its key."""
    assert load_config(write(tmp_path, default_text())).reading.four_index_deck is None
    c = load_config(write(tmp_path, default_text() + "reading:\n  four_index_deck: false\n"))
    assert c.reading.four_index_deck is False
    e = error_of(tmp_path, default_text() + "reading:\n  four_index_deck: sometimes\n")
    assert "reading.four_index_deck" in str(e)


def test_shaken_frames_are_read_sharpened_unless_turned_off(tmp_path: Path) -> None:
    """reading.deshake: on by default; false turns it off; any other value is refused with its key."""
    assert load_config(write(tmp_path, default_text())).reading.deshake is True
    assert load_config(write(tmp_path, default_text() + "reading:\n  deshake: false\n")).reading.deshake is False
    e = error_of(tmp_path, default_text() + "reading:\n  deshake: maybe\n")
    assert "reading.deshake" in str(e)


def test_faint_readings_level_is_checked_and_may_be_off(tmp_path: Path) -> None:
    """reading.faint_from: null passes no faint reading on; a level at or over the classifier's own
    threshold is refused with its key."""
    from mayi_table.vision.classify import MIN_CONFIDENCE

    c = load_config(write(tmp_path, default_text() + "reading:\n  faint_from: null\n"))
    assert c.reading.faint_from is None
    for level in (MIN_CONFIDENCE, 0.6):
        e = error_of(tmp_path, default_text() + f"reading:\n  faint_from: {level}\n")
        assert "reading.faint_from" in str(e)
    below = load_config(write(tmp_path, default_text() + f"reading:\n  faint_from: {MIN_CONFIDENCE - 0.01:.2f}\n"))
    assert below.reading.faint_from == round(MIN_CONFIDENCE - 0.01, 2)
