"""The engine of ``mayi-table calibrate``: find the table in a camera frame and write its zones.

Lay printed ArUco markers (dictionary DICT_4X4_50; :func:`write_marker_sheet` prints them) on the
table, take one frame, and :func:`calibrate_main` proposes the zones, draws them on a picture to
check, and writes them into the config's ``zones:`` block. Remove the markers before playing.

The marker plan (ids):

- 0, 1, 2, 3: the table's corners as the camera sees them: top-left, top-right, bottom-right,
  bottom-left. With one missing, the table is completed as a parallelogram; with fewer than three,
  the whole frame counts as the table.
- 10: where the stock lies; 11: where the discard pile lies (each zone is a square about five
  marker sides wide round its marker, turned with it). Without them, stock and discard sit side by
  side in the middle of the table.
- 20 + i: seat i's spot (i counts from 0 in the config's order: the first seat is 20), laid at the
  table edge in front of the player. Without them, the seats are spread evenly round the table,
  clockwise from the middle of the bottom edge, as in the shipped config.

Seat zones run from the table edge 55% of the way to the centre, split halfway between
neighbouring seats along the edge, so together they form a ring round the middle where the stock
and discard lie. Geometry is worked out in pixels (so a long side counts as long) and written in
relative coordinates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from pydantic import ValidationError

from .config import ConfigError, Point, Zones, load_config, point_in_polygon, write_zones, zones_yaml

if TYPE_CHECKING:
    import numpy as np

    from .config import DeviceConfig

DICTIONARY = "DICT_4X4_50"
CORNER_IDS = (0, 1, 2, 3)  # top-left, top-right, bottom-right, bottom-left (in the camera's view)
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")
STOCK_ID = 10
DISCARD_ID = 11
SEAT_ID0 = 20
MAX_SEATS = 30  # ids 20..49 exist in DICT_4X4_50
RING_INNER = 0.45  # a seat zone's inner edge lies at 45% of the way from the centre to the table edge
PILE_SCALE = 5.0  # a pile zone is this many marker sides wide
FRAME_MARGIN = 0.01  # without corner markers the table is the frame less this margin
# stock and discard without markers, in table coordinates (u from the left edge, v from the top)
DEFAULT_STOCK_UV = ((0.38, 0.38), (0.48, 0.62))
DEFAULT_DISCARD_UV = ((0.52, 0.38), (0.62, 0.62))
WARMUP_FRAMES = 8  # a camera's first frames are often dark while exposure settles


class CalibrationError(ValueError):
    """A frame or layout from which no zones can be made; the message says why."""


@dataclass(frozen=True)
class Marker:
    """A detected marker: its id and its four corners in pixels (ArUco order: clockwise from the
    marker's own top-left)."""

    id: int
    corners: tuple[Point, Point, Point, Point]

    @property
    def centre(self) -> Point:
        return (sum(p[0] for p in self.corners) / 4, sum(p[1] for p in self.corners) / 4)

    @property
    def side(self) -> float:
        c = self.corners
        return sum(math.dist(c[i], c[(i + 1) % 4]) for i in range(4)) / 4


@dataclass
class Proposal:
    """Proposed zones (relative), the table outline (pixels, clockwise from top-left), the markers
    they came from, and notes on what was assumed."""

    zones: Zones
    table: list[Point]
    frame: tuple[int, int]
    markers: dict[int, Marker] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ markers


def _aruco() -> tuple[Any, Any]:
    import cv2

    return cv2, cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, DICTIONARY))


def detect_markers(image: np.ndarray, notes: list[str] | None = None) -> dict[int, Marker]:
    """The DICT_4X4_50 markers in a BGR (or grey) image by id. A marker seen twice keeps its
    larger copy (and a note says so)."""
    cv2, dictionary = _aruco()
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(grey)
    found: dict[int, Marker] = {}
    if ids is None:
        return found
    for quad, mid in zip(corners, ids.flatten()):
        pts = quad.reshape(4, 2)
        m = Marker(int(mid), tuple((float(x), float(y)) for x, y in pts))  # type: ignore[arg-type]
        if m.id in found:
            if notes is not None:
                notes.append(f"marker {m.id} is seen twice; the larger one is used")
            if found[m.id].side >= m.side:
                continue
        found[m.id] = m
    return found


# ------------------------------------------------------------------ geometry (pixels)


def _lerp(a: Point, b: Point, t: float) -> Point:
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)


def _clockwise(points: Sequence[Point]) -> list[Point]:
    """The points ordered clockwise on screen (y down) from the one nearest the top-left."""
    cx = sum(p[0] for p in points) / len(points)
    cy = sum(p[1] for p in points) / len(points)
    ordered = sorted(points, key=lambda p: math.atan2(p[1] - cy, p[0] - cx))
    start = min(range(len(ordered)), key=lambda i: ordered[i][0] + ordered[i][1])
    return ordered[start:] + ordered[:start]


def _diagonal_centre(q: Sequence[Point]) -> Point:
    """Where the diagonals of quad q cross: the table's centre under perspective."""
    (x1, y1), (x3, y3) = q[0], q[2]
    (x2, y2), (x4, y4) = q[1], q[3]
    d = (x1 - x3) * (y2 - y4) - (y1 - y3) * (x2 - x4)
    if abs(d) < 1e-9:
        return (sum(p[0] for p in q) / 4, sum(p[1] for p in q) / 4)
    a = x1 * y3 - y1 * x3
    b = x2 * y4 - y2 * x4
    return ((a * (x2 - x4) - (x1 - x3) * b) / d, (a * (y2 - y4) - (y1 - y3) * b) / d)


def _bilinear(q: Sequence[Point], u: float, v: float) -> Point:
    return _lerp(_lerp(q[0], q[1], u), _lerp(q[3], q[2], u), v)


class _Perimeter:
    """The table's edge as a closed path, walked clockwise on screen from the middle of the bottom
    edge; positions along it are distances in pixels."""

    def __init__(self, quad: Sequence[Point]) -> None:
        tl, tr, br, bl = quad
        self.path = [_lerp(br, bl, 0.5), bl, tl, tr, br]
        self.cum = [0.0]
        for i in range(len(self.path)):
            self.cum.append(self.cum[-1] + math.dist(self.path[i], self.path[(i + 1) % len(self.path)]))
        self.length = self.cum[-1]

    def at(self, s: float) -> Point:
        s %= self.length
        for i in range(len(self.path)):
            if s <= self.cum[i + 1]:
                seg = self.cum[i + 1] - self.cum[i]
                t = (s - self.cum[i]) / seg if seg else 0.0
                return _lerp(self.path[i], self.path[(i + 1) % len(self.path)], t)
        return self.path[0]

    def between(self, lo: float, hi: float) -> list[Point]:
        """The path from position lo to hi (hi > lo, unwrapped), with every vertex passed."""
        pts = [self.at(lo)]
        for k in range(math.floor(lo / self.length), math.floor(hi / self.length) + 1):
            for i in range(1, len(self.path)):
                s = k * self.length + self.cum[i]
                if lo < s < hi:
                    pts.append(self.path[i])
        pts.append(self.at(hi))
        return pts

    def outward(self, s: float, centre: Point) -> float:
        """The facing of a seat at position s: the angle (degrees counter-clockwise, 0 = towards the
        bottom of the image) of the table edge's outward normal there."""
        s %= self.length
        i = next((k for k in range(len(self.path)) if s <= self.cum[k + 1]), 0)
        a, b = self.path[i], self.path[(i + 1) % len(self.path)]
        nx, ny = b[1] - a[1], a[0] - b[0]
        p = self.at(s)
        if nx * (p[0] - centre[0]) + ny * (p[1] - centre[1]) < 0:
            nx, ny = -nx, -ny
        return round(math.degrees(math.atan2(nx, ny)) % 360.0) % 360

    def project(self, p: Point) -> tuple[float, Point]:
        """The position and point of the edge nearest p."""
        best = (math.inf, 0.0, self.path[0])
        for i in range(len(self.path)):
            a, b = self.path[i], self.path[(i + 1) % len(self.path)]
            seg = self.cum[i + 1] - self.cum[i]
            if seg == 0:
                continue
            t = ((p[0] - a[0]) * (b[0] - a[0]) + (p[1] - a[1]) * (b[1] - a[1])) / (seg * seg)
            t = min(1.0, max(0.0, t))
            q = _lerp(a, b, t)
            d = math.dist(p, q)
            if d < best[0]:
                best = (d, self.cum[i] + t * seg, q)
        return best[1], best[2]


def _table(frame: tuple[int, int], markers: Mapping[int, Marker], notes: list[str]) -> list[Point]:
    w, h = frame
    found = {i: markers[i].centre for i in CORNER_IDS if i in markers}
    if len(found) == 4:
        return _clockwise(list(found.values()))
    if len(found) == 3:
        (missing,) = [i for i in CORNER_IDS if i not in found]
        prev, nxt, opposite = found[(missing - 1) % 4], found[(missing + 1) % 4], found[(missing + 2) % 4]
        found[missing] = (prev[0] + nxt[0] - opposite[0], prev[1] + nxt[1] - opposite[1])
        notes.append(
            f"table corner marker {missing} ({CORNER_NAMES[missing]}) not found: the table is completed as a "
            "parallelogram"
        )
        return _clockwise([found[i] for i in CORNER_IDS])
    mx, my = FRAME_MARGIN * w, FRAME_MARGIN * h
    notes.append(f"found {len(found)} of the 4 table corner markers (ids 0-3): the whole frame is taken as the table")
    return [(mx, my), (w - mx, my), (w - mx, h - my), (mx, h - my)]


def _even_offset(n: int, edge: _Perimeter) -> float:
    """Where evenly spread seats start, in seat spacings from the middle of the bottom edge: the
    offset that keeps every seat furthest from a corner (nobody sits at a corner), the first
    seat nearest the bottom middle on ties. Four seats get one side each, six get two per long side."""
    corners = edge.cum[1 : len(edge.path)]
    step = edge.length / n

    def clearance(offset: float) -> float:
        seats = [(i + offset) * step for i in range(n)]
        return min(min(abs(s - c), edge.length - abs(s - c)) for s in seats for c in corners)

    offsets = [k / 20 for k in range(20)]
    return max(offsets, key=lambda o: (round(clearance(o), 6), -min(o, 1 - o)))


def _seat_positions(n: int, edge: _Perimeter, markers: Mapping[int, Marker], notes: list[str]) -> list[float]:
    """Each seat's position along the edge: at its marker, or spread evenly (between the seats
    with markers, in the config's order, clockwise)."""
    anchors = {i: edge.project(markers[SEAT_ID0 + i].centre)[0] for i in range(n) if SEAT_ID0 + i in markers}
    even = edge.length / n
    if not anchors:
        notes.append(
            f"no seat markers (ids {SEAT_ID0}-{SEAT_ID0 + n - 1}): the {n} seats are spread evenly round the table, "
            "clockwise from the bottom edge"
        )
        return [(i + _even_offset(n, edge)) * even for i in range(n)]
    order = sorted(anchors, key=lambda i: anchors[i])
    start = order.index(min(order))
    in_order = order[start:] + order[:start] == sorted(order)
    if len(anchors) == n:
        if not in_order:
            notes.append(
                "the seat markers do not go round the table clockwise in the seats' order: each zone follows its "
                "marker, but check the order of `seats:` in the config"
            )
        return [anchors[i] for i in range(n)]
    if not in_order:
        notes.append("the seat markers found do not go round clockwise in the seats' order: only the first is used")
        first = min(anchors)
        anchors = {first: anchors[first]}
    missing = [i for i in range(n) if i not in anchors]
    notes.append(
        "no marker for seat(s) " + ", ".join(str(i + 1) for i in missing) + ": placed evenly between the seats found"
    )
    known = sorted(anchors)
    pos = dict(anchors)
    for i in missing:
        before = max((k for k in known if k < i), default=known[-1])
        after = min((k for k in known if k > i), default=known[0])
        steps = (after - before) % n or n
        span = (pos[after] - pos[before]) % edge.length if after != before else edge.length
        pos[i] = pos[before] + span * (((i - before) % n) / steps)
    return [pos[i] % edge.length for i in range(n)]


def _seat_polygons(
    positions: Sequence[float], edge: _Perimeter, centre: Point, markers: Mapping[int, Marker]
) -> list[list[Point]]:
    n = len(positions)
    order = sorted(range(n), key=lambda i: positions[i])
    polys: list[list[Point]] = [[] for _ in range(n)]
    for k, i in enumerate(order):
        s = positions[i]
        if n == 1:
            lo, hi = s - edge.length / 2, s + edge.length / 2
        else:
            prev = positions[order[k - 1]]
            nxt = positions[order[(k + 1) % n]]
            lo = s - ((s - prev) % edge.length) / 2
            hi = s + ((nxt - s) % edge.length) / 2
        inner = RING_INNER
        if SEAT_ID0 + i in markers:
            # a marker laid well inside the table still falls in its own zone
            m = markers[SEAT_ID0 + i].centre
            reach = math.dist(centre, edge.project(m)[1])
            if reach > 0:
                inner = min(inner, 0.8 * math.dist(centre, m) / reach)
        outer = edge.between(lo, hi)
        polys[i] = outer + [_lerp(centre, p, inner) for p in reversed(outer)]
    return polys


def _pile(
    marker: Marker | None, table: Sequence[Point], uv: tuple[Point, Point], scale: float = PILE_SCALE
) -> list[Point]:
    if marker is not None:
        c = marker.centre
        return [_lerp(c, p, scale) for p in marker.corners]
    (u1, v1), (u2, v2) = uv
    return [_bilinear(table, u1, v1), _bilinear(table, u2, v1), _bilinear(table, u2, v2), _bilinear(table, u1, v2)]


def _relative(points: Sequence[Point], frame: tuple[int, int]) -> list[Point]:
    """Pixels to relative coordinates (3 decimals, clipped to the frame), without repeated points
    (a zone boundary that falls on a table corner would give one twice)."""
    w, h = frame
    out: list[Point] = []
    for x, y in points:
        p = (round(min(1.0, max(0.0, x / w)), 3), round(min(1.0, max(0.0, y / h)), 3))
        if not out or p != out[-1]:
            out.append(p)
    while len(out) > 1 and out[-1] == out[0]:
        out.pop()
    return out


def _overlap(a: Sequence[Point], b: Sequence[Point]) -> float:
    """The area two convex quads share, in square pixels."""
    import cv2
    import numpy as np

    area, _ = cv2.intersectConvexConvex(np.array(a, np.float32), np.array(b, np.float32))
    return float(area)


def _piles(table: Sequence[Point], markers: Mapping[int, Marker], notes: list[str]) -> dict[str, list[Point]]:
    """Stock and discard zones (pixels): round their markers, shrunk where they would overlap
    (one card seen in both would belong to neither)."""
    piles: dict[str, list[Point]] = {}
    for key, mid, uv, where in (
        ("stock", STOCK_ID, DEFAULT_STOCK_UV, "left of"),
        ("discard", DISCARD_ID, DEFAULT_DISCARD_UV, "right of"),
    ):
        if mid not in markers:
            notes.append(f"no {key} marker (id {mid}): the {key} zone is placed just {where} the table's centre")
        piles[key] = _pile(markers.get(mid), table, uv)
    stock, discard = markers.get(STOCK_ID), markers.get(DISCARD_ID)
    if stock is not None and discard is not None:
        scale = PILE_SCALE
        while scale > 1.2 and _overlap(piles["stock"], piles["discard"]) > 0:
            scale *= 0.9
            piles["stock"] = _pile(stock, table, DEFAULT_STOCK_UV, scale)
            piles["discard"] = _pile(discard, table, DEFAULT_DISCARD_UV, scale)
        if scale < PILE_SCALE:
            notes.append(
                f"the stock and discard markers lie close together: their zones are {scale / PILE_SCALE:.0%} of the "
                "usual size so they do not overlap; lay the markers further apart for room round the piles"
            )
    return piles


def layout_zones(
    n_seats: int,
    frame: tuple[int, int],
    markers: Mapping[int, Marker] | None = None,
    seat_names: Sequence[str] | None = None,
) -> Proposal:
    """Zones for `n_seats` seats in a frame of `frame` (width, height) pixels from the markers found
    (see the module's marker plan); without markers, the default layout. Notes say what was assumed."""
    if not 1 <= n_seats <= MAX_SEATS:
        raise CalibrationError(f"calibration handles 1 to {MAX_SEATS} seats, not {n_seats}")
    markers = dict(markers or {})
    names = list(seat_names) if seat_names else [f"seat {i + 1}" for i in range(n_seats)]
    notes: list[str] = []
    table = _table(frame, markers, notes)
    centre = _diagonal_centre(table)
    edge = _Perimeter(table)
    if edge.length < 4:
        raise CalibrationError("the table corner markers lie on top of each other")
    positions = _seat_positions(n_seats, edge, markers, notes)
    seats = _seat_polygons(positions, edge, centre, markers)
    piles = _piles(table, markers, notes)
    try:
        zones = Zones(
            seats=[_relative(p, frame) for p in seats],
            stock=_relative(piles["stock"], frame),
            discard=_relative(piles["discard"], frame),
            facing=[float(edge.outward(s, centre)) for s in positions],
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise CalibrationError(
            f"the markers give an unusable zone ({where}: {first['msg']}); check their places"
        ) from None
    for key, mid in (("stock", STOCK_ID), ("discard", DISCARD_ID)):
        if mid in markers:
            c = _relative([markers[mid].centre], frame)[0]
            for i, poly in enumerate(zones.seats):
                if point_in_polygon(c, poly):
                    notes.append(f"the {key} marker lies in {names[i]}'s zone: lay it nearer the table's centre")
    for i in range(n_seats):
        if SEAT_ID0 + i in markers:
            c = _relative([markers[SEAT_ID0 + i].centre], frame)[0]
            if not point_in_polygon(c, zones.seats[i]):
                notes.append(f"{names[i]}'s marker lies outside its zone: lay it at the table edge")
    return Proposal(zones, table, frame, markers, notes)


def propose_zones(image: np.ndarray, n_seats: int, seat_names: Sequence[str] | None = None) -> Proposal:
    """Detect the markers in a BGR frame and lay out the zones (see :func:`layout_zones`)."""
    if image is None or image.ndim not in (2, 3) or image.shape[0] < 16 or image.shape[1] < 16:
        raise CalibrationError("the frame is empty or not an image")
    notes: list[str] = []
    markers = detect_markers(image, notes)
    h, w = image.shape[:2]
    unknown = sorted(
        i
        for i in markers
        if i not in CORNER_IDS and i not in (STOCK_ID, DISCARD_ID) and not 0 <= i - SEAT_ID0 < n_seats
    )
    if unknown:
        notes.append(
            f"markers {', '.join(map(str, unknown))} mean nothing here (seats use {SEAT_ID0}-"
            f"{SEAT_ID0 + n_seats - 1}) and are ignored"
        )
    proposal = layout_zones(n_seats, (w, h), markers, seat_names)
    proposal.notes[:0] = notes
    return proposal


# ------------------------------------------------------------------ pictures


_COLOURS = [  # BGR, distinct enough for ten seats; stock and discard get the last two
    (60, 180, 255),
    (255, 160, 60),
    (120, 220, 120),
    (200, 120, 255),
    (80, 220, 220),
    (255, 120, 160),
    (40, 90, 230),
    (230, 230, 90),
    (160, 60, 160),
    (90, 160, 40),
    (255, 255, 255),
    (150, 150, 150),
]


def draw_zones(image: np.ndarray, proposal: Proposal, seat_names: Sequence[str] | None = None) -> np.ndarray:
    """A copy of the frame with the table outline, the zones (tinted, outlined, labelled), the
    markers found and the notes drawn on it."""
    import cv2
    import numpy as np

    out: np.ndarray = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    h, w = out.shape[:2]
    names = list(seat_names or [f"seat {i + 1}" for i in range(len(proposal.zones.seats))])
    labelled = [(names[i] if i < len(names) else f"seat {i + 1}", p) for i, p in enumerate(proposal.zones.seats)]
    labelled += [("stock", proposal.zones.stock), ("discard", proposal.zones.discard)]
    tint = out.copy()
    polys = []
    colours = [_COLOURS[k % 10] for k in range(len(labelled) - 2)] + [_COLOURS[10], _COLOURS[11]]
    for (_, poly), colour in zip(labelled, colours):
        pts = np.array([[x * w, y * h] for x, y in poly], np.int32)
        polys.append(pts)
        cv2.fillPoly(tint, [pts], colour)
    out = np.asarray(cv2.addWeighted(tint, 0.25, out, 0.75, 0))
    table = np.array(proposal.table, np.int32)
    cv2.polylines(out, [table], True, (255, 255, 255), 2, cv2.LINE_AA)
    scale = max(0.5, h / 1080)
    for (label, _), pts, colour in zip(labelled, polys, colours):
        cv2.polylines(out, [pts], True, colour, max(2, int(3 * scale)), cv2.LINE_AA)
        cx, cy = pts.mean(axis=0)
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
        org = (int(cx - tw / 2), int(cy + th / 2))
        cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), int(5 * scale), cv2.LINE_AA)
        cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, max(1, int(2 * scale)), cv2.LINE_AA)
    if proposal.markers:
        ids = np.array([[m.id] for m in proposal.markers.values()], np.int32)
        quads = [np.array([m.corners], np.float32) for m in proposal.markers.values()]
        cv2.aruco.drawDetectedMarkers(out, quads, ids, (0, 0, 255))
    for i, note in enumerate(proposal.notes):
        org = (10, int((30 + 28 * i) * scale))
        cv2.putText(out, note, org, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), int(4 * scale), cv2.LINE_AA)
        cv2.putText(out, note, org, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 255, 255), 1, cv2.LINE_AA)
    return out


def marker_plan(n_seats: int, seat_names: Sequence[str] | None = None) -> list[tuple[int, str]]:
    """(id, what it marks) for every marker calibration uses with `n_seats` seats."""
    names = list(seat_names or [])
    plan = [(i, f"table corner, {CORNER_NAMES[i]}") for i in CORNER_IDS]
    plan += [(STOCK_ID, "stock"), (DISCARD_ID, "discard pile")]
    for i in range(n_seats):
        who = f" ({names[i]})" if i < len(names) else ""
        plan.append((SEAT_ID0 + i, f"seat {i + 1}{who}"))
    return plan


def write_marker_sheet(
    path: Path | str,
    n_seats: int = 8,
    seat_names: Sequence[str] | None = None,
    marker_mm: float = 35.0,
    dpi: int = 300,
) -> list[int]:
    """Save an A4 page (PNG at `dpi`) with every marker of the plan, `marker_mm` wide, each labelled
    with its id and what it marks; print it at 100% scale and cut the markers out, leaving their
    white border. Returns the ids on the sheet."""
    import cv2
    import numpy as np

    _, dictionary = _aruco()
    plan = marker_plan(n_seats, seat_names)
    px = dpi / 25.4
    page_w, page_h = int(210 * px), int(297 * px)
    margin, cols = int(12 * px), 3
    rows = math.ceil(len(plan) / cols)
    cell_w = (page_w - 2 * margin) // cols
    cell_h = (page_h - 2 * margin - int(12 * px)) // max(rows, 1)
    side = int(marker_mm * px)
    label_h = int(7 * px)
    if side + label_h > cell_h or side > cell_w - int(6 * px):
        raise CalibrationError(
            f"{len(plan)} markers of {marker_mm:g} mm do not fit on one A4 page: use fewer seats or smaller markers"
        )
    page = np.full((page_h, page_w), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    title = f"May I? Table calibration markers (ArUco {DICTIONARY}), {marker_mm:g} mm: print at 100% scale"
    cv2.putText(page, title, (margin, margin + int(4 * px)), font, px * 0.14, 0, max(1, int(px * 0.3)), cv2.LINE_AA)
    top = margin + int(12 * px)
    for k, (mid, what) in enumerate(plan):
        r, c = divmod(k, cols)
        x0 = margin + c * cell_w + (cell_w - side) // 2
        y0 = top + r * cell_h
        page[y0 : y0 + side, x0 : x0 + side] = cv2.aruco.generateImageMarker(dictionary, mid, side, borderBits=1)
        label = f"{mid}: {what}"
        cv2.putText(page, label, (x0, y0 + side + int(5 * px)), font, px * 0.12, 0, max(1, int(px * 0.25)), cv2.LINE_AA)
    out = Path(path)
    if not cv2.imwrite(str(out), page):
        raise CalibrationError(f"cannot write {out}: check the folder exists and the file name ends in .png")
    return [mid for mid, _ in plan]


# ------------------------------------------------------------------ the command


def grab_frame(config: DeviceConfig, warmup: int = WARMUP_FRAMES) -> np.ndarray:
    """A frame from the configured camera, after `warmup` frames for exposure to settle."""
    from .hardware.camera import CameraError, Frame, open_source

    source = open_source(config.camera)
    last: Frame | None = None
    try:
        source.open()
        for _ in range(max(1, warmup)):
            frame = source.read()
            if frame is None:
                break
            last = frame
    except CameraError:
        raise
    except Exception as exc:  # camera libraries raise anything
        raise CameraError(f"{source.describe()}: {exc}") from exc
    finally:
        source.close()
    if last is None:
        raise CameraError(f"{source.describe()} gave no frame")
    image: np.ndarray = last.image
    return image


def frames_for(
    config: DeviceConfig,
    paths: Sequence[Path],
    echo: Callable[[str], None],
    grab: Callable[[DeviceConfig], np.ndarray] = grab_frame,
) -> list[np.ndarray] | None:
    """The images at `paths`, else one frame of the configured camera, each said as it is taken;
    None, with the error said, when one cannot be had."""
    import cv2

    from .hardware.camera import CameraError

    images = []
    for path in paths:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            echo(f"error: cannot read the image {path} (missing, or not a picture OpenCV knows)")
            return None
        echo(f"frame: {path} ({image.shape[1]}x{image.shape[0]})")
        images.append(image)
    if not images:
        try:
            image = grab(config)
        except CameraError as exc:
            echo(f"error: camera: {exc}")
            return None
        echo(f"frame: from the {config.camera.source} camera ({image.shape[1]}x{image.shape[0]})")
        images.append(image)
    return images


def calibrate_main(
    config_path: Path | str,
    frame_path: Path | str | None = None,
    out_picture: Path | str = "calibration.png",
    dry_run: bool = False,
    *,
    echo: Callable[[str], None] = print,
    grab: Callable[[DeviceConfig], np.ndarray] = grab_frame,
) -> int:
    """Propose zones from a frame (the image at `frame_path`, else the configured camera), save the
    picture with the zones drawn to `out_picture`, and unless `dry_run` write them into the config.
    Returns the exit code: 0 done, 2 the config, frame or picture could not be used."""
    import cv2

    try:
        config = load_config(config_path, skip_zones=True)
    except ConfigError as exc:
        echo(f"error: {exc}")
        return 2
    frames = frames_for(config, [Path(frame_path)] if frame_path is not None else [], echo, grab)
    if frames is None:
        return 2
    image = frames[0]
    names = config.seat_names
    try:
        proposal = propose_zones(image, len(names), names)
    except CalibrationError as exc:
        echo(f"error: {exc}")
        return 2
    plan = dict(marker_plan(len(names), names))
    found = sorted(proposal.markers)
    echo("markers found: " + (", ".join(f"{i} ({plan.get(i, 'unused')})" for i in found) if found else "none"))
    for note in proposal.notes:
        echo(f"note: {note}")
    picture = draw_zones(image, proposal, names)
    if not cv2.imwrite(str(out_picture), picture):
        echo(f"error: cannot write the picture {out_picture} (does its folder exist? is it .png or .jpg?)")
        return 2
    echo(f"picture with the zones drawn: {out_picture}")
    if dry_run:
        echo("dry run: the config is unchanged; the zones would be:")
        echo(zones_yaml(proposal.zones, names).rstrip("\n"))
        return 0
    try:
        write_zones(config_path, proposal.zones, names)
    except (ConfigError, OSError) as exc:
        echo(f"error: cannot write the zones into {config_path}: {exc}")
        return 2
    echo(f"wrote the zones into {config_path}; restart to use them: sudo systemctl restart mayi-table")
    return 0


def marker_sheet_main(
    out: Path | str, config_path: Path | str | None = None, *, echo: Callable[[str], None] = print
) -> int:
    """Write the printable marker sheet for the configured seats (8 seats without a config)."""
    names: list[str] | None = None
    if config_path is not None:
        try:
            names = load_config(config_path, skip_zones=True).seat_names
        except ConfigError as exc:
            echo(f"error: {exc}")
            return 2
    try:
        ids = write_marker_sheet(out, len(names) if names else 8, names)
    except CalibrationError as exc:
        echo(f"error: {exc}")
        return 2
    echo(f"marker sheet with ids {', '.join(map(str, ids))}: {out} (print at 100% scale, A4)")
    return 0
