"""Group corner-index detections into physical cards.

A card lying flat shows its two corner indices at opposite corners (top-left and bottom-right of the
face), the second one turned 180 degrees: the pair is point-symmetric about the card's centre. So two
detections of the same face belong to one card when

* their boxes have the same size (a 180-degree turn keeps an axis-aligned box's width and height),
* their distance fits one card at the scale their size implies (a 63 x 88 mm card whose index is about
  8 x 16 mm, inset about 3 mm from the edges; the joker's is taller and narrower), and
* the direction between them agrees with the boxes' shape: the line joining the two indices runs along
  the card's diagonal, which fixes the card's angle, and at that angle an upright-tall index must give
  a box that is taller (or wider, or square) by about as much as observed.

In a fanned meld usually only one index of each card shows; indices that cannot be paired are cards of
their own. Two indices of one face whose card would hold two or more other indices on its face are two
cards of a fan (two QD across a hand, two jokers in two meld rows one above the other), not one.
Duplicates (games use two or three decks) stay apart: the corners of one face are matched so that as
many pairs as possible form, best-fitting first (an exact minimum-cost matching for the handful of
corners one face has), so four corners of two flat 7H make two cards, and two 7H indices side by side
in a fan make two cards.

Many continental decks print the index in all four corners. Their cards are grouped too. Two corners
one card edge apart pair like a diagonal does (the left edge of a card in a fan shows its top-left and
bottom-left indices), but only when nothing else was seen between them, where a fan of duplicates would
show the other cards' indices. Pairs of both kinds are matched together, then two pairs whose four
corners form the rectangle of one card's indices (or a pair and a corner that make three of its
corners, or those three and the fourth) become one card when a diagonal pair among them is one of the
rectangle's diagonals (else the pair's diagonal would be the rectangle's edge: another copy's index
lies where the fourth corner would), or when the two pairs are its opposite edges, parallel (with boxes
a few pixels off, the matching can take a card's two long edges for two smaller cards' diagonals).
Three such groups join where only all three make the rectangle, and an index left touching a box that
stood in for it (framed over the pip beside it, read less surely) joins the card too. Other indices
count against a rectangle only between two indices seen (a card over a covered corner shows its own
there) and, past an edge, only close to it (a meld's next card shows its index just beyond). An edge
pair's smaller box, cut short by a card over it, may miss the index's shape more. Edge pairs
count where the table shows such a deck, that is where some card shows three or four of its indices (a
fan's top card, the pile's top card), or where their length fits the table's scale measured on its
cards' diagonals: with two-index decks, two copies in two overlapping meld runs (8C-QC above 9C-QC,
one row down and one step along) would otherwise pair as one card's edge, far shorter than an edge at
that scale.

A card's second index misread as another face leaves two lone corners of different faces where one
card's two indices would lie; when one's next reading is the other's face, they are one card, named by
the face both readings make likeliest (where two or more cards seen by their diagonals give the table's
scale, only at that scale, within 1.25 times: the boxes' size alone lets a much shorter diagonal pass).
An index read JK is a mark the model could not place: joined so to a corner whose next reading is JK,
the card is that corner's face when their boxes fit its index better than a joker's (a joker's is
taller and narrower). A box read JK centred on a surer box of a face and sharing half its area is that
index read twice, and is dropped. On a pile, the index of the card beneath may peek out right past the
top card's own, the two boxed as one long box that reads like the word JOKER: a lone box read as a
lone index's face, or JK (not surely), whose end nearest that index pairs with it as one card's two
indices is that card's index.

Court cards and jokers of many decks print a big rank and suit (or "JK") in the middle of the face,
which the detector takes for one more index. A lone mark of a card's own face lying in the middle of
that card, whose two corners were paired, is its picture and not a second copy. Two boxes of one face
lying one on the other are one index found twice (sharing half the smaller one; a tenth, where both are
long and thin as an index square to the frame, whose box fits it closely).

Only axis-aligned boxes are known, so two *same-facing* copies of one face lying about a card's diagonal
apart can still be taken for one card; the indices' pixels are too small (about 12 x 30 px) to tell a
turned mark from an upright one reliably. On ground-truth corner boxes of rendered game tables the
grouping counted every card right.

Everything is plain numpy and deterministic: the result does not depend on the detections' order.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache
from typing import Iterable, Sequence

import numpy as np

from .classes import Box, Corner, PhysicalCard, Readings, box_area

# ------------------------------------------------------------------ card geometry (millimetres)

CARD_WIDTH_MM = 63.0  # a standard (poker-size) card
CARD_HEIGHT_MM = 88.0


@dataclass(frozen=True)
class IndexGeometry:
    """The rank-over-suit mark in a card's corner, upright, and how much real decks vary it."""

    width_mm: float
    height_mm: float
    margin_mm: float  # from the card's edges to the mark
    aspect_range: tuple[float, float]  # (h - w) / (h + w) of the mark over deck designs
    # a card's two marks' boxes may differ by this share of the larger one where another index's box
    # touches the smaller one (see fit_pair); None: by SIZE_TOLERANCE alone
    crowded_size_tolerance: float | None = None

    @property
    def offset_mm(self) -> tuple[float, float]:
        """The top-left mark's centre relative to the card's centre (x right, y down, upright card)."""
        return (
            CARD_WIDTH_MM / 2 - self.margin_mm - self.width_mm / 2,
            CARD_HEIGHT_MM / 2 - self.margin_mm - self.height_mm / 2,
        )

    @property
    def pair_distance_mm(self) -> float:
        """Between the centres of a card's two marks."""
        return 2 * math.hypot(*self.offset_mm)

    @property
    def pair_angle_deg(self) -> float:
        """The diagonal joining the two marks, below the card's x axis."""
        return math.degrees(math.atan2(self.offset_mm[1], self.offset_mm[0]))


# measured over the renderer's 24 deck designs: naturals' marks are 6-15.5 mm wide ("10" is widest) and
# 12-19 mm tall, inset 1-6 mm; the joker's mark is the word JOKER written downwards. Where another
# index's box touches it, the detector may frame the long word short (a proc30 joker's top JOKER, the
# fanned 5C's index against it, boxed 38 x 29 px, its bottom one 60 x 38: one joker read as two,
# held-out spread 0 of seed 1235); a rank and suit is framed whole.
NATURAL_INDEX = IndexGeometry(width_mm=8.0, height_mm=16.0, margin_mm=3.0, aspect_range=(-0.05, 0.45))
JOKER_INDEX = IndexGeometry(
    width_mm=5.5, height_mm=26.0, margin_mm=3.0, aspect_range=(0.5, 0.8), crowded_size_tolerance=0.5
)


def index_geometry(card: str) -> IndexGeometry:
    return JOKER_INDEX if card == "JK" else NATURAL_INDEX


def pair_geometries(card: str) -> tuple[IndexGeometry, ...]:
    """The marks a card's two corners may be: a joker's is the word JOKER or, in many decks, a star
    (alone, in a disc or ring, under a J) about the size of a rank and suit."""
    return (JOKER_INDEX, NATURAL_INDEX) if card == "JK" else (NATURAL_INDEX,)


# ------------------------------------------------------------------ tolerances

DISTANCE_TOLERANCE = 1.6  # observed / expected pair distance may be off by this factor either way
SIZE_TOLERANCE = 0.3  # the two boxes' widths (heights) may differ by this share of the larger one ...
SIZE_SLACK_PX = 3.0  # ... plus this many pixels (small boxes are noisy)
CROWD_GAP_PX = 2.0  # another index's box this close to a box touches it
SHAPE_TOLERANCE = 0.15  # allowed miss of a box's (h - w) / (h + w) against the mark's range at the pair's angle
EXACT_MATCHING_LIMIT = 14  # corners of one face matched exactly; more are matched greedily
RECTANGLE_TOLERANCE = 0.15  # four indices of one card: diagonals equal and crossing at their middles, to this share
ASPECT_TOLERANCE = 1.3  # ... and the sides in a card's index-to-index proportion, off by at most this factor
SIDE_DISTANCE_TOLERANCE = 1.5  # two indices along one edge: distance off by at most this factor
SCALED_SIDE_TOLERANCE = 1.25  # ... or this factor from the length the table's scale gives an edge
# ... and boxes closer to the index turned as that edge runs than a diagonal's need be: an edge is
# only a length and a line, and two cards' top indices in two meld rows lie a short edge apart on a
# slant (two 6S read as one card, classic film 2000 round 3, shape 0.995)
SIDE_SHAPE_LIMIT = 0.8
# ... but a partly covered index's box is cut short across or along it, and so misses its shape more:
# the smaller box, short of the other by more than SIZE_SLACK_PX, may miss it this much (a fanned
# Dondorf JC's bottom-left index two thirds uncovered, 12 x 33 px beside its whole 19 x 31 top-left
# one: shape 0.93, held-out spread 47 of seed 2002)
COVERED_SHAPE_LIMIT = 1.5
ANGLE_TOLERANCE = 20.0  # degrees: two pairs joined as a rectangle's opposite edges run parallel to this


@dataclass(frozen=True)
class PairFit:
    """How well two corners fit one flat card."""

    cost: float  # 0 (perfect) .. 1 (at the tolerances); pairs at or above 1 are rejected
    orientation: float  # degrees counter-clockwise, (-90, 90]: 0 = upright or upside down
    centre: tuple[float, float]
    px_per_mm: float


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _size(box: Box) -> tuple[float, float]:
    return (max(0.0, box[2] - box[0]), max(0.0, box[3] - box[1]))


def normalise_orientation(degrees: float) -> float:
    """An angle of a 180-degree-symmetric card in (-90, 90]."""
    a = math.fmod(degrees, 180.0)
    if a <= -90.0:
        a += 180.0
    elif a > 90.0:
        a -= 180.0
    return a


def pair_orientation(a: Box, b: Box, geometry: IndexGeometry = NATURAL_INDEX) -> float:
    """The card angle (degrees counter-clockwise, (-90, 90]) implied by two opposite corner indices."""
    (ax, ay), (bx, by) = _centre(a), _centre(b)
    # in y-up coordinates the diagonal from the top-left to the bottom-right mark points at -pair_angle_deg
    direction = math.degrees(math.atan2(-(by - ay), bx - ax))
    return normalise_orientation(direction + geometry.pair_angle_deg)


FACE_CROWD = 2  # other indices on the face a pair implies that rule it out: cards in a fan, not one card
FACE_REACH = 0.45  # the face, as a share of the card's width and height either side of its centre


def fit_pair(a: Corner, b: Corner, others: Sequence[Corner] = ()) -> PairFit | None:
    """How well two corners of one face fit the two indices of one flat card; None when they cannot,
    or when FACE_CROWD corners of `others` lie on the face they imply (two QD across a fanned hand, or
    two jokers in two meld rows one above the other)."""
    if a.card != b.card or min(*_size(a.box), *_size(b.box)) <= 0:
        return None
    fits = [f for geo in pair_geometries(a.card) if (f := _fit_pair_as(geo, a, b, others)) is not None]
    return min(fits, key=lambda f: f.cost) if fits else None


def _fit_pair_as(geo: IndexGeometry, a: Corner, b: Corner, others: Sequence[Corner]) -> PairFit | None:
    """`fit_pair` for marks of one geometry."""
    (aw, ah), (bw, bh) = _size(a.box), _size(b.box)
    # 1. point symmetry: the same box size
    size_err = _size_error(a.box, b.box)
    if size_err >= 1 and geo.crowded_size_tolerance:
        smaller = a if box_area(a.box) <= box_area(b.box) else b
        if _touched(smaller, others, (a, b)):
            size_err = _size_error(a.box, b.box, geo.crowded_size_tolerance)
    if size_err >= 1:
        return None
    # 2. the card's angle from the diagonal, and the index's rotated box at that angle
    theta = pair_orientation(a.box, b.box, geo)
    c, s = abs(math.cos(math.radians(theta))), abs(math.sin(math.radians(theta)))
    # 3. distance against the scale the boxes' size implies: w + h of a box = (w + h of the index) * (|c| + |s|)
    px_per_mm = ((aw + ah + bw + bh) / 2) / ((geo.width_mm + geo.height_mm) * (c + s))
    (ax, ay), (bx, by) = _centre(a.box), _centre(b.box)
    distance = math.hypot(bx - ax, by - ay)
    ratio = distance / (geo.pair_distance_mm * px_per_mm)
    dist_err = abs(math.log(max(ratio, 1e-9))) / math.log(DISTANCE_TOLERANCE)
    if dist_err >= 1:
        return None
    # 4. shape: the boxes must look like the index turned by theta
    shape_err = _shape_error((a.box, b.box), c, s, geo)
    if shape_err >= 1:
        return None
    # a card on top may cover one stretch of a card's face; where the indices of several cards lie on
    # it, those are a fan (or two meld rows), whose cards' far corners are hidden
    centre = ((ax + bx) / 2, (ay + by) / 2)
    scale = distance / geo.pair_distance_mm
    outline = card_outline(centre, theta, scale)
    if sum(_on_face(o, outline, FACE_REACH) and not _part_of(o, a, b, outline) for o in others) >= FACE_CROWD:
        return None
    cost = (size_err + dist_err + shape_err) / 3
    return PairFit(cost, theta, centre, scale)


def _touched(corner: Corner, others: Sequence[Corner], pair: Sequence[Corner]) -> bool:
    """Whether another index's box (not one of `pair`'s, which may come renamed) comes within
    CROWD_GAP_PX of `corner`'s."""
    x1, y1, x2, y2 = corner.box
    g = CROWD_GAP_PX
    return any(
        o.box[0] <= x2 + g and o.box[2] >= x1 - g and o.box[1] <= y2 + g and o.box[3] >= y1 - g
        for o in others
        if all(o.box != p.box for p in pair)
    )


def _part_of(o: Corner, a: Corner, b: Corner, outline: np.ndarray) -> bool:
    """Whether a mark may be part of the card two corners make: one of them, a second reading of one
    (its centre on their box), or a mark of their face in its middle (its picture: a court card's big
    rank and suit; a copy's index elsewhere on the face is another card)."""
    if o is a or o is b or (_reading(o, a.card) >= JOIN_MIN and _on_face(o, outline, ART_REACH / 2)):
        return True
    x, y = _centre(o.box)
    return any(k.box[0] <= x <= k.box[2] and k.box[1] <= y <= k.box[3] for k in (a, b))


def _size_error(a: Box, b: Box, tolerance: float = SIZE_TOLERANCE) -> float:
    """How far two boxes are from the same size, 1 at the tolerance (a share of the larger box)."""
    (aw, ah), (bw, bh) = _size(a), _size(b)
    return max(
        abs(aw - bw) / (tolerance * max(aw, bw) + SIZE_SLACK_PX),
        abs(ah - bh) / (tolerance * max(ah, bh) + SIZE_SLACK_PX),
    )


def _shape_error(boxes: Sequence[Box], c: float, s: float, geo: IndexGeometry) -> float:
    """How far boxes are from an index turned to |cos| c, |sin| s: an index with k = (h - w) / (h + w)
    gives a box with (H - W) / (H + W) = k * (c - s) / (c + s); 1 at the tolerance."""
    g = (c - s) / (c + s)
    lo, hi = sorted((geo.aspect_range[0] * g, geo.aspect_range[1] * g))
    miss = 0.0
    for box in boxes:
        w, h = _size(box)
        q = (h - w) / (h + w)
        miss = max(miss, lo - q, q - hi, 0.0)
    return miss / SHAPE_TOLERANCE


def fit_side(
    a: Corner, b: Corner, others: Sequence[Corner] = (), scale: float | None = None, covered: bool = True
) -> float | None:
    """The cost (0 .. 1) of two corners of one face being two indices along one edge of a four-index
    card (top-left and bottom-left, or top-left and top-right); None when they cannot be, or when
    another corner in `others` lies between them. `scale`: the table's pixels per mm, where known
    from its cards' diagonals (else the boxes' size gives it, more loosely). `covered`: whether the
    smaller box, cut short of the other, may be a partly covered index (COVERED_SHAPE_LIMIT)."""
    if a.card != b.card or min(*_size(a.box), *_size(b.box)) <= 0:
        return None
    size_err = _size_error(a.box, b.box)
    if size_err >= 1:
        return None
    geo = index_geometry(a.card)
    (ax, ay), (bx, by) = _centre(a.box), _centre(b.box)
    distance = math.hypot(bx - ax, by - ay)
    if distance <= 0:
        return None
    along_x, along_y = abs(bx - ax) / distance, abs(by - ay) / distance
    ox, oy = geo.offset_mm
    aw, ah = _size(a.box)
    bw, bh = _size(b.box)
    best = None
    # along the long edge the line runs with the index's height, along the short edge across it
    for c, s, edge_mm in ((along_y, along_x, 2 * oy), (along_x, along_y, 2 * ox)):
        px_per_mm = ((aw + ah + bw + bh) / 2) / ((geo.width_mm + geo.height_mm) * (c + s))
        ratio = distance / (edge_mm * (scale or px_per_mm))
        tolerance = SCALED_SIDE_TOLERANCE if scale else SIDE_DISTANCE_TOLERANCE
        dist_err = abs(math.log(max(ratio, 1e-9))) / math.log(tolerance)
        shape_err = _side_shape_error(a.box, b.box, c, s, geo, covered)
        if dist_err < 1 and shape_err < 1:
            cost = (size_err + dist_err + shape_err * SIDE_SHAPE_LIMIT) / 3
            best = cost if best is None else min(best, cost)
    if best is None:
        return None
    # a fan of duplicates (7H 7S 7H) shows the other cards' indices between; a card's edge is bare
    if _corners_between(_centre(a.box), _centre(b.box), 0.6 * max(aw, ah, bw, bh), others, (a, b)):
        return None
    return best


def _side_shape_error(a: Box, b: Box, c: float, s: float, geo: IndexGeometry, covered: bool = True) -> float:
    """How far two boxes along one edge are from an index turned to |cos| c, |sin| s: 1 at
    SIDE_SHAPE_LIMIT, or for the smaller box, where it is cut short of the other, at
    COVERED_SHAPE_LIMIT."""
    whole, cut = sorted((a, b), key=box_area, reverse=True)
    (ww, wh), (cw, ch) = _size(whole), _size(cut)
    # a covered index is cut short across or along it, not longer the other way than a whole one
    # beyond the boxes' noise (a hand's 9H turned a quarter, 18 x 10 px, beside a meld's upright 9H,
    # 11 x 18, is no index cut short: petras film 1002 round 7)
    grown = cw > ww * (1 + SIZE_TOLERANCE) or ch > wh * (1 + SIZE_TOLERANCE)
    cut_short = (cw < ww - SIZE_SLACK_PX or ch < wh - SIZE_SLACK_PX) and not grown
    cut_limit = COVERED_SHAPE_LIMIT if covered and cut_short else SIDE_SHAPE_LIMIT
    return max(_shape_error((whole,), c, s, geo) / SIDE_SHAPE_LIMIT, _shape_error((cut,), c, s, geo) / cut_limit)


def _corners_between(
    p: tuple[float, float],
    q: tuple[float, float],
    reach: float,
    others: Sequence[Corner],
    skip: Sequence[Corner],
    inside: tuple[float, float] | None = None,
) -> int:
    """How many corners (other than `skip`) lie within `reach` of the middle 70% of the segment p-q;
    with `inside` (a point on the card's side of that edge), those on the far side count only within
    half of it."""
    length2 = (q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2
    count = 0
    if length2 <= 0:
        return count
    for o in others:
        if any(o is k for k in skip):
            continue
        x, y = _centre(o.box)
        t = ((x - p[0]) * (q[0] - p[0]) + (y - p[1]) * (q[1] - p[1])) / length2
        fx, fy = p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])  # the foot on the edge
        limit = reach
        if inside is not None and (x - fx) * (inside[0] - fx) + (y - fy) * (inside[1] - fy) < 0:
            limit = reach / 2
        if 0.15 < t < 0.85 and math.hypot(fx - x, fy - y) < limit:
            count += 1
    return count


def card_outline(centre: tuple[float, float], orientation: float, px_per_mm: float) -> np.ndarray:
    """The four corners (4 x 2, image pixels) of a card at a centre, angle and scale."""
    t = math.radians(orientation)
    c, s = math.cos(t), math.sin(t)
    hw, hh = CARD_WIDTH_MM / 2 * px_per_mm, CARD_HEIGHT_MM / 2 * px_per_mm
    pts = []
    for u, v in ((-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)):
        # turning counter-clockwise on screen (y down): x = u cos + v sin, y = -u sin + v cos
        pts.append((centre[0] + u * c + v * s, centre[1] - u * s + v * c))
    return np.array(pts, dtype=np.float64)


def _union(boxes: Iterable[Box]) -> Box:
    bs = list(boxes)
    return (min(b[0] for b in bs), min(b[1] for b in bs), max(b[2] for b in bs), max(b[3] for b in bs))


def _clip(box: Box, image_size: tuple[int, int] | None) -> Box:
    if image_size is None:
        return box
    w, h = float(image_size[0]), float(image_size[1])
    return (min(max(box[0], 0.0), w), min(max(box[1], 0.0), h), min(max(box[2], 0.0), w), min(max(box[3], 0.0), h))


def _match(costs: dict[tuple[int, int], float], n: int) -> list[tuple[int, int]]:
    """Pairs minimising (sum of pair costs + 1 per unpaired corner); exact for small n, else greedy."""
    if n <= EXACT_MATCHING_LIMIT:

        @cache
        def best(mask: int) -> tuple[float, tuple[tuple[int, int], ...]]:
            if mask == 0:
                return (0.0, ())
            i = (mask & -mask).bit_length() - 1
            rest = mask & ~(1 << i)
            cost, pairs = best(rest)
            choice = (cost + 1.0, pairs)
            for j in range(i + 1, n):
                if rest >> j & 1 and (i, j) in costs:
                    cost, pairs = best(rest & ~(1 << j))
                    if cost + costs[(i, j)] < choice[0] - 1e-12:
                        choice = (cost + costs[(i, j)], ((i, j),) + pairs)
            return choice

        return list(best((1 << n) - 1)[1])
    used: set[int] = set()
    out = []
    for (i, j), _ in sorted(costs.items(), key=lambda kv: (kv[1], kv[0])):
        if i not in used and j not in used:
            used.update((i, j))
            out.append((i, j))
    return out


def _sort_key(corner: Corner) -> tuple[float, float, float, float, float]:
    return (corner.box[0], corner.box[1], corner.box[2], corner.box[3], -corner.confidence)


def _rectangle(
    points: Sequence[tuple[float, float]], corners: Sequence[Corner], geo: IndexGeometry, others: Sequence[Corner]
) -> float | None:
    """The card orientation when four index centres (of `corners`, and one completed point when three)
    are the four indices of one card, else None: a rectangle in the card's index-to-index proportions,
    boxes shaped and sized as its indices would be, and no other corner along its edges."""
    boxes = [c.box for c in corners]
    ox, oy = geo.offset_mm
    want = oy / ox  # long edge over short edge between index centres
    a = points[0]
    for k in (1, 2, 3):
        # a and points[k] as one diagonal, the other two as the other
        b = points[k]
        m_c, m_d = (m for m in (1, 2, 3) if m != k)
        c, d = points[m_c], points[m_d]
        d1, d2 = math.dist(a, b), math.dist(c, d)
        if d1 <= 0 or abs(d1 - d2) > RECTANGLE_TOLERANCE * max(d1, d2):
            continue
        mid1, mid2 = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2), ((c[0] + d[0]) / 2, (c[1] + d[1]) / 2)
        if math.dist(mid1, mid2) > RECTANGLE_TOLERANCE * d1:
            continue
        e1, e2 = math.dist(a, c), math.dist(a, d)
        if min(e1, e2) <= 0 or abs(math.log(max(e1, e2) / min(e1, e2) / want)) > math.log(ASPECT_TOLERANCE):
            continue
        far = c if e1 >= e2 else d  # a's neighbour along the long edge
        vx, vy = far[0] - a[0], far[1] - a[1]
        orientation = normalise_orientation(math.degrees(math.atan2(-vy, vx)) + 90)
        t = math.radians(orientation)
        cs, sn = abs(math.cos(t)), abs(math.sin(t))
        from_boxes = (
            sum(w + h for w, h in map(_size, boxes)) / len(boxes) / ((geo.width_mm + geo.height_mm) * (cs + sn))
        )
        from_rectangle = max(e1, e2) / (2 * oy)
        if abs(math.log(from_rectangle / from_boxes)) >= math.log(DISTANCE_TOLERANCE):
            continue
        # one of the three or four boxes may be framed askew (stretched over the big pip beside it)
        # where the rectangle puts its centre: the well-shaped others fix where the card lies
        misses = sorted(_shape_error([box], cs, sn, geo) for box in boxes)
        if misses[-1] >= 1 and misses[-2] >= 1:
            continue
        reach = 0.6 * max(max(_size(box)) for box in boxes)
        # only between two indices seen: a card lying over the fourth, completed one may show its own
        # index along the edges to it (a KS's covered corner, held-out table 7 of seed 777); and
        # beyond an edge, the card ends: a neighbour's index there, out past half the reach, is no
        # copy fanned over it (a meld's next card, 13 px past a 2H's bottom edge, table 11 of seed 777)
        edges = ((0, m_c), (m_c, k), (k, m_d), (m_d, 0))
        middle = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        if any(
            _corners_between(points[p], points[q], reach, others, corners, inside=middle)
            for p, q in edges
            if p < len(corners) and q < len(corners)
        ):
            continue
        return orientation
    return None


@dataclass
class _Card:
    """Corners of one face found to be one card."""

    corners: list[Corner]
    orientation: float | None = None  # known when a diagonal pair or a rectangle was seen
    outline: np.ndarray | None = None


ART_REACH = 0.6  # the middle of a card, as a share of its width and height: its picture, never an index


def _face_spot(corner: Corner, outline: np.ndarray) -> tuple[float, float]:
    """Where a mark's centre lies on a card, in shares of its width and height from its centre."""
    x, y = _centre(corner.box)
    cx, cy = outline.mean(axis=0)
    across, along = outline[1] - outline[0], outline[3] - outline[0]  # the card's width and height
    u = ((x - cx) * across[0] + (y - cy) * across[1]) / float(across @ across)
    v = ((x - cx) * along[0] + (y - cy) * along[1]) / float(along @ along)
    return float(u), float(v)


def _on_face(corner: Corner, outline: np.ndarray, reach: float) -> bool:
    """Whether a mark's centre lies within `reach` of a card's width and height from its centre."""
    u, v = _face_spot(corner, outline)
    return abs(u) < reach and abs(v) < reach


SAME_INDEX_REACH = 0.3  # centres closer than this share of a box's diagonal: the same index


SAME_INDEX_OVERLAP = 0.5  # boxes of one face sharing this much of the smaller one: the same index
# ... or this much, where both are long and thin as a rank-and-suit index lying square to the frame
# (its box then fits it closely): two copies' indices never overlap, the card on top covering the
# other's up to a margin short of its own (a 9H's index boxed twice 10 px apart across its short
# side, 26 x 13 px each, sharing a fifth: held-out table 7 of seed 777)
SQUARE_INDEX_OVERLAP = 0.1
SQUARE_INDEX_ASPECT = 1.6  # a box this many times longer than wide is such an index (a turned one is squarer)


def _one_index_once(group: list[Corner]) -> list[Corner]:
    """Drop a box of a face whose centre lies close to the middle of a bigger box of that face, or that
    shares half its area with one (a tenth, where both lie square to the frame): the detector found
    one index twice (the rank alone beside the whole index; a joker's long JOKER word as its upper and
    lower part). Two cards' indices never lie so close: a fan leaves each index whole."""
    kept: list[Corner] = []
    for c in sorted(group, key=lambda c: (-box_area(c.box), -c.confidence, c.box)):
        if not any(
            math.dist(_centre(c.box), _centre(k.box)) < SAME_INDEX_REACH * math.hypot(*_size(k.box))
            or _shared(c.box, k.box) >= _overlap_limit(c, k) * min(box_area(c.box), box_area(k.box))
            for k in kept
        ):
            kept.append(c)
    return kept


def _overlap_limit(a: Corner, b: Corner) -> float:
    """The share of the smaller box two boxes of one face must share to be one index."""
    if a.card != "JK" and all(max(_size(c.box)) >= SQUARE_INDEX_ASPECT * min(_size(c.box)) for c in (a, b)):
        return SQUARE_INDEX_OVERLAP
    return SAME_INDEX_OVERLAP  # a joker's word may be partly covered beside another's (seed 4242, table 1)


def _one_face_per_index(corners: Sequence[Corner]) -> list[Corner]:
    """A box read JK centred on a surer box of a face and sharing half the smaller one's area with it
    is dropped: the detector read that index twice, once as the mark it could not place (a 4C's index
    as 4C 0.61 and, a little taller, as JK 0.57, which then paired with a JK misread across the pile,
    petras film 2001 round 3). A joker fanned over a face keeps its long JOKER word beside that face's
    index, overlapping it but centred off it: both stay. Two faces read there stay two cards: which
    one is there is not known."""
    faces = [c for c in corners if c.card != "JK"]

    def doubled(j: Corner) -> bool:
        return any(
            f.confidence > j.confidence
            and _inside(_centre(j.box), f.box)
            and _shared(j.box, f.box) >= SAME_INDEX_OVERLAP * min(box_area(j.box), box_area(f.box))
            for f in faces
        )

    return [c for c in corners if c.card != "JK" or not doubled(c)]


def _inside(point: tuple[float, float], box: Box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _shared(a: Box, b: Box) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _as_rectangle(corners: list[Corner], name: str, others: Sequence[Corner]) -> float | None:
    """The orientation when these corners (three or four) are indices of one card, else None."""
    geo = index_geometry(name)
    pts = [_centre(c.box) for c in corners]
    if len(pts) == 4:
        return _rectangle(pts, corners, geo, others)
    # three corners: complete the rectangle at each one as its right-angled corner
    for r in range(3):
        p, q = (pts[m] for m in range(3) if m != r)
        fourth = (p[0] + q[0] - pts[r][0], p[1] + q[1] - pts[r][1])
        orientation = _rectangle([*pts, fourth], corners, geo, others)
        if orientation is not None:
            return orientation
    return None


def _fits_rectangle(card: _Card, corners: Sequence[Corner]) -> bool:
    """Whether a card joins the rectangle of `corners` as it was found: a diagonal pair must be one of
    the rectangle's diagonals. Else the pair's diagonal would be the rectangle's edge: another copy's
    index lies where a fourth corner would (10H of a set above a run's 10H, petras film 2001)."""
    if card.orientation is None or len(card.corners) != 2:
        return True  # a lone corner, an edge pair, or three corners the rectangle already holds
    # a diagonal pair names the card's angle as if it ran top-left to bottom-right; the other diagonal
    # of a four-index card gives another angle, so the pair is checked by its length: the longest
    # distance of the three corners, or one of the two longest of the four
    centres = [_centre(c.box) for c in corners]
    lengths = sorted((math.dist(p, q) for k, p in enumerate(centres) for q in centres[k + 1 :]), reverse=True)
    longest = lengths[0] if len(centres) == 3 else lengths[1]
    return math.dist(*(_centre(c.box) for c in card.corners)) >= longest - 1e-6


def _opposite_edges(a: _Card, b: _Card) -> bool:
    """Two pairs that are opposite edges of a rectangle of four indices: the matching may take a
    four-index card's edges for two diagonals (a shorter one of a smaller card each), where its real
    diagonals fit worse. Copies of a face do not lie so: each pair would be a card of its own beside
    the other, its corners exactly where the other's card has its indices."""
    if len(a.corners) != 2 or len(b.corners) != 2:
        return False
    (p, q), (r, t) = ([_centre(c.box) for c in card.corners] for card in (a, b))
    u, v = (q[0] - p[0], q[1] - p[1]), (t[0] - r[0], t[1] - r[1])
    cross = abs(u[0] * v[1] - u[1] * v[0]) / max(math.hypot(*u) * math.hypot(*v), 1e-9)
    return cross < math.sin(math.radians(ANGLE_TOLERANCE))  # parallel: the rectangle's check did the rest


def _beside_a_rectangle(corners: list[Corner], name: str, others: Sequence[Corner]) -> float | None:
    """The orientation when four of five corners are the four indices of one card, one of the four
    framed askew (over the big pip beside its index, read less surely) and the fifth touching it,
    else None. That box stood in for the index where the rectangle puts it, and the index itself was
    left over: joined to the card's two other indices as an edge pair of their own (a Dondorf 7S,
    held-out spread 93 of seed 2002), or alone (an 8D, held-out table 4 of seed 4242). A copy's index
    lying against a card's index read as surely stays a card of its own."""
    geo = index_geometry(name)
    for k, extra in enumerate(corners):
        four = corners[:k] + corners[k + 1 :]
        # a box framed over a pip reads its card less surely than the index itself
        if not any(_touched(extra, [c], ()) and c.confidence < extra.confidence for c in four):
            continue
        beside = [o for o in others if o is not extra]  # it lies along the card's edge, by its index
        orientation = _rectangle([_centre(c.box) for c in four], four, geo, beside)
        if orientation is not None:
            return orientation
    return None


def _join_four_index(cards: list[_Card], name: str, others: Sequence[Corner]) -> list[_Card]:
    """Join pairs (and a pair and a lone corner, three corners and the fourth) that are indices of one
    four-index card; then three cards that make one card's four indices together where no two of them
    did (a pair and two lone corners, one of them framed askew: with the pair and the other lone
    corner, the askew box lay by the corner the rectangle completes and counted as another index on
    its edge; an 8C of held-out table 14 of seed 9000)."""
    while (join := _next_join(cards, name, others)) is not None:
        parts, card = join
        cards[parts[0]] = card
        for k in sorted(parts[1:], reverse=True):
            del cards[k]
    return cards


def _next_join(cards: list[_Card], name: str, others: Sequence[Corner]) -> tuple[tuple[int, ...], _Card] | None:
    """The first cards (their places) that are one four-index card, and that card."""
    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            a, b = cards[i], cards[j]
            joint = a.corners + b.corners
            if len(joint) not in (3, 4, 5):
                continue
            if len(joint) == 5:
                orientation = _beside_a_rectangle(joint, name, others)
            else:
                orientation = _as_rectangle(joint, name, others)
            if orientation is None:
                continue
            fits = all(_fits_rectangle(c, joint) for c in (a, b))
            if not fits and not _opposite_edges(a, b):
                continue
            keep = a if a.outline is not None else b
            # pairs that are the rectangle's edges were turned as smaller cards' diagonals
            keep_orientation = keep.orientation if fits and keep.orientation is not None else orientation
            return (i, j), _Card(joint, keep_orientation, keep.outline)
    for parts in itertools.combinations(range(len(cards)), 3):
        three = [cards[k] for k in parts]
        joint = [c for card in three for c in card.corners]
        if len(joint) != 4 or (orientation := _as_rectangle(joint, name, others)) is None:
            continue
        if not all(_fits_rectangle(c, joint) for c in three):
            continue
        keep = next((c for c in three if c.outline is not None), three[0])
        return parts, _Card(joint, keep.orientation if keep.orientation is not None else orientation, keep.outline)
    return None


def _alternatives(corners: Sequence[Corner], name: str) -> Readings:
    """A card's other readings: each name's best probability over its corners, likeliest first."""
    best: dict[str, float] = {}
    for c in corners:
        for other, p in c.alternatives:
            if other != name:
                best[other] = max(p, best.get(other, 0.0))
    return tuple(sorted(best.items(), key=lambda kv: (-kv[1], kv[0])))


def pair_corners(
    corners: Sequence[Corner], image_size: tuple[int, int] | None = None, four_index: bool | None = None
) -> list[PhysicalCard]:
    """Group corner detections into physical cards (image_size = (width, height) clips card boxes).
    `four_index`: whether the deck prints its index in all four corners (its cards' edges pair); None:
    as the table shows it (some card showing three or four indices, or fanned cards their edges).

    Cards come out in reading order (top to bottom, then left to right, by box).
    """
    corners = _one_face_per_index(corners)
    if four_index is not None:
        return _grouped(corners, image_size, edges=four_index, join_edges=four_index)
    cards = _grouped(corners, image_size, edges=True, join_edges=True)
    if any(len(c.corners) > 2 for c in cards) or _fanned_edges(cards):
        return cards  # a four-index deck is on the table: its cards' edges pair too
    scales = _diagonal_scales(cards)
    if not scales:
        return _grouped(corners, image_size, edges=False)
    # edges whose length fits the table's scale may still be a four-index deck's
    return _grouped(corners, image_size, edges=True, scale=float(np.median(scales)))


FAN_EDGE_TOLERANCE = 0.15  # edges of fanned four-index cards: lengths within this share of each other ...
FAN_STEP_SLANT = 0.3  # ... and the step from one to the next across them (cosine with the edge at most this)


def _fanned_edges(cards: Sequence[PhysicalCard]) -> bool:
    """Whether two of these cards are edge pairs (two indices along one edge) running parallel, of one
    length, side by side: the fanned cards of a four-index deck, each showing one edge (no diagonal
    gives the table's scale then). One such pair alone may be two copies of a two-index card lying
    apart; copies in two overlapping meld runs make parallel pairs too, but each a step along from
    the last, slanted to them (test_copies_in_two_overlapping_runs_stay_apart)."""
    edges = []
    for card in cards:
        if card.orientation is None and len(card.corners) == 2:
            a, b = (np.array(_centre(c.box)) for c in card.corners)
            edges.append(((a + b) / 2, b - a))
    for k, (middle, edge) in enumerate(edges):
        length = float(np.hypot(*edge))
        for other_middle, other in edges[k + 1 :]:
            other_length = float(np.hypot(*other))
            if abs(length - other_length) > FAN_EDGE_TOLERANCE * max(length, other_length):
                continue
            cross = abs(float(edge[0] * other[1] - edge[1] * other[0])) / (length * other_length)
            step = other_middle - middle
            slant = abs(float(step @ edge)) / max(length * float(np.hypot(*step)), 1e-9)
            if cross < math.sin(math.radians(ANGLE_TOLERANCE)) and slant < FAN_STEP_SLANT:
                return True
    return False


HELD_INDEX_COST = 0.5  # added to a pair whose face holds another index of its name


def _holds_another(fit: PairFit, group: Sequence[Corner], i: int, j: int) -> float:
    """HELD_INDEX_COST when an index of the pair's name other than its two lies on the face the pair
    implies. Of two cards of one name overlapping, the corner seen on the other's face is the one on
    top; pairing across them leaves that corner inside a card whose own index shows, which a card on
    it would hide (a QH thrown on a QH: its top index paired with the lower one's bottom index left
    its own bottom index to pair with a QD, petras film 2001 round 5)."""
    outline = card_outline(fit.centre, fit.orientation, fit.px_per_mm)
    # (a four-index card's other two indices lie on its face where its own two do, turned)
    spots = [_face_spot(c, outline) for c in (group[i], group[j])]
    for k, c in enumerate(group):
        if k in (i, j):
            continue
        u, v = _face_spot(c, outline)
        if max(abs(u), abs(v)) < 0.5 and not any(
            abs(abs(u) - abs(su)) < 0.1 and abs(abs(v) - abs(sv)) < 0.1 for su, sv in spots
        ):
            return HELD_INDEX_COST
    return 0.0


def _diagonal_scales(cards: Sequence[PhysicalCard]) -> list[float]:
    """The scale (pixels per mm) of each card seen by its two diagonal indices: the table's, in all."""
    return [_diagonal_scale(c) for c in cards if c.orientation is not None and len(c.corners) == 2]


def _diagonal_scale(card: PhysicalCard) -> float:
    """Pixels per mm of a card whose two diagonal indices were seen."""
    a, b = (_centre(k.box) for k in card.corners)
    return math.dist(a, b) / index_geometry(card.card).pair_distance_mm


def _grouped(
    corners: Sequence[Corner],
    image_size: tuple[int, int] | None,
    edges: bool,
    scale: float | None = None,
    join_edges: bool = False,
) -> list[PhysicalCard]:
    """The physical cards of `corners`; two indices along one card's edge pair only when `edges` (and
    at the table's `scale`, where given), and two lone ones of different faces join along an edge only
    with `join_edges` (a four-index deck known to be on the table, not only one whose scale fits)."""
    by_card: dict[str, list[Corner]] = defaultdict(list)
    for corner in corners:
        by_card[corner.card].append(corner)
    out: list[PhysicalCard] = []
    for name in sorted(by_card):
        group = sorted(_one_index_once(by_card[name]), key=_sort_key)
        fits: dict[tuple[int, int], PairFit] = {}
        costs: dict[tuple[int, int], float] = {}
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                fit = fit_pair(group[i], group[j], corners)
                if fit is not None:  # a diagonal also fits as an edge at some angles: it is a diagonal
                    fits[(i, j)] = fit
                    costs[(i, j)] = fit.cost + _holds_another(fit, group, i, j)
                elif edges and (side := fit_side(group[i], group[j], corners, scale)) is not None:
                    costs[(i, j)] = side
        pairs = _match(costs, len(group))
        paired = {k for pair in pairs for k in pair}
        cards: list[_Card] = []
        for i, j in pairs:
            fit = fits.get((i, j))
            if fit is None:  # two indices along one edge: the card's extent is not known
                cards.append(_Card([group[i], group[j]]))
            else:
                outline = card_outline(fit.centre, fit.orientation, fit.px_per_mm)
                cards.append(_Card([group[i], group[j]], fit.orientation, outline))
        seen_whole = [card.outline for card in cards if card.outline is not None]
        cards += [
            _Card([c])
            for k, c in enumerate(group)
            if k not in paired and not any(_on_face(c, outline, ART_REACH / 2) for outline in seen_whole)
        ]
        for card in _join_four_index(cards, name, corners):
            boxes = [c.box for c in card.corners]
            if card.outline is not None:
                boxes.append(_outline_box(card.outline))
            conf = max(c.confidence for c in card.corners)
            box = _clip(_union(boxes), image_size)
            out.append(
                PhysicalCard(name, conf, box, tuple(card.corners), card.orientation, _alternatives(card.corners, name))
            )
    out = _join_misread_pairs(out, corners, image_size, edges=join_edges)
    out = _split_stacked_marks(out, corners, image_size)
    out.sort(key=lambda c: (c.box[1], c.box[0], c.card, c.box[2], c.box[3]))
    return out


JOIN_MIN = 0.1  # a corner's next reading at least this likely may name the card it shares with another
JOIN_SCALE_CARDS = 2  # cards seen by their diagonal that give the table's scale for such a join ...
JOIN_SCALE_TOLERANCE = 1.25  # ... which its own scale may miss by this factor either way


def _at_scale(fit: PairFit, table_scale: float) -> bool:
    """Whether a pair's scale (pixels per mm) is the table's, within JOIN_SCALE_TOLERANCE."""
    return abs(math.log(fit.px_per_mm / table_scale)) <= math.log(JOIN_SCALE_TOLERANCE)


def _reading(corner: Corner, name: str) -> float:
    if corner.card == name:
        return corner.confidence
    return next((p for n, p in corner.alternatives if n == name), 0.0)


def _turned(name: str) -> str | None:
    """The face an index of `name` reads as upside down, where that is another face (6H and 9H)."""
    rank, suit = name[:-1], name[-1:]
    return {"6": "9", "9": "6"}[rank] + suit if rank in ("6", "9") else None


def _join_misread_pairs(
    cards: list[PhysicalCard],
    corners: Sequence[Corner],
    image_size: tuple[int, int] | None,
    edges: bool = False,
) -> list[PhysicalCard]:
    """Join two lone corners of different faces lying where one card's two indices would, when one's
    next reading (JOIN_MIN or more) is the other's face: one card whose second index was misread (a
    JS's bottom index read JC 0.51, JS 0.49), or when the two are a 6 and a 9 of one suit. The card
    takes the face both readings make likeliest; joined to a JK, the face whose index the boxes fit
    better. With `edges` (a four-index deck on the table), two lone corners along one card's edge
    join the same way (a fanned Dondorf 2H whose upside-down bottom-left index read 2C 0.53, 2H 0.18)."""
    lone = [k for k, c in enumerate(cards) if len(c.corners) == 1]
    joins: list[tuple[float, int, int, str, PairFit | None]] = []  # a join along an edge has no fit
    # two misread corners must lie a card's diagonal apart at the table's scale where its cards show it:
    # the size of the boxes alone lets a far shorter diagonal pass (a meld's 6C paired with the 9C of
    # the row above, 0.6 of a card's diagonal apart, petras film 1002 round 6)
    scales = _diagonal_scales(cards)
    table_scale = float(np.median(scales)) if len(scales) >= JOIN_SCALE_CARDS else None
    for x, i in enumerate(lone):
        for j in lone[x + 1 :]:
            a, b = cards[i].corners[0], cards[j].corners[0]
            if a.card == b.card:
                continue
            # a 6 read upside down is a 9: the surer index names the card
            turned = max(a, b, key=lambda c: c.confidence).card if _turned(a.card) == b.card else None
            fits: dict[str, tuple[float, PairFit]] = {}
            for name in (a.card, b.card):
                pa, pb = _reading(a, name), _reading(b, name)
                if name == turned:
                    pa, pb = max(pa, JOIN_MIN), max(pb, JOIN_MIN)
                if min(pa, pb) < JOIN_MIN:
                    continue
                fit = fit_pair(replace(a, card=name), replace(b, card=name), corners)
                if fit is not None and table_scale is not None and not _at_scale(fit, table_scale):
                    continue
                if fit is not None:
                    fits[name] = (pa * pb, fit)
                # two readings and a cut-short box are too little: the boxes must both fit the index
                elif (
                    edges and fit_side(replace(a, card=name), replace(b, card=name), corners, covered=False) is not None
                ):
                    joins.append((pa * pb, i, j, name, None))
            face = next((n for n in (a.card, b.card) if n != "JK"), None)
            if "JK" in fits and face is not None:
                # a mark read JK is one the model could not place, and a joker's word is taller and
                # narrower than a face's index (its star no different): the card is the face where the
                # boxes fit its index as well
                fit = fit_pair(replace(a, card=face), replace(b, card=face), corners)
                if fit is not None and fit.cost <= fits["JK"][1].cost:
                    fits = {face: (max(fits.get(face, (0.0, fit))[0], fits["JK"][0]), fit)}
            joins.extend((score, i, j, name, fit) for name, (score, fit) in fits.items())
    used: set[int] = set()
    out: list[PhysicalCard] = []
    for _score, i, j, name, fit in sorted(joins, key=lambda t: (-t[0], t[1], t[2], t[3])):
        if i in used or j in used:
            continue
        used.update((i, j))
        out.append(_joined_card(name, (cards[i].corners[0], cards[j].corners[0]), fit, image_size))
    return [c for k, c in enumerate(cards) if k not in used] + out


def _outline_box(outline: np.ndarray) -> Box:
    return (
        float(outline[:, 0].min()),
        float(outline[:, 1].min()),
        float(outline[:, 0].max()),
        float(outline[:, 1].max()),
    )


def _joined_card(
    name: str, pair: tuple[Corner, Corner], fit: PairFit | None, image_size: tuple[int, int] | None
) -> PhysicalCard:
    """One card of `name` from two lone corners joined (`fit` None: along an edge, extent unknown)."""
    boxes = [pair[0].box, pair[1].box]
    if fit is not None:
        boxes.append(_outline_box(card_outline(fit.centre, fit.orientation, fit.px_per_mm)))
    conf = max(_reading(c, name) for c in pair)
    orientation = fit.orientation if fit is not None else None
    return PhysicalCard(name, conf, _clip(_union(boxes), image_size), pair, orientation, _alternatives(pair, name))


STACK_READING_MAX = 0.9  # a mark read JK surer than this is a joker's
STACK_AREA_MIN = 1.15  # the long box covers this many times the card's other index at least ...
STACK_COST_MAX = 0.35  # ... and its end nearest that index pairs with it this well (fit_pair's cost)


def _stacked_end(mark: Box, index: Box) -> Box:
    """The stretch of `mark` as long as `index` along the mark's long side, at the end nearest `index`."""
    x1, y1, x2, y2 = mark
    (iw, ih), (mx, my), (ix, iy) = _size(index), _centre(mark), _centre(index)
    if y2 - y1 >= x2 - x1:
        return (x1, y2 - ih, x2, y2) if iy > my else (x1, y1, x2, y1 + ih)
    return (x2 - iw, y1, x2, y2) if ix > mx else (x1, y1, x1 + iw, y2)


def _split_stacked_marks(
    cards: list[PhysicalCard], corners: Sequence[Corner], image_size: tuple[int, int] | None
) -> list[PhysicalCard]:
    """On a pile, the index of the card beneath may peek out right past the top card's own index; the
    detector then frames the two marks in a row as one long box, too long to pair with the card's
    other index. It reads as the top card (an AC on a 4C: AC 0.51, 4C 0.24 next, boxed 15 x 31 px
    against its bottom index's 12 x 19, so the AC counted twice and the referee took the second for
    a throw), or like the word JOKER (a KS thrown on a 2C, boxed 13 x 37 px and read JK 0.76, so the
    referee took the throw for a joker's); both petras film 1002 round 3. A lone box read as a lone
    index's face, or JK not surely, whose end nearest that index pairs with it as one card's two
    indices, is that card's index: the card is the face, its two corners that end and the index."""
    lone = [k for k, c in enumerate(cards) if len(c.corners) == 1]
    joins: list[tuple[float, int, int, Corner, PairFit]] = []
    for i in lone:
        mark = cards[i].corners[0]
        for j in lone:
            index = cards[j].corners[0]
            if index.card == "JK" or i == j:
                continue
            if not (mark.card == index.card or (mark.card == "JK" and mark.confidence < STACK_READING_MAX)):
                continue
            if box_area(mark.box) < STACK_AREA_MIN * box_area(index.box):
                continue
            (mw, mh), (iw, ih) = _size(mark.box), _size(index.box)
            if (mh >= mw) != (ih >= iw):
                continue  # the marks lie in a row along the index's long side (a 34 x 31 box is no such row)
            end = Corner(index.card, _reading(mark, index.card), _stacked_end(mark.box, index.box), mark.alternatives)
            fit = fit_pair(end, index, corners)
            if fit is not None and fit.cost <= STACK_COST_MAX:
                joins.append((fit.cost, i, j, end, fit))
    used: set[int] = set()
    out: list[PhysicalCard] = []
    for _cost, i, j, end, fit in sorted(joins, key=lambda t: (t[0], t[1], t[2])):
        if i in used or j in used:
            continue
        used.update((i, j))
        out.append(_joined_card(cards[j].card, (end, cards[j].corners[0]), fit, image_size))
    return [c for k, c in enumerate(cards) if k not in used] + out
