"""Recognised cards -> zones -> melds -> stable table snapshots.

`TableReader.feed(cards, frame, t)` takes one frame's `PhysicalCard`s (and the frame itself, for
cover detection) and returns a `TableSnapshot` when the table has read the same way for
`stable_frames` accepted frames in a row and differs from the last snapshot it published; else None.

- Cover: a frame where a hand or arm is over the table (new skin-coloured blobs against the last
  accepted frame, or a large share of the frame changed) is skipped: it neither counts towards
  stability nor breaks it. A camera moved for good would be skipped forever, so after
  `max_covered` skipped frames in a row the frame is accepted as the new reference; a view that
  holds still for `settle_frames` frames is accepted too (and counts as stable at once).
- Replaced cards: a tracked card back after frames in which it was not seen (under an arm, whether
  or not the frames were skipped as covered) whose pixels changed since it was last seen gets a new
  track id (another card of the same name was put there: a KS thrown onto a KS); one that an arm
  only passed over keeps its id.
- Zones: a card belongs to the zone holding its box centre. Cards are tracked between frames
  (same name, near the same place); a tracked card keeps its zone until it has been seen in another
  zone for `inertia` frames, so a detection that wobbles over a zone border does not jump.
- Melds: a seat's cards are grouped into rows (one meld per row: an overlapping fan along the
  seat's edge) by linking cards that are close along the row and level across it; rows are listed
  from the table centre towards the seat (the order they are laid), cards from the seat's left.
- Discard top: the card of the discard zone that shows both corners (nothing covers it), the one
  that became so most recently when several do.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import cv2
import numpy as np

from ..config import point_in_polygon
from .classes import Box, PhysicalCard, Readings

Point = tuple[float, float]
Polygon = tuple[Point, ...]


class ZonesError(ValueError):
    """Zones that cannot be used: a polygon with fewer than 3 points, or points outside 0..1."""


def _polygon(value: Any, what: str) -> Polygon:
    try:
        pts = tuple((float(p[0]), float(p[1])) for p in value)
    except (TypeError, ValueError, IndexError):
        raise ZonesError(f"{what} must be a list of [x, y] points, not {value!r}") from None
    if len(pts) < 3:
        raise ZonesError(f"{what} needs at least 3 points, has {len(pts)}")
    if not all(0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 for x, y in pts):
        raise ZonesError(f"{what} has points outside the frame (relative coordinates are 0.0-1.0)")
    return pts


@dataclass(frozen=True)
class Zones:
    """Table zones as polygons in relative frame coordinates (0..1, y down).

    `seats` are in playing order. `facing` gives, per seat, the angle (degrees counter-clockwise)
    at which that seat's cards lie upright for its player: 0 bottom edge, 90 right, 180 top,
    270 left; by default the frame edge nearest the seat's zone.
    """

    seats: tuple[Polygon, ...]
    stock: Polygon
    discard: Polygon
    facing: tuple[float, ...] | None = None

    @classmethod
    def from_mapping(cls, data: Any) -> Zones:
        """From the config's `zones` mapping (or any object with `seats`, `stock`, `discard`)."""
        get = data.get if isinstance(data, Mapping) else lambda k, d=None: getattr(data, k, d)
        seats = get("seats")
        if not isinstance(seats, Sequence) or not seats:
            raise ZonesError("zones.seats must list one polygon per seat")
        facing = get("facing", None)
        return cls(
            tuple(_polygon(p, f"zones.seats[{i}]") for i, p in enumerate(seats)),
            _polygon(get("stock"), "zones.stock"),
            _polygon(get("discard"), "zones.discard"),
            tuple(float(f) for f in facing) if facing is not None else None,
        )

    @classmethod
    def four_seats(cls) -> Zones:
        """Four seats round a table that fills a 16:9 frame: bottom, left, top, right (clockwise)."""
        return cls(
            seats=(
                ((0.16, 0.70), (0.84, 0.70), (0.84, 0.99), (0.16, 0.99)),
                ((0.01, 0.14), (0.15, 0.14), (0.15, 0.86), (0.01, 0.86)),
                ((0.16, 0.01), (0.84, 0.01), (0.84, 0.30), (0.16, 0.30)),
                ((0.85, 0.14), (0.99, 0.14), (0.99, 0.86), (0.85, 0.86)),
            ),
            stock=((0.33, 0.36), (0.47, 0.36), (0.47, 0.64), (0.33, 0.64)),
            discard=((0.53, 0.36), (0.67, 0.36), (0.67, 0.64), (0.53, 0.64)),
        )

    def seat_facing(self, i: int) -> float:
        if self.facing is not None and i < len(self.facing):
            return self.facing[i]
        cx = sum(p[0] for p in self.seats[i]) / len(self.seats[i])
        cy = sum(p[1] for p in self.seats[i]) / len(self.seats[i])
        edges = {0.0: 1 - cy, 90.0: 1 - cx, 180.0: cy, 270.0: cx}
        return min(edges, key=lambda a: edges[a])


def axes_of(facing: float) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors in image coordinates: along a seat's rows (its right hand) and away from it."""
    a = math.radians(facing)
    return np.array([math.cos(a), -math.sin(a)]), np.array([-math.sin(a), -math.cos(a)])


# ------------------------------------------------------------------ what the reader publishes


@dataclass(frozen=True)
class SeenCard:
    card: str
    confidence: float
    box: Box
    anchor: Point  # pixels: the card's leading index (the one a fan leaves visible)
    corners: int
    track: int
    alternatives: Readings = ()  # the recogniser's next readings of it (see `PhysicalCard`)
    orientation: float | None = None  # degrees, as `PhysicalCard.orientation` (known from two corners)


@dataclass(frozen=True)
class SeenMeld:
    cards: tuple[SeenCard, ...]  # along the row, from the seat's left

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.card for c in self.cards)

    @property
    def centre(self) -> Point:
        return (
            sum(c.anchor[0] for c in self.cards) / len(self.cards),
            sum(c.anchor[1] for c in self.cards) / len(self.cards),
        )


@dataclass(frozen=True)
class TableSnapshot:
    t: float
    frame_no: int
    seats: tuple[tuple[SeenMeld, ...], ...]  # per seat zone, rows from the table centre outwards
    discard: tuple[SeenCard, ...]
    discard_top: SeenCard | None
    stray: tuple[SeenCard, ...]  # cards outside every zone (the stock shows only backs)
    image: np.ndarray | None = field(default=None, compare=False, repr=False)

    def seat_cards(self, i: int) -> Counter[str]:
        return Counter(c.card for m in self.seats[i] for c in m.cards)

    def all_cards(self) -> list[SeenCard]:
        out = [c for melds in self.seats for m in melds for c in m.cards]
        return out + list(self.discard) + list(self.stray)

    @property
    def min_confidence(self) -> float:
        return min((c.confidence for c in self.all_cards()), default=1.0)

    def empty(self) -> bool:
        return not self.all_cards()


# ------------------------------------------------------------------ the reader


@dataclass
class _Track:
    id: int
    card: str
    centre: Point
    zone: str
    born: int
    two_since: int | None
    seen: int
    cand_zone: str | None = None
    cand_count: int = 0
    box: Box = (0.0, 0.0, 0.0, 0.0)
    whole: Box | None = None  # the card's box when last seen with both diagonal corners
    uncovered: bool = False  # came into view as the pile top was taken: a card under it, not thrown on it


MISREAD_CORNER_BELOW = 0.9  # a pile card read by one corner below this may be another card's index misread


def _lost_corner_of(tr: _Track, items: list[tuple[PhysicalCard, _Track]]) -> bool:
    """Whether `tr` (a card seen by one corner) lies where another card of `items`, seen with both
    corners before and by one now, had its other corner."""
    x, y = _centre(tr.box)
    for c, other in items:
        if other is tr or other.whole is None or other.born > tr.born or c.orientation is not None:
            continue
        (x1, y1, x2, y2), (cx, cy) = other.whole, _centre(c.box)
        reach = max(c.box[2] - c.box[0], c.box[3] - c.box[1])
        if math.dist((x, y), (x1 + x2 - cx, y1 + y2 - cy)) < reach:
            return True
    return False


def _within(p: Point, box: Box) -> bool:
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def _centre(box: Box) -> Point:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


class TableReader:
    """Reads a stream of recognised frames into stable `TableSnapshot`s (see the module doc)."""

    def __init__(
        self,
        zones: Zones,
        stable_frames: int = 3,
        inertia: int = 3,
        min_confidence: float = 0.0,
        skin_share: float = 0.003,
        change_share: float = 0.08,
        max_covered: int = 40,
        keep_missed: int = 8,
        settle_frames: int = 3,
        frame_size: tuple[int, int] = (1920, 1080),
        replaced_share: float = 0.03,
        faint_below: float = 0.0,
    ) -> None:
        """`frame_size` (width, height) places the zones when `feed` is given no frame;
        `replaced_share`: the share of a touched card's box that must change for it to count as
        another card of the same name; `faint_below`: cards read under it are faint readings (see the
        referee), which join the row they lie in but never join two rows, and are the pile's top only
        when nothing else is."""
        if stable_frames < 1 or inertia < 1:
            raise ValueError("stable_frames and inertia must be at least 1")
        self.zones = zones
        self.stable_frames = stable_frames
        self.inertia = inertia
        self.min_confidence = min_confidence
        self.skin_share = skin_share
        self.change_share = change_share
        self.max_covered = max_covered
        self.keep_missed = keep_missed
        self.settle_frames = settle_frames
        self.frame_size = frame_size
        self.replaced_share = replaced_share
        self.faint_below = faint_below
        self.frame_no = 0
        self.covered = False  # whether the last frame was skipped as covered
        self.settled = False  # whether the last frame was accepted for holding still (it counts as stable)
        self.skipped = 0
        self._ref: np.ndarray | None = None
        self._covered_run = 0
        self._still_run = 0
        self._prev: np.ndarray | None = None
        self._grays: dict[int, np.ndarray] = {}  # recent accepted frames, grey, to see which cards were replaced
        self._tracks: list[_Track] = []
        self._next_id = 1
        self._streak: tuple[Any, int] | None = None
        self._published: Any = None
        self.last: TableSnapshot | None = None
        self._top_id: int | None = None  # the track of the pile card read as the top in the last frame
        self._top_gone = -10  # the frame in which that card was last found gone (taken, or replaced)

    # ----- cover detection -------------------------------------------------------------
    def is_covered(self, frame: np.ndarray) -> bool:
        """Whether an arm or hand is over the table, against the last accepted frame."""
        h, w = frame.shape[:2]
        small = cv2.resize(frame, (max(1, w // 8), max(1, h // 8)), interpolation=cv2.INTER_AREA)
        ref = self._ref
        if ref is None or ref.shape != small.shape:
            self._ref = self._prev = small
            return False
        changed = np.abs(small.astype(np.int16) - ref.astype(np.int16)).max(axis=2) > 30
        ycc = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
        cr, cb = ycc[..., 1], ycc[..., 2]
        skin = (changed & (cr >= 138) & (cr <= 178) & (cb >= 80) & (cb <= 135)).astype(np.uint8)
        # thin pink fringes of new red cards are no arm: keep only blobs a few cells thick
        skin = cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        covered = changed.mean() > self.change_share
        if not covered and skin.mean() > self.skin_share:
            # an arm reaches in from the table's edge: a skin blob touching the frame border; a patch
            # of skin-coloured cloth uncovered inside the table is no arm
            n, lab, stats, _ = cv2.connectedComponentsWithStats(skin, connectivity=8)
            sh, sw = skin.shape
            for k in range(1, n):
                x, y, bw, bh, area = (int(v) for v in stats[k])
                border = x == 0 or y == 0 or x + bw >= sw or y + bh >= sh
                if border and area > self.skin_share * skin.size:
                    covered = True
                    break
        prev, self._prev = self._prev, small
        if covered and prev is not None and prev.shape == small.shape:
            # a view that holds still for several frames is the table, not a moving arm (e.g. the
            # reference itself was taken with an arm in view)
            still = (np.abs(small.astype(np.int16) - prev.astype(np.int16)).max(axis=2) > 30).mean() < 0.002
            self._still_run = self._still_run + 1 if still else 0
            if self._still_run >= self.settle_frames:
                covered = False
                self.settled = True
        if covered and self._covered_run < self.max_covered:
            self._covered_run += 1
            return True
        self._covered_run = 0
        self._still_run = 0
        self._ref = small
        return False

    # ----- zones and tracks ------------------------------------------------------------
    def _zone_of(self, p: Point, size: tuple[int, int]) -> str:
        x, y = p[0] / size[0], p[1] / size[1]
        for i, poly in enumerate(self.zones.seats):
            if _inside(poly, x, y):
                return f"seat:{i}"
        if _inside(self.zones.discard, x, y):
            return "discard"
        if _inside(self.zones.stock, x, y):
            return "stock"
        return "stray"

    def _replaced(self, tr: _Track, box: Box, gray: np.ndarray | None) -> bool:
        """Whether the card of `tr`, back after frames unseen (covered by an arm or missed), is another
        card of the same name: its pixels changed between the frame it was last seen in and now."""
        before = self._grays.get(tr.seen)
        if gray is None or before is None or before.shape != gray.shape:
            return False
        h, w = gray.shape[:2]
        x1, y1 = max(0, int(min(tr.box[0], box[0]))), max(0, int(min(tr.box[1], box[1])))
        x2, y2 = min(w, int(math.ceil(max(tr.box[2], box[2])))), min(h, int(math.ceil(max(tr.box[3], box[3]))))
        if x2 <= x1 or y2 <= y1:
            return False
        diff = cv2.absdiff(before[y1:y2, x1:x2], gray[y1:y2, x1:x2])
        return float((diff > 40).mean()) >= self.replaced_share

    def _track(
        self, cards: Sequence[PhysicalCard], size: tuple[int, int], gray: np.ndarray | None = None
    ) -> list[tuple[PhysicalCard, _Track]]:
        radius = 0.03 * max(size)
        pairs: list[tuple[float, int, int]] = []
        for i, c in enumerate(cards):
            cc = _centre(c.box)
            for j, tr in enumerate(self._tracks):
                if tr.card == c.card:
                    d = math.dist(cc, tr.centre)
                    # (a card seen whole, now by one corner, moved its box centre within its old box)
                    if d < radius or (tr.whole is not None and _within(cc, tr.whole)):
                        pairs.append((d, i, j))
        pairs.sort()
        got: dict[int, _Track] = {}
        used: set[int] = set()
        for _, i, j in pairs:
            if i in got or j in used:
                continue
            got[i] = self._tracks[j]
            used.add(j)
        out = []
        for i, c in enumerate(cards):
            raw = self._zone_of(_centre(c.box), size)
            found = got.get(i)
            if found is None:
                tr = _Track(self._next_id, c.card, _centre(c.box), raw, self.frame_no, None, self.frame_no)
                self._next_id += 1
                self._tracks.append(tr)
            elif raw != found.zone:
                tr = found
                # inertia: the card moves zone only after several frames seen elsewhere
                if raw == tr.cand_zone:
                    tr.cand_count += 1
                else:
                    tr.cand_zone, tr.cand_count = raw, 1
                if tr.cand_count >= self.inertia:
                    tr.zone, tr.cand_zone, tr.cand_count = raw, None, 0
            else:
                tr = found
                tr.cand_zone, tr.cand_count = None, 0
            if found is not None and found.seen < self.frame_no - 1 and self._replaced(found, c.box, gray):
                # another card of this name was put where this one lay (a KS thrown onto a KS): a new id,
                # so the reading changes; when it became fully visible is kept, for the discard top
                found.id = self._next_id
                self._next_id += 1
            tr.centre = _centre(c.box)
            tr.box = c.box
            tr.seen = self.frame_no
            if c.orientation is not None:  # both diagonal corners seen: nothing covers the card
                tr.whole = c.box
                if tr.two_since is None:
                    tr.two_since = self.frame_no
            else:
                tr.two_since = None
            out.append((c, tr))
        self._tracks = [t for t in self._tracks if self.frame_no - t.seen <= self.keep_missed]
        return out

    # ----- one frame -------------------------------------------------------------------
    def feed(
        self,
        cards: Sequence[PhysicalCard] | Callable[[], Sequence[PhysicalCard]],
        frame: np.ndarray | None = None,
        t: float | None = None,
    ) -> TableSnapshot | None:
        """Read one frame; a snapshot when a new stable reading is reached, else None. `cards` may be
        a function that recognises the frame: it is called only when the frame is not covered."""
        self.frame_no += 1
        self.settled = False
        if frame is not None and self.is_covered(frame):
            self.covered = True
            self.skipped += 1
            return None
        self.covered = False
        if callable(cards):
            cards = cards()
        if frame is not None:
            size = (frame.shape[1], frame.shape[0])
        else:
            size = self.frame_size
        kept = [c for c in cards if c.confidence >= self.min_confidence]
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame is not None and frame.ndim == 3 else frame
        tracked = self._track(kept, size, gray)
        if gray is not None:
            self._grays[self.frame_no] = gray
            for n in [n for n in self._grays if n < self.frame_no - self.keep_missed - 1]:
                del self._grays[n]
        snap = self._read(tracked, t if t is not None else float(self.frame_no), frame)
        sig = _signature(snap)
        if self._streak is not None and self._streak[0] == sig:
            self._streak = (sig, self._streak[1] + 1)
        elif self.settled:
            # the frames that held still before this one showed the same view: they count as stable
            self._streak = (sig, self.settle_frames)
        else:
            self._streak = (sig, 1)
        if self._streak[1] >= self.stable_frames and sig != self._published:
            self._published = sig
            self.last = snap
            return snap
        return None

    def _read(self, tracked: list[tuple[PhysicalCard, _Track]], t: float, frame: np.ndarray | None) -> TableSnapshot:
        by_zone: dict[str, list[tuple[PhysicalCard, _Track]]] = {}
        for c, tr in tracked:
            by_zone.setdefault(tr.zone, []).append((c, tr))
        seats = []
        for i in range(len(self.zones.seats)):
            items = by_zone.get(f"seat:{i}", [])
            seats.append(_rows(items, self.zones.seat_facing(i), self.faint_below))
        discard_items = by_zone.get("discard", [])
        discard = tuple(_seen(c, tr, None) for c, tr in discard_items)
        top: SeenCard | None = None
        # a faint reading is the top only when the pile shows nothing surer
        sure = [k for k, (c, _) in enumerate(discard_items) if c.confidence >= self.faint_below]
        candidates = [(k, discard_items[k][1]) for k in sure or range(len(discard_items))]
        two = [(tr.two_since, tr.born, k) for k, tr in candidates if tr.two_since is not None]
        if self._top_id is not None and all(tr.id != self._top_id for _, tr in discard_items):
            self._top_gone = self.frame_no
        for _, tr in discard_items:
            tr.uncovered = tr.uncovered or abs(tr.born - self._top_gone) <= 1

        def newest(pool: list[tuple[int, _Track]]) -> SeenCard:
            # of cards that appeared together, the surer reading is the top (a new JC whose other
            # index reads JK 0.63 is a JC)
            return discard[max((tr.born, discard_items[k][0].confidence, k) for k, tr in pool)[2]]

        # a sure reading by one corner that appeared after the top came to show both lies on it (a
        # discard whose other index is misread): cards under the top do not appear anew, except as
        # the top is taken (a card deep in the pile comes into view)
        since = max(two)[0] if two else None
        # an unsure reading of both corners (a 6S's face read as a JK pair 0.61, petras film 2002 round
        # 3) does not cover a sure corner that appeared with it, even as the old top went from view
        unsure_two = bool(two) and discard_items[max(two)[2]][0].confidence < MISREAD_CORNER_BELOW
        with_unsure = since if unsure_two and since is not None and max(two)[1] == since else None
        later = [
            (k, tr)
            for k, tr in candidates
            if since is not None
            and tr.two_since is None
            and ((tr.born > since and not tr.uncovered) or tr.born == with_unsure)
            and discard_items[k][0].confidence >= MISREAD_CORNER_BELOW
        ]
        if later:
            top = newest(later)
        elif two:
            top = discard[max(two)[2]]
        elif candidates:
            # an unsure lone corner where a pile card that showed both corners has lost one is that
            # card's corner misread (a 5H whose other index reads JK 0.5), not a card thrown on it (a
            # sure one may be: a discard's index lands where the card under it had its own)
            misread = {
                k
                for k, tr in candidates
                if discard_items[k][0].confidence < MISREAD_CORNER_BELOW and _lost_corner_of(tr, discard_items)
            }
            top = newest([(k, tr) for k, tr in candidates if k not in misread] or candidates)
        self._top_id = next((tr.id for (_, tr), s in zip(discard_items, discard) if s is top), None)
        stray = tuple(
            _seen(c, tr, None) for z, items in by_zone.items() if not z.startswith("seat:") for c, tr in items
        )
        stray = tuple(s for s in stray if s not in discard)
        return TableSnapshot(t, self.frame_no, tuple(seats), discard, top, stray, frame)


def _inside(poly: Polygon, x: float, y: float) -> bool:
    return point_in_polygon((x, y), poly)


def _seen(c: PhysicalCard, tr: _Track, up: np.ndarray | None) -> SeenCard:
    anchor = _centre(c.box)
    if c.corners:
        centres = [_centre(k.box) for k in c.corners]
        # a fan leaves each card's leading index showing, the one farther from the seat
        anchor = max(centres, key=lambda p: float(np.dot(p, up))) if up is not None else centres[0]
    return SeenCard(c.card, c.confidence, c.box, anchor, len(c.corners), tr.id, c.alternatives, c.orientation)


def _rows(items: list[tuple[PhysicalCard, _Track]], facing: float, faint_below: float = 0.0) -> tuple[SeenMeld, ...]:
    """Group a seat's cards into rows by single linkage: close along the row, level across it. Faint
    readings (under `faint_below`) join the row of the nearest sure card they are close to, never two."""
    if not items:
        return ()
    along, up = axes_of(facing)
    seen = [_seen(c, tr, up) for c, tr in items]
    sure = [c.confidence >= faint_below for c, _ in items]
    sizes = [max(k.box[2] - k.box[0], k.box[3] - k.box[1]) for (c, _), ok in zip(items, sure) if ok for k in c.corners]
    scale = float(np.median(sizes)) if sizes else 24.0
    uv = [(float(np.dot(s.anchor, along)), float(np.dot(s.anchor, up))) for s in seen]
    parent = list(range(len(seen)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def close(a: int, b: int) -> bool:
        return abs(uv[a][1] - uv[b][1]) < 1.0 * scale and abs(uv[a][0] - uv[b][0]) < 3.0 * scale

    for a in range(len(seen)):
        for b in range(a + 1, len(seen)):
            if sure[a] and sure[b] and close(a, b):
                parent[find(a)] = find(b)
    for a in (k for k in range(len(seen)) if not sure[k]):
        near = [b for b in range(len(seen)) if sure[b] and close(a, b)]
        if near:
            parent[a] = find(min(near, key=lambda b: (math.dist(uv[a], uv[b]), b)))
    groups: dict[int, list[int]] = {}
    for k in range(len(seen)):
        groups.setdefault(find(k), []).append(k)
    rows = []
    for ks in groups.values():
        ks.sort(key=lambda k: (uv[k][0], seen[k].card))
        rows.append((-sum(uv[k][1] for k in ks) / len(ks), min(uv[k][0] for k in ks), ks))
    rows.sort()
    return tuple(SeenMeld(tuple(seen[k] for k in ks)) for _, _, ks in rows)


def _signature(s: TableSnapshot) -> Any:
    return (
        tuple(tuple(m.names for m in melds) for melds in s.seats),
        tuple(sorted(c.card for c in s.discard)),
        (s.discard_top.card, s.discard_top.track) if s.discard_top is not None else None,
        tuple(sorted(c.card for c in s.stray)),
    )
