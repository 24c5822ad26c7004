"""Calibration: markers drawn at known places on a rendered table give zones that hold them."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from mayi_table.calibrate import (
    CalibrationError,
    calibrate_main,
    detect_markers,
    draw_zones,
    layout_zones,
    marker_plan,
    propose_zones,
    write_marker_sheet,
)
from mayi_table.config import default_zones, load_config, point_in_polygon
from mayi_table.vision.render.faces import TRAIN_DESIGNS
from mayi_table.vision.render.scene import render_table

DEFAULT = Path(__file__).resolve().parents[2] / "firmware_config" / "mayi-table.yaml"
W, H = 1920, 1080
NAMES = [f"Seat {i}" for i in range(1, 7)]
CORNERS = {0: (170, 120), 1: (1750, 100), 2: (1790, 985), 3: (130, 960)}  # a table seen slightly askew
PILES = {10: (740, 545), 11: (1180, 535)}  # about 27 cm apart at 1.6 px/mm
SEAT_SPOTS = {  # clockwise from the bottom-left, as the shipped config seats them
    20: (520, 900),
    21: (240, 540),
    22: (520, 190),
    23: (1400, 180),
    24: (1680, 560),
    25: (1400, 910),
}


def paste_marker(img: np.ndarray, mid: int, centre: tuple[float, float], side: int = 56, angle: float = 0) -> None:
    """Lay marker `mid` (with a white border, as cut from the sheet) at `centre`, turned by `angle`."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    tile = cv2.aruco.generateImageMarker(dictionary, mid, side)
    pad = side // 4
    tile = cv2.cvtColor(
        cv2.copyMakeBorder(tile, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255), cv2.COLOR_GRAY2BGR
    )
    th, tw = tile.shape[:2]
    m = cv2.getRotationMatrix2D((tw / 2, th / 2), angle, 1.0)
    m[:, 2] += (centre[0] - tw / 2, centre[1] - th / 2)
    size = (img.shape[1], img.shape[0])
    mask = cv2.warpAffine(np.full((th, tw), 255, np.uint8), m, size) > 127
    img[mask] = cv2.warpAffine(tile, m, size, flags=cv2.INTER_LINEAR)[mask]


def table_frame(markers: dict[int, tuple[float, float]], seed: int = 3) -> np.ndarray:
    img = render_table(seed, TRAIN_DESIGNS, size=(W, H), spoil=False).image.copy()
    for k, (mid, at) in enumerate(sorted(markers.items())):
        paste_marker(img, mid, at, angle=(k * 23) % 60 - 30)
    return img


def rel(p: tuple[float, float]) -> tuple[float, float]:
    return (p[0] / W, p[1] / H)


@pytest.fixture(scope="module")
def full_frame() -> np.ndarray:
    return table_frame({**CORNERS, **PILES, **SEAT_SPOTS})


def test_every_marker_is_found_where_it_was_laid(full_frame: np.ndarray) -> None:
    found = detect_markers(full_frame)
    expected = {**CORNERS, **PILES, **SEAT_SPOTS}
    assert set(found) == set(expected)
    for mid, (x, y) in expected.items():
        cx, cy = found[mid].centre
        assert abs(cx - x) < 3 and abs(cy - y) < 3
        assert 50 < found[mid].side < 62


def test_zones_hold_their_markers_and_no_other(full_frame: np.ndarray) -> None:
    proposal = propose_zones(full_frame, 6, NAMES)
    zones = proposal.zones
    assert proposal.notes == []  # nothing assumed
    polys = [*zones.seats, zones.stock, zones.discard]
    owners = {**{20 + i: i for i in range(6)}, 10: 6, 11: 7}
    for mid, owner in owners.items():
        at = rel({**PILES, **SEAT_SPOTS}[mid])
        assert [k for k, poly in enumerate(polys) if point_in_polygon(at, poly)] == [owner], mid
    # the table outline is the corner markers' quad, clockwise from the top-left
    for (x, y), i in zip(proposal.table, range(4)):
        assert abs(x - CORNERS[i][0]) < 2 and abs(y - CORNERS[i][1]) < 2
    # seat zones reach the table edge and stop short of the centre where the piles lie
    centre = rel((960, 540))
    assert not any(point_in_polygon(centre, poly) for poly in zones.seats)
    assert point_in_polygon(rel((520, 950)), zones.seats[0])
    # each seat faces its own table edge (the table is a little askew, so a little off the axes)
    assert zones.facing is not None
    for angle, edge in zip(zones.facing, (0, 270, 180, 180, 90, 0)):
        assert min(abs(angle - edge), 360 - abs(angle - edge)) <= 3
    # a pile zone is a few marker sides wide round its marker
    xs = [x for x, _ in zones.stock]
    assert 0.1 < (max(xs) - min(xs)) * W / 56 < 8


def test_without_markers_the_default_layout_and_notes_saying_so() -> None:
    blank = np.full((H, W, 3), 90, np.uint8)
    proposal = propose_zones(blank, 6, NAMES)
    assert proposal.zones == default_zones(6)
    text = " ".join(proposal.notes)
    assert "found 0 of the 4 table corner markers" in text
    assert "no seat markers (ids 20-25)" in text
    assert "no stock marker (id 10)" in text and "no discard marker (id 11)" in text


def test_three_corners_and_some_seats() -> None:
    spots = {20: SEAT_SPOTS[20], 23: SEAT_SPOTS[23]}
    frame = table_frame({0: CORNERS[0], 1: CORNERS[1], 3: CORNERS[3], **spots}, seed=5)
    proposal = propose_zones(frame, 6, NAMES)
    text = " ".join(proposal.notes)
    assert "table corner marker 2 (bottom-right) not found: the table is completed as a parallelogram" in text
    assert "no marker for seat(s) 2, 3, 5, 6: placed evenly between the seats found" in text
    seats = proposal.zones.seats
    assert point_in_polygon(rel(SEAT_SPOTS[20]), seats[0]) and point_in_polygon(rel(SEAT_SPOTS[23]), seats[3])
    # the seats between keep their clockwise places: seat 2 on the left end, seat 5 on the right
    assert point_in_polygon(rel((200, 540)), seats[1]) and point_in_polygon(rel((1720, 560)), seats[4])
    # the missing corner is the parallelogram's fourth point
    x, y = proposal.table[2]
    assert abs(x - (CORNERS[1][0] + CORNERS[3][0] - CORNERS[0][0])) < 3
    assert abs(y - (CORNERS[1][1] + CORNERS[3][1] - CORNERS[0][1])) < 3


def test_seat_markers_out_of_order_are_followed_with_a_warning() -> None:
    spots = dict(SEAT_SPOTS)
    spots[21], spots[24] = SEAT_SPOTS[24], SEAT_SPOTS[21]  # seats 2 and 5 swapped
    markers = {mid: _marker(mid, at) for mid, at in {**CORNERS, **spots}.items()}
    proposal = layout_zones(6, (W, H), markers, NAMES)
    assert any("do not go round the table clockwise" in n for n in proposal.notes)
    assert point_in_polygon(rel(spots[21]), proposal.zones.seats[1])
    assert point_in_polygon(rel(spots[24]), proposal.zones.seats[4])


def _marker(mid: int, at: tuple[float, float], side: float = 56):  # type: ignore[no-untyped-def]
    from mayi_table.calibrate import Marker

    x, y = at
    h = side / 2
    return Marker(mid, ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_layouts_for_other_seat_counts_hold_their_markers(n: int) -> None:
    edge_spots = [(960, 1000), (100, 540), (600, 80), (1300, 80), (1830, 540), (1500, 1000), (400, 1000), (960, 80)]
    # put n seat markers clockwise round the table
    order = sorted(edge_spots, key=lambda p: _clockwise_key(p))[:n]
    markers = {20 + i: _marker(20 + i, at) for i, at in enumerate(order)}
    proposal = layout_zones(n, (W, H), markers)
    for i, at in enumerate(order):
        assert point_in_polygon(rel(at), proposal.zones.seats[i])


def _clockwise_key(p: tuple[float, float]) -> float:
    import math

    a = math.atan2(p[1] - 540, p[0] - 960)  # on screen, y down: growing angle is clockwise
    return (a - math.pi / 2) % (2 * math.pi)  # from straight down


def test_piles_laid_close_get_smaller_zones_that_do_not_overlap() -> None:
    markers = {10: _marker(10, (900, 540)), 11: _marker(11, (1030, 540))}
    proposal = layout_zones(4, (W, H), markers)
    assert any("the stock and discard markers lie close together" in n for n in proposal.notes)
    stock, discard = proposal.zones.stock, proposal.zones.discard
    assert max(x for x, _ in stock) <= min(x for x, _ in discard)
    assert point_in_polygon(rel((900, 540)), stock) and point_in_polygon(rel((1030, 540)), discard)
    far = layout_zones(4, (W, H), {10: _marker(10, (700, 540)), 11: _marker(11, (1200, 540))})
    xs = [x * W for x, _ in far.zones.stock]
    assert max(xs) - min(xs) == pytest.approx(5 * 56, abs=2)  # the usual size: five marker sides


def test_bad_layouts_are_refused() -> None:
    with pytest.raises(CalibrationError, match="1 to 30 seats"):
        layout_zones(0, (W, H))
    same = {i: _marker(i, (500, 500)) for i in range(4)}
    with pytest.raises(CalibrationError, match="on top of each other"):
        layout_zones(4, (W, H), same)
    with pytest.raises(CalibrationError, match="not an image"):
        propose_zones(np.zeros((4, 4, 3), np.uint8), 2)


def test_the_picture_shows_the_zones(full_frame: np.ndarray) -> None:
    proposal = propose_zones(full_frame, 6, NAMES)
    picture = draw_zones(full_frame, proposal, NAMES)
    assert picture.shape == full_frame.shape and not np.array_equal(picture, full_frame)
    assert np.array_equal(full_frame, table_frame({**CORNERS, **PILES, **SEAT_SPOTS}))  # the frame is untouched


def test_the_marker_sheet_is_readable(tmp_path: Path) -> None:
    out = tmp_path / "markers.png"
    ids = write_marker_sheet(out, 6, NAMES)
    assert ids == [mid for mid, _ in marker_plan(6)] == [0, 1, 2, 3, 10, 11, 20, 21, 22, 23, 24, 25]
    sheet = cv2.imread(str(out), cv2.IMREAD_GRAYSCALE)
    assert sheet.shape == (3507, 2480)  # A4 at 300 dpi
    assert sorted(detect_markers(cv2.resize(sheet, None, fx=0.5, fy=0.5))) == ids
    with pytest.raises(CalibrationError, match="do not fit on one A4 page"):
        write_marker_sheet(tmp_path / "big.png", 30)


# ------------------------------------------------------------------ the command


def test_calibrate_writes_the_zones_and_the_picture(tmp_path: Path, full_frame: np.ndarray) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(DEFAULT.read_text(encoding="utf-8"), encoding="utf-8")
    frame = tmp_path / "frame.png"
    assert cv2.imwrite(str(frame), full_frame)
    picture = tmp_path / "zones.png"
    said: list[str] = []
    assert calibrate_main(config, frame, picture, dry_run=False, echo=said.append) == 0
    text = "\n".join(said)
    assert "markers found: 0 (table corner, top-left), 1 (table corner, top-right)" in text
    assert "25 (seat 6 (Seat 6))" in text
    assert f"wrote the zones into {config}" in text
    loaded = load_config(config)
    assert loaded.zones == propose_zones(full_frame, 6, NAMES).zones
    assert "  # Seat 3\n" in config.read_text(encoding="utf-8")
    assert "# The camera: picamera2" in config.read_text(encoding="utf-8")  # comments kept
    shown = cv2.imread(str(picture))
    assert shown is not None and shown.shape == full_frame.shape


def test_calibrate_dry_run_and_camera_frames(tmp_path: Path, full_frame: np.ndarray) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    assert cv2.imwrite(str(frames / "f1.png"), full_frame)
    config = tmp_path / "config.yaml"
    original = DEFAULT.read_text(encoding="utf-8").replace(
        "  source: picamera2\n  width: 1920\n  height: 1080\n", f"  source: folder\n  path: {frames}\n  fps: 100\n"
    )
    config.write_text(original, encoding="utf-8")
    said: list[str] = []
    assert calibrate_main(config, None, tmp_path / "z.png", dry_run=True, echo=said.append) == 0
    assert config.read_text(encoding="utf-8") == original
    text = "\n".join(said)
    assert "frame: from the folder camera (1920x1080)" in text
    assert "dry run: the config is unchanged; the zones would be:\nzones:\n  seats:\n    - [[" in text


def test_calibrate_errors_are_messages_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(DEFAULT.read_text(encoding="utf-8"), encoding="utf-8")
    said: list[str] = []
    assert calibrate_main(config, tmp_path / "none.png", tmp_path / "z.png", echo=said.append) == 2
    assert said[-1].startswith("error: cannot read the image") and "none.png" in said[-1]
    broken = tmp_path / "broken.yaml"
    broken.write_text(DEFAULT.read_text(encoding="utf-8").replace("port: 8000", "port: -1"), encoding="utf-8")
    assert calibrate_main(broken, None, tmp_path / "z.png", echo=said.append) == 2
    assert said[-1].startswith(f"error: {broken}:") and "web.port" in said[-1]
    # the default camera is picamera2, which this machine lacks
    assert calibrate_main(config, None, tmp_path / "z.png", echo=said.append) == 2
    assert said[-1].startswith("error: camera: picamera2 is not importable")
    blank = tmp_path / "blank.png"
    assert cv2.imwrite(str(blank), np.zeros((100, 100, 3), np.uint8))
    assert calibrate_main(config, blank, tmp_path / "no" / "such" / "dir.png", echo=said.append) == 2
    assert "cannot write the picture" in said[-1]
    assert config.read_text(encoding="utf-8") == DEFAULT.read_text(encoding="utf-8")
