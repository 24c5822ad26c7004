"""Top-down camera frames of a real game situation, with exact labels.

A scene is laid out on the table in millimetres (melds in overlapping rows in front of each seat,
a messy discard pile, a face-down stock, hand spreads), drawn card by card onto a felt, wood or
cloth texture, seen through a camera up to about 25 degrees off vertical, and spoiled the way a
real camera spoils it: uneven light, shadows, glare, blur, sensor noise, JPEG artefacts.

Every card's outline and both corner-index quads are carried through each transform, and an
occlusion map (which card owns each pixel) says which corner indices are visible.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

import cv2
import numpy as np

from ..classes import CLASS_NAMES
from .faces import FACE_H, FACE_W, Design, render_back, render_face

CARD_MM = (63.0, 88.0)
VISIBLE_SHARE = 0.9  # a corner index counts as visible when this share of it is uncovered
# the leading strip of an index, as it reads: the "1" of a "10" lies in it, so a 10 whose "0" a fanned
# card hides still names itself
LEAD_WIDTH = 0.4


@dataclass
class Placed:
    card: str  # "7H", "JK", or "back"
    centre: tuple[float, float]  # table millimetres
    angle: float  # degrees, counter-clockwise; 0 = upright for a viewer at the bottom edge
    zone: str
    design: Design | None = None


@dataclass
class CardLabel:
    card: str
    zone: str
    outline: np.ndarray  # 4 x 2 image points
    corners: list[np.ndarray | None]  # the index quads (2, or 4 on four-index decks), None where covered
    visible_share: float
    corner_shares: tuple[float, ...] = (0.0, 0.0)  # uncovered share of each index
    quads: list[np.ndarray] = field(default_factory=list)  # every index quad, covered or not
    lead_shares: tuple[float, ...] = ()  # uncovered share of each index's leading strip (see LEAD_WIDTH)


def quad_box(q: np.ndarray) -> tuple[float, float, float, float]:
    """The axis-aligned box (x1, y1, x2, y2) of a quad's points."""
    x1, y1 = q.min(axis=0)
    x2, y2 = q.max(axis=0)
    return (float(x1), float(y1), float(x2), float(y2))


@dataclass(frozen=True)
class Spoil:
    """What the camera did to a rendered frame: the blurs that decide whether its indices are legible."""

    blur_sigma: float = 0.0  # Gaussian blur of the whole frame, px (0: none)
    shake_px: int = 0  # camera-shake (motion) blur: the streak length, px (0: none)
    jpeg_quality: int = 100
    noise_sigma: float = 0.0


@dataclass
class Scene:
    image: np.ndarray  # BGR
    labels: list[CardLabel] = field(default_factory=list)
    design: str = ""  # the deck design the scene was drawn in (cards may carry their own)
    spoil: Spoil = Spoil()  # none for a clean render

    def corner_boxes(self) -> list[tuple[str, tuple[float, float, float, float]]]:
        """Every visible corner index as (card, axis-aligned box)."""
        return [(lab.card, quad_box(q)) for lab in self.labels for q in lab.corners if q is not None]

    def label_dicts(self) -> list[dict[str, Any]]:
        return [
            {
                "card": lab.card,
                "zone": lab.zone,
                "outline": lab.outline.round(1).tolist(),
                "corners": [None if q is None else q.round(1).tolist() for q in lab.corners],
                "visible": round(lab.visible_share, 3),
            }
            for lab in self.labels
        ]


# ------------------------------------------------------------------ layout of a game situation


def _deck_cards(rng: random.Random, decks: int, jokers: bool, joker_share: float = 0.0) -> list[str]:
    """Shuffled decks; for training only, `joker_share` of the cards are made jokers (two in 108
    are too few for the detector to learn every design's joker mark)."""
    cards = [c for c in CLASS_NAMES if c != "JK"] * decks + (["JK"] * (2 * decks) if jokers else [])
    rng.shuffle(cards)
    if joker_share > 0:
        cards = ["JK" if rng.random() < joker_share else c for c in cards]
    return cards


def _fan(
    cards: Sequence[str], start: tuple[float, float], angle: float, step_mm: float, zone: str, rng: random.Random
) -> list[Placed]:
    """A row of overlapping cards, each shifted along the row so its top-left index shows."""
    a = math.radians(angle)
    dx, dy = math.cos(a), -math.sin(a)
    out = []
    for i, c in enumerate(cards):
        jitter = rng.uniform(-1.5, 1.5)
        x = start[0] + dx * step_mm * i + rng.uniform(-1, 1)
        y = start[1] + dy * step_mm * i + rng.uniform(-1, 1)
        out.append(Placed(c, (x, y), angle + jitter, zone))
    return out


def spread_layout(
    cards: Sequence[str], centre: tuple[float, float], angle: float, zone: str, rng: random.Random
) -> list[Placed]:
    """A hand spread: cards turned about a pivot below the hand, each on top of the one to its left."""
    n = len(cards)
    spread = rng.uniform(4, 9)
    radius = rng.uniform(90, 140)
    t = math.radians(angle)
    pivot = (centre[0] + radius * math.sin(t), centre[1] + radius * math.cos(t))
    out = []
    for i, c in enumerate(cards):
        ti = angle - (i - (n - 1) / 2) * spread
        a = math.radians(ti)
        out.append(Placed(c, (pivot[0] - radius * math.sin(a), pivot[1] - radius * math.cos(a)), ti, zone))
    return out


def layout_game(
    rng: random.Random, table_mm: tuple[float, float] = (1200.0, 900.0), joker_share: float = 0.0
) -> list[Placed]:
    """A plausible table: seats' melds, discard pile, stock and some hand spreads, in draw order."""
    tw, th = table_mm
    deck = _deck_cards(rng, rng.choice([2, 2, 3]), jokers=rng.random() < 0.9, joker_share=joker_share)
    placed: list[Placed] = []

    def deal(n: int) -> list[str]:
        return [deck.pop() for _ in range(min(n, len(deck)))]  # two decks can run out on four busy seats

    seats = rng.randint(3, 6)
    # seats around the table: bottom, right, top, left edges (angle the cards face)
    edges = [(tw / 2, th - 150, 0.0), (tw - 150, th / 2, 90.0), (tw / 2, 150, 180.0), (150, th / 2, 270.0)]
    rng.shuffle(edges)
    used_edges = edges[: min(4, seats)]
    for s, (ex, ey, face_angle) in enumerate(used_edges):
        melds = rng.randint(0, 3)
        a = math.radians(face_angle)
        along = (math.cos(a), -math.sin(a))
        row_len = rng.uniform(250, 420)
        for m in range(melds):
            n = rng.randint(3, 8)
            cards = deal(n)
            if not cards:
                break
            step = rng.uniform(14, 24)
            offset = -row_len / 2 + m * (row_len / max(1, melds))
            start = (ex + along[0] * offset + rng.uniform(-10, 10), ey + along[1] * offset + rng.uniform(-10, 10))
            placed += _fan(cards, start, face_angle + rng.uniform(-6, 6), step, f"meld:{s}:{m}", rng)
        if rng.random() < 0.35:
            n = rng.randint(4, 12)
            cards = deal(n)
            centre = (ex + rng.uniform(-60, 60), ey + rng.uniform(-40, 40))
            placed += spread_layout(cards, centre, face_angle + rng.uniform(-10, 10), f"hand:{s}", rng)
    # stock: a face-down stack, then the discard pile beside it, messy
    cx, cy = tw / 2 + rng.uniform(-120, 120), th / 2 + rng.uniform(-80, 80)
    for _ in range(rng.randint(3, 8)):
        placed.append(Placed("back", (cx + rng.uniform(-2, 2), cy + rng.uniform(-2, 2)), rng.uniform(-8, 8), "stock"))
    dx, dy = cx + rng.uniform(70, 110), cy + rng.uniform(-20, 20)
    for card in deal(rng.randint(1, 9)):
        placed.append(Placed(card, (dx + rng.gauss(0, 12), dy + rng.gauss(0, 12)), rng.uniform(0, 360), "discard"))
    # a few loose cards anywhere, any rotation (upside-down and sideways included)
    for card in deal(rng.randint(0, 6)):
        placed.append(
            Placed(card, (rng.uniform(100, tw - 100), rng.uniform(100, th - 100)), rng.uniform(0, 360), "loose")
        )
    return placed


# ------------------------------------------------------------------ drawing


def _texture(rng: random.Random, w: int, h: int) -> np.ndarray:
    kind = rng.choice(["felt", "wood", "cloth", "plain"])
    np_rng = np.random.default_rng(rng.randint(0, 2**31))
    base = np.array([rng.randint(20, 200) for _ in range(3)], np.float32)
    if kind == "felt":
        base = np.array([rng.randint(20, 90), rng.randint(80, 150), rng.randint(20, 80)], np.float32)
        noise = cv2.GaussianBlur(np_rng.normal(0, 12, (h, w)).astype(np.float32), (0, 0), 1.5)
        img = base[None, None, :] + noise[..., None]
    elif kind == "wood":
        base = np.array([rng.randint(30, 80), rng.randint(70, 130), rng.randint(110, 190)], np.float32)
        ys = np.arange(h, dtype=np.float32)[:, None]
        xs = np.arange(w, dtype=np.float32)[None, :]
        freq = rng.uniform(0.02, 0.06)
        grain = np.sin((ys + 25 * np.sin(xs * 0.004 + rng.random() * 6)) * freq) * 18
        grain = grain + cv2.GaussianBlur(np_rng.normal(0, 10, (h, w)).astype(np.float32), (0, 0), 3)
        img = base[None, None, :] + grain[..., None]
        if rng.random() < 0.5:
            img = np.ascontiguousarray(np.transpose(cv2.resize(img, (h, w)), (1, 0, 2)))
    elif kind == "cloth":
        period = rng.randint(12, 40)
        ys, xs = np.mgrid[0:h, 0:w]
        checks = (((ys // period) + (xs // period)) % 2).astype(np.float32)
        other = np.array([rng.randint(60, 240) for _ in range(3)], np.float32)
        img = base[None, None, :] * (1 - checks[..., None]) + other[None, None, :] * checks[..., None]
        img += np_rng.normal(0, 6, (h, w, 1)).astype(np.float32)
    else:
        img = base[None, None, :] + np_rng.normal(0, 5, (h, w, 1)).astype(np.float32)
    return np.asarray(np.clip(img, 0, 255), dtype=np.uint8)


def _card_matrix(p: Placed, px_per_mm: float) -> np.ndarray:
    """Affine map from face pixels to table pixels for a placed card."""
    s = CARD_MM[0] * px_per_mm / FACE_W
    a = math.radians(p.angle)
    c, si = math.cos(a) * s, math.sin(a) * s
    # rotate about the face centre, then move the centre to the card's position
    fx, fy = FACE_W / 2, FACE_H / 2
    tx = p.centre[0] * px_per_mm - (c * fx + si * fy)
    ty = p.centre[1] * px_per_mm - (-si * fx + c * fy)
    return np.array([[c, si, tx], [-si, c, ty]], np.float32)


def _apply(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return np.asarray(pts @ m[:, :2].T + m[:, 2], dtype=np.float32)


def paste_card(
    canvas: np.ndarray,
    owner: np.ndarray,
    index: int,
    img: np.ndarray,
    m: np.ndarray,
    outline: np.ndarray,
    margin: int = 12,
    shadow: tuple[float, float, float, float] = (2.5, 3.5, 3.0, 0.35),
) -> None:
    """Draw one card (a BGRA face, affine `m` from face to canvas pixels) onto the float canvas over a soft
    shadow (offset x, y, blur, strength), and mark the pixels it covers as `index` in `owner`."""
    h, w = owner.shape
    # work inside the card's bounding box (plus room for its shadow) only
    x1, y1 = np.floor(outline.min(axis=0)).astype(int) - margin
    x2, y2 = np.ceil(outline.max(axis=0)).astype(int) + margin
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 <= x1 or y2 <= y1:
        return
    roi = canvas[y1:y2, x1:x2]
    local = m.copy()
    local[:, 2] -= (x1, y1)
    rw, rh = x2 - x1, y2 - y1
    dx, dy, blur, strength = shadow
    sh = np.zeros((rh, rw), np.float32)
    cv2.fillConvexPoly(sh, np.round(outline - (x1, y1) + (dx, dy)).astype(np.int32), 1.0)
    roi *= (1 - strength * cv2.GaussianBlur(sh, (0, 0), blur))[..., None]
    warped = cv2.warpAffine(img, local, (rw, rh), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3:4].astype(np.float32) / 255.0
    roi[:] = roi * (1 - alpha) + warped[..., :3].astype(np.float32) * alpha
    mask = np.zeros((rh, rw), np.uint8)
    cv2.fillConvexPoly(mask, np.round(outline - (x1, y1)).astype(np.int32), 1)
    owner[y1:y2, x1:x2][mask > 0] = index


def draw_scene(
    placed: Sequence[Placed],
    design: Design,
    rng: random.Random,
    size: tuple[int, int] = (1920, 1080),
    table_mm: tuple[float, float] = (1200.0, 900.0),
    spoil: bool = True,
    tilt_deg: float | None = None,
) -> Scene:
    """Draw `placed` cards with `design` (or each card's own design) and return the frame with labels."""
    w, h = size
    px_per_mm = min(w / table_mm[0], h / table_mm[1]) * rng.uniform(1.0, 1.25)
    canvas = _texture(rng, w, h).astype(np.float32)
    owner = np.full((h, w), -1, np.int32)
    outlines: list[np.ndarray] = []
    corner_quads: list[tuple[np.ndarray, ...] | None] = []
    shift = np.array([(w - table_mm[0] * px_per_mm) / 2, (h - table_mm[1] * px_per_mm) / 2], np.float32)
    face_outline = np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], np.float32)
    for i, p in enumerate(placed):
        m = _card_matrix(p, px_per_mm)
        m[:, 2] += shift
        if p.card == "back":
            img = render_back(7, p.design or design)
            quads = None
        else:
            face = render_face(p.design or design, p.card)
            img = face.image
            quads = tuple(_apply(m, q) for q in face.corners)
        outline = _apply(m, face_outline)
        outlines.append(outline)
        corner_quads.append(quads)
        paste_card(canvas, owner, i, img, m, outline)
    image = np.clip(canvas, 0, 255).astype(np.uint8)
    # the camera: up to ~25 degrees off vertical, as a perspective warp of the whole table
    tilt = rng.uniform(0, 25) if tilt_deg is None else tilt_deg
    hmat = _tilt_homography(w, h, tilt, rng)
    image = cv2.warpPerspective(image, hmat, (w, h), borderMode=cv2.BORDER_REFLECT)
    owner = cv2.warpPerspective(owner.astype(np.float32), hmat, (w, h), flags=cv2.INTER_NEAREST, borderValue=-1).astype(
        np.int32
    )
    labels: list[CardLabel] = []
    for i, p in enumerate(placed):
        if p.card == "back":
            continue
        outline = cv2.perspectiveTransform(outlines[i][None], hmat)[0]
        quads = corner_quads[i]
        assert quads is not None
        seen: list[np.ndarray | None] = []
        shares = []
        leads = []
        all_quads = []
        for q in quads:
            qq = cv2.perspectiveTransform(q[None], hmat)[0]
            all_quads.append(qq)
            share_q = _uncovered(owner, qq, i)
            shares.append(share_q)
            leads.append(_uncovered(owner, lead_strip(qq), i))
            seen.append(qq if share_q >= VISIBLE_SHARE else None)
        share = float((owner == i).sum()) / max(1.0, cv2.contourArea(outline))
        labels.append(CardLabel(p.card, p.zone, outline, seen, min(1.0, share), tuple(shares), all_quads, tuple(leads)))
    spoiled = Spoil()
    if spoil:
        image, spoiled = spoil_image(image, rng)
    return Scene(image, labels, design.name, spoiled)


def lead_strip(quad: np.ndarray) -> np.ndarray:
    """The leading LEAD_WIDTH of an index quad (its points start at the index's own top-left, in
    reading order): where a "10" prints its "1"."""
    top = quad[0] + (quad[1] - quad[0]) * LEAD_WIDTH
    bottom = quad[3] + (quad[2] - quad[3]) * LEAD_WIDTH
    return np.array([quad[0], top, bottom, quad[3]], np.float32)


def _uncovered(owner: np.ndarray, quad: np.ndarray, i: int) -> float:
    """The share of a corner quad's pixels that card `i` owns (0 when outside the frame)."""
    h, w = owner.shape
    x1, y1 = np.floor(quad.min(axis=0)).astype(int)
    x2, y2 = np.ceil(quad.max(axis=0)).astype(int)
    if x1 < 0 or y1 < 0 or x2 >= w or y2 >= h:
        return 0.0
    mask = np.zeros((y2 - y1 + 1, x2 - x1 + 1), np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad - [x1, y1]).astype(np.int32), 1)
    inside = mask > 0
    total = int(inside.sum())
    if total == 0:
        return 0.0
    mine = int((owner[y1 : y2 + 1, x1 : x2 + 1][inside] == i).sum())
    return mine / total


def _tilt_homography(w: int, h: int, tilt: float, rng: random.Random) -> np.ndarray:
    """A homography for a camera `tilt` degrees off vertical in a random direction."""
    t = math.radians(tilt)
    d = rng.uniform(0, 2 * math.pi)
    k = math.tan(t) * 0.5  # how much the far side shrinks
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    shrink = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float32)
    # the side facing direction d shrinks towards the centre
    dirv = np.array([math.cos(d), math.sin(d)], np.float32)
    dst = []
    for (x, y), sgn in zip(src, shrink):
        toward = float(np.dot(sgn, dirv))
        amount = max(0.0, toward) * k
        dst.append([x - sgn[0] * amount * w * 0.5 * 0.5, y - sgn[1] * amount * h * 0.5 * 0.5])
    return np.asarray(cv2.getPerspectiveTransform(src, np.array(dst, np.float32)))


def _soft_blob(
    h: int, w: int, rng: random.Random, rx: tuple[int, int], ry: tuple[int, int], blur: tuple[float, float]
) -> np.ndarray:
    """A blurred ellipse mask (0..1) somewhere in the frame."""
    mask = np.zeros((h, w), np.float32)
    centre = (rng.randint(0, w), rng.randint(0, h))
    axes = (rng.randint(*rx), rng.randint(*ry))
    cv2.ellipse(mask, centre, axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
    return np.asarray(cv2.GaussianBlur(mask, (0, 0), rng.uniform(*blur)))


def spoil_image(image: np.ndarray, rng: random.Random) -> tuple[np.ndarray, Spoil]:
    """Uneven light, shadows, glare, blur, sensor noise and JPEG artefacts; and the blurs applied."""
    h, w = image.shape[:2]
    img = image.astype(np.float32)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    # uneven light: a smooth gradient plus a warm or cool cast
    gx, gy = rng.uniform(-1, 1), rng.uniform(-1, 1)
    light = 1 + rng.uniform(0.1, 0.45) * ((xs / w - 0.5) * gx + (ys / h - 0.5) * gy)
    light *= rng.uniform(0.6, 1.15)
    img *= light[..., None]
    img *= np.array([rng.uniform(0.85, 1.1), 1.0, rng.uniform(0.85, 1.15)], np.float32)
    for _ in range(rng.randint(0, 3)):  # soft shadows of arms or lamps
        img *= (1 - rng.uniform(0.2, 0.5) * _soft_blob(h, w, rng, (80, 500), (40, 250), (20, 60)))[..., None]
    for _ in range(rng.randint(0, 2)):  # glare
        img += (rng.uniform(60, 160) * _soft_blob(h, w, rng, (30, 200), (20, 120), (10, 40)))[..., None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    sigma, k = 0.0, 0
    if rng.random() < 0.5:
        sigma = rng.uniform(0.3, 1.3)
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    if rng.random() < 0.2:  # motion blur: the camera shaken during the exposure
        k = rng.randint(3, 7)
        kern = np.zeros((k, k), np.float32)
        kern[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        kern = cv2.warpAffine(kern, rot, (k, k))
        img = cv2.filter2D(img, -1, kern / max(kern.sum(), 1e-6))
    noise_rng = np.random.default_rng(rng.randint(0, 2**31))
    noise_sigma = rng.uniform(1, 7)
    noise = noise_rng.normal(0, noise_sigma, img.shape)
    img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    quality = rng.randint(45, 95)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    spoil = Spoil(sigma, k, quality, noise_sigma)
    return (np.asarray(decoded) if decoded is not None else img), spoil


def render_table(
    seed: int,
    designs: Sequence[Design],
    size: tuple[int, int] = (1920, 1080),
    spoil: bool = True,
    zoom: float = 1.0,
    joker_share: float = 0.0,
) -> Scene:
    """A whole game situation, deterministic per seed. `zoom` > 1 frames part of the table closer
    (bigger cards, as a phone photo shows them)."""
    rng = random.Random(seed)
    placed = layout_game(rng, joker_share=joker_share)
    design = rng.choice(list(designs))
    table = (1200.0 / zoom, 900.0 / zoom)
    if zoom != 1.0:
        # frame the part of the table around a random placed card
        focus = rng.choice(placed).centre
        ox, oy = focus[0] - table[0] / 2, focus[1] - table[1] / 2
        placed = [Placed(p.card, (p.centre[0] - ox, p.centre[1] - oy), p.angle, p.zone, p.design) for p in placed]
    return draw_scene(placed, design, rng, size=size, table_mm=table, spoil=spoil)


def render_spread(
    seed: int, designs: Sequence[Design], size: tuple[int, int] = (800, 600), joker_share: float = 0.0
) -> tuple[Scene, list[str]]:
    """A hand spread shown at the end of a round, at the device camera's scale; and its true cards."""
    rng = random.Random(seed)
    deck = _deck_cards(rng, 2, jokers=True, joker_share=joker_share)
    cards = [deck.pop() for _ in range(rng.randint(3, 13))]
    table = (size[0] / 1.6, size[1] / 1.6)  # about 1.6 px per mm, as a 1080p camera over a 1.2 m table
    placed = spread_layout(cards, (table[0] / 2, table[1] / 2 + 20), rng.uniform(-30, 30), "hand", rng)
    scene = draw_scene(placed, rng.choice(list(designs)), rng, size=size, table_mm=table, tilt_deg=rng.uniform(0, 20))
    return scene, cards


def render_jokers(seed: int, design: Design, size: tuple[int, int] = (1920, 1080)) -> Scene:
    """A deck's two jokers face up on the empty table, as the device is shown them once
    (`mayi-table learn-jokers`): a calm, steady frame."""
    rng = random.Random(seed)
    placed = [
        Placed("JK", (x + rng.uniform(-60, 60), 450 + rng.uniform(-150, 150)), rng.uniform(0, 360), "pile")
        for x in (420.0, 780.0)
    ]
    return draw_scene(placed, design, rng, size=size, spoil=False)


def training_scene(
    seed: int,
    rng: random.Random,
    designs: Sequence[Design],
    zoomed_share: float,
    spread_share: float,
    joker_share: float = 0.0,
) -> Scene:
    """One scene of a training set: a table (framed closer for `zoomed_share` of them) or, for
    `spread_share` of them, a tightly fanned hand spread whose indices are barely uncovered;
    `joker_share` of its cards made jokers. Draws from `rng` in a fixed order, so a seed always
    gives the same scene."""
    zoom = rng.uniform(1.6, 2.8) if rng.random() < zoomed_share else 1.0
    if spread_share > 0 and rng.random() < spread_share:
        return render_spread(seed, designs, joker_share=joker_share)[0]
    return render_table(seed, designs, zoom=zoom, joker_share=joker_share)
