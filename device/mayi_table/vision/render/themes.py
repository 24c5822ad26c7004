"""Card faces from Debian's card themes (aisleriot's and KDE's), with the exact boxes of their corner indices.

The themes are installed at training time only (`vision_models/install_card_themes.sh`), never committed.
Each card of a theme is rasterised once with `rsvg-convert` to the renderer's face size and cached as PNG,
together with its two corner-index quads, under `~/.cache/mayi-table/themes/` (or a folder passed in).

The quads come from the picture itself: the ink of rank and suit in the top-left corner, grown from the
ink nearest the corner, and the same search on the face turned 180 degrees for the bottom-right index.
A card passes only when its index stands clear of other ink and both indices agree in size and look;
a theme passes only when all 52 naturals pass and their indices sit in one place. A court card whose
figure runs into its index is the exception: its indices are placed where the theme's pip cards print
theirs (a letter is one glyph wide, as a pip card's rank). Themes that do not pass (no corner indices,
German or Swiss suits, art touching a pip card's index) are skipped with a logged reason.

    from mayi_table.vision.render.themes import theme_split
    train, held_out = theme_split()        # ThemeDesign objects, usable wherever a Design is
    scene = render_table(seed, list(TRAIN_DESIGNS) + train)
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from ..classes import CLASS_NAMES
from .faces import FACE_H, FACE_W, PROCEDURAL, Design, Face, _quad

log = logging.getLogger(__name__)

AISLERIOT_DIR = Path("/usr/share/aisleriot/cards")  # gnome-cards-data
KDE_DIR = Path("/usr/share/carddecks")  # kdegames-card-data-kf5
DEFAULT_CACHE = Path.home() / ".cache" / "mayi-table" / "themes"
CACHE_VERSION = 6  # bump when rasterising or index finding changes, to redo the cache
RELOCATE_VERSIONS = {2, 3, 4, 5}  # older caches whose pictures are still good: only the indices are found again

_SVG_RANK = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}
_SVG_SUIT = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}
_JOKER_IDS = ("joker_black", "black_joker", "joker_red", "red_joker", "joker")

# Known by looking: suits or layout the classes cannot describe, so no index finding is tried.
KNOWN_SKIPS = {
    "kde-german": "German suits (hearts, bells, leaves, acorns)",
    "kde-future": "not playing cards (circuit-board art)",
    "ar-swiss-xvii": "Swiss suits",
}
# Court cards lettered in another language (V D R, B D K, В Д К): drawn from the procedural design
# instead, so that the classifier does not learn a German B, so like an 8, as a jack (the held-out
# decks letter J Q K).
OTHER_COURT_LETTERS = frozenset(
    {
        "ar-ancient_french",
        "ar-atlasnye_skat",
        "ar-berlin",
        "ar-lattmann",
        "ar-rheinland",
        "ar-slavic_costumes",
        "ar-x83ee8029",
    }
)
# Jokers whose index the search finds only in part (tango writes J-o-k-e-r with wide gaps).
JOKER_SKIPS = frozenset({"ar-tango"})
# Families kept out of training for held-out evaluation: a family is the theme's first name part, so
# that related themes (anglo, anglo_poker, ...) and the same art shipped by both packages stay together.
HELD_OUT_FAMILIES = frozenset({"dondorf", "tigullio", "simplistic"})

# Index search, as shares of the face size (FACE_W x FACE_H).
_REGION = (0.34, 0.46)  # the top-left part searched for the index
_INK_DIFF = 70  # a channel this far from the paper colour is ink
_GAP_X, _GAP_Y = 0.02, 0.045  # largest gaps inside one index: between the digits of 10, rank to suit
_MARGIN = 1  # px of clear paper the index must have around it (art may come close: anglo court frames)
_MAX_W, _MAX_H = 0.26, 0.4  # an index larger than this is art, not an index
_MAX_H_JOKER = 0.6  # a joker's index may be the word JOKER written downwards


class IndexNotFound(Exception):
    """No clean corner index where one should be."""


@dataclass(frozen=True)
class ThemeSource:
    """One installed theme file."""

    name: str  # "ar-anglo", "kde-standard"
    family: str
    path: Path
    kind: str  # "aisleriot" or "kde"


@dataclass(frozen=True)
class ThemeDesign(Design):
    """A theme's faces, read from the cache. The procedural fields are those of the design used for
    any card the theme lacks (a theme without a usable joker draws the procedural one)."""

    folder: str = ""
    held_out: bool = False
    corners: tuple[tuple[str, tuple[tuple[float, ...], ...]], ...] = field(default=(), compare=False, repr=False)

    def own_face(self, card: str) -> Face | None:
        return _load_face(self.folder, card, self.corners)

    def own_back(self) -> np.ndarray | None:
        return _load_png(self.folder, "back")


def _load_png(folder: str, card: str) -> np.ndarray | None:
    img = cv2.imread(str(Path(folder) / f"{card}.png"), cv2.IMREAD_UNCHANGED)
    if img is None or img.shape != (FACE_H, FACE_W, 4):
        return None
    return np.asarray(img)


def _load_face(folder: str, card: str, corners: tuple[tuple[str, tuple[tuple[float, ...], ...]], ...]) -> Face | None:
    boxes = dict(corners).get(card)
    if boxes is None:
        return None
    img = _load_png(folder, card)
    if img is None:
        return None
    # each quad starts at its index's own top-left: the face's bottom-right for the turned ones
    # (bottom-right and bottom-left), the face's top-left for the upright ones (top-left and top-right)
    turned = (False, True, False, True)
    quads = tuple(_quad(*box)[[2, 3, 0, 1]] if turn else _quad(*box) for box, turn in zip(boxes, turned))
    return Face(img, quads)


# ------------------------------------------------------------------ finding and rasterising themes


def find_theme_files(aisleriot_dir: Path = AISLERIOT_DIR, kde_dir: Path = KDE_DIR) -> list[ThemeSource]:
    """Every installed SVG theme, without duplicates (same file content shipped twice)."""
    out: list[ThemeSource] = []
    seen: set[str] = set()
    files = [(p, "aisleriot") for p in sorted(aisleriot_dir.glob("*.svgz"))]
    files += [(p, "kde") for p in sorted(kde_dir.glob("*/*.svgz"))]
    for path, kind in files:
        digest = hashlib.sha1(path.read_bytes()).hexdigest()
        if digest in seen:
            log.info("theme %s: skipped, the same file as an earlier theme", path)
            continue
        seen.add(digest)
        stem = path.name.removesuffix(".svgz").lower()
        if not re.fullmatch(r"[a-z0-9_.-]+", stem):
            stem = "x" + digest[:8]  # a non-ASCII file name
        name = ("ar-" if kind == "aisleriot" else "kde-") + stem
        family = re.split(r"[_.-]", stem)[0]
        if path.parent.name.startswith("svg-nicu") or name == "ar-ornamental":
            family = "nicu"  # Nicu Buculei's white and ornamental decks, shipped by both packages
        out.append(ThemeSource(name, family, path, kind))
    return out


def svg_id(kind: str, card: str) -> str:
    rank, suit = _SVG_RANK.get(card[:-1], card[:-1]), _SVG_SUIT[card[-1]]
    return f"{suit}_{rank}" if kind == "aisleriot" else f"{rank}_{suit}"


def _rsvg(path: Path, element: str, out: Path, zoom: float, page: tuple[int, int] | None, at: tuple[int, int]) -> None:
    cmd = ["rsvg-convert", "-u", "-i", element, "-z", f"{zoom:.5f}", str(path), "-o", str(out)]
    if page is not None:
        # a page the size of the element, shifted so the element lands on it
        cmd += ["--page-width", str(page[0]), "--page-height", str(page[1]), f"--left={at[0]}", f"--top={at[1]}"]
    done = subprocess.run(cmd, capture_output=True, timeout=120, text=True)
    if done.returncode:
        raise IndexNotFound(f"rsvg-convert failed on {element}: {done.stderr.strip()[-200:]}")


def _ink_box(alpha: np.ndarray) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(alpha > 8)
    if not len(xs):
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def rasterise(path: Path, element: str, work: Path) -> tuple[np.ndarray, float]:
    """The element as a FACE_W x FACE_H BGRA face, and its width/height ratio before stretching."""
    out = work / "r.png"
    # rsvg-convert draws an element on a page from the SVG's origin to the element: find where it is
    _rsvg(path, element, out, 1.0, None, (0, 0))
    first = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    box = None if first is None or first.ndim != 3 or first.shape[2] != 4 else _ink_box(first[..., 3])
    if box is None:
        raise IndexNotFound(f"{element} draws nothing")
    x1, y1, x2, y2 = box
    # then draw it alone at about twice the face size, and shrink: smooth edges, fine strokes kept
    zoom = 2 * FACE_H / (y2 - y1)
    pad = 2
    page = (int((x2 - x1 + 2 * pad) * zoom), int((y2 - y1 + 2 * pad) * zoom))
    _rsvg(path, element, out, zoom, page, (int(-(x1 - pad) * zoom), int(-(y1 - pad) * zoom)))
    big = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    box = None if big is None or big.ndim != 3 or big.shape[2] != 4 else _ink_box(big[..., 3])
    if big is None or box is None:
        raise IndexNotFound(f"{element} draws nothing at zoom {zoom:.2f}")
    x1, y1, x2, y2 = box
    crop = big[y1:y2, x1:x2]
    ratio = (x2 - x1) / (y2 - y1)
    face = cv2.resize(crop, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)
    return np.asarray(face), ratio


# ------------------------------------------------------------------ locating the corner index


def _ink(face: np.ndarray) -> np.ndarray:
    """Ink inside the card (away from its outline stroke) in the top-left search region, as 0/1."""
    h, w = face.shape[:2]
    rw, rh = int(w * _REGION[0]), int(h * _REGION[1])
    alpha = (face[..., 3] > 200).astype(np.uint8)
    # 4 px in from the card's edge: its outline stroke is not ink of the index
    inside = cv2.erode(alpha, np.ones((9, 9), np.uint8), borderValue=0)[:rh, :rw]
    bgr = face[:rh, :rw, :3].astype(np.int16)
    paper = np.median(bgr[inside > 0], axis=0) if inside.any() else np.array([255, 255, 255])
    diff = np.abs(bgr - paper.astype(np.int16)).max(axis=-1)
    return np.asarray((diff > _INK_DIFF) & (inside > 0), dtype=np.uint8)


def locate_index(face: np.ndarray, joker: bool = False) -> tuple[int, int, int, int]:
    """The ink box (x1, y1, x2, y2; x2, y2 exclusive) of the index in the face's top-left corner.

    Grows from the ink nearest the corner through small gaps (rank to suit, digit to digit); the
    result must be a plausible index size and have clear paper around it."""
    h, w = face.shape[:2]
    ink = _ink(face)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    comps, lines = [], set()
    for i in range(1, n):
        x, y, cw, ch, area = (int(v) for v in stats[i])
        if area < 6:
            continue  # specks of texture
        if min(cw, ch) <= 3 and max(cw, ch) > 0.1 * h:
            lines.add(i)  # a frame line along the edge: never part of an index
        elif cw <= _MAX_W * w and ch <= _MAX_H_JOKER * h:
            comps.append((i, x, y, x + cw, y + ch))
    seeds = [c for c in comps if c[4] - c[2] >= 0.025 * h]
    if not seeds:
        raise IndexNotFound("no ink in the top-left corner")
    seed = min(seeds, key=lambda c: c[1] + c[2])
    members = {seed[0]}
    bx1, by1, bx2, by2 = seed[1:]
    gx, gy = _GAP_X * w, _GAP_Y * h
    grown = True
    while grown:
        grown = False
        for i, x1, y1, x2, y2 in comps:
            if i in members:
                continue
            dx = max(0, x1 - bx2, bx1 - x2)
            dy = max(0, y1 - by2, by1 - y2)
            # join along the index's column (suit under rank: centred under it) or its row (the digits of 10)
            below = dx == 0 and dy <= gy and bx1 - gx <= (x1 + x2) / 2 <= bx2 + gx
            # beside: only a glyph of the rank's own height and line (not art that starts level with it)
            sh = seed[4] - seed[2]
            beside = dx <= gx and abs(y1 - seed[2]) <= 0.2 * sh and abs((y2 - y1) - sh) <= 0.25 * sh
            if below or beside:
                members.add(i)
                bx1, by1, bx2, by2 = min(bx1, x1), min(by1, y1), max(bx2, x2), max(by2, y2)
                grown = True
    if bx2 - bx1 > _MAX_W * w or by2 - by1 > (_MAX_H_JOKER if joker else _MAX_H) * h:
        raise IndexNotFound(f"corner ink {bx2 - bx1}x{by2 - by1} px is art, not an index")
    if by2 - by1 < 0.08 * h:
        raise IndexNotFound(f"corner ink only {by2 - by1} px high: no rank and suit")
    if not joker and len(members) < 2:
        raise IndexNotFound("corner ink is one piece: no rank over suit")
    # clear paper round the index: any other ink close by means art or pips touch it
    m = _MARGIN
    ring = labels[max(0, by1 - m) : by2 + m, max(0, bx1 - m) : bx2 + m]
    others = {int(v) for v in np.unique(ring)} - members - {0}
    small = set(range(1, n)) - {c[0] for c in comps} - lines
    inner = {int(v) for v in np.unique(labels[by1:by2, bx1:bx2])}
    # specks may lie near; a frame line may pass close by but not through the index
    if others - small - lines or inner & lines:
        raise IndexNotFound(f"other ink touches the index at {bx1},{by1},{bx2},{by2}")
    if bx2 + m >= ink.shape[1] or by2 + m >= ink.shape[0]:
        raise IndexNotFound("the index runs out of the corner region")
    return bx1, by1, bx2, by2


Box = tuple[int, int, int, int]  # x1, y1, x2, y2 face pixels, x2 and y2 exclusive


def _gray(face: np.ndarray) -> np.ndarray:
    return np.asarray(cv2.cvtColor(np.ascontiguousarray(face[..., :3]), cv2.COLOR_BGR2GRAY), np.float32)


def _looks_alike(gray: np.ndarray, a: Box, b: Box, turn_b: bool) -> float:
    """Normalised cross-correlation of two index crops (the second turned 180 degrees first, if asked)."""
    ca = cv2.resize(gray[a[1] : a[3], a[0] : a[2]], (32, 48), interpolation=cv2.INTER_AREA)
    cb = gray[b[1] : b[3], b[0] : b[2]]
    cb = cv2.resize(cb[::-1, ::-1] if turn_b else cb, (32, 48), interpolation=cv2.INTER_AREA)
    ca, cb = ca - ca.mean(), cb - cb.mean()
    return float((ca * cb).sum() / (np.linalg.norm(ca) * np.linalg.norm(cb) + 1e-6))


def _same_size(a: Box, b: Box) -> bool:
    return abs((a[2] - a[0]) - (b[2] - b[0])) <= 3 and abs((a[3] - a[1]) - (b[3] - b[1])) <= 3


def _side_indices(face: np.ndarray, tl: Box, joker: bool) -> tuple[Box, Box] | None:
    """The top-right and bottom-left indices of a four-index deck (many continental decks print the
    index in all four corners), or None when the face has only the two diagonal ones.

    The top-right one is the top-left one again (upright), the bottom-left one that turned 180 degrees."""
    h, w = face.shape[:2]
    try:
        r = locate_index(np.ascontiguousarray(face[:, ::-1]), joker)
        b = locate_index(np.ascontiguousarray(face[::-1, :]), joker)
    except IndexNotFound:
        return None
    tr = (w - r[2], r[1], w - r[0], r[3])
    bl = (b[0], h - b[3], b[2], h - b[1])
    gray = _gray(face)
    if not (_same_size(tl, tr) and _same_size(tl, bl)):
        return None
    if _looks_alike(gray, tl, tr, turn_b=False) < 0.7 or _looks_alike(gray, tl, bl, turn_b=True) < 0.7:
        return None
    return tr, bl


def locate_indices(face: np.ndarray, joker: bool = False) -> tuple[Box, ...]:
    """The corner indices' ink boxes in face pixels: top-left, bottom-right (found on the face turned
    180 degrees, then mapped back) and, on a four-index deck, top-right and bottom-left. The diagonal
    two must agree in size and look."""
    h, w = face.shape[:2]
    tl = locate_index(face, joker)
    turned = np.ascontiguousarray(face[::-1, ::-1])
    r = locate_index(turned, joker)
    br = (w - r[2], h - r[3], w - r[0], h - r[1])
    if not _same_size(tl, br):
        tw, th = tl[2] - tl[0], tl[3] - tl[1]
        raise IndexNotFound(f"the two indices differ in size ({tw}x{th} and {r[2] - r[0]}x{r[3] - r[1]})")
    ncc = _looks_alike(_gray(face), tl, br, turn_b=True)
    if ncc < 0.7:
        raise IndexNotFound(f"the bottom-right index is not the top-left one turned (ncc {ncc:.2f})")
    sides = _side_indices(face, tl, joker)
    return (tl, br) if sides is None else (tl, br, *sides)


# ------------------------------------------------------------------ preparing and loading themes


def _element_ids(path: Path) -> set[str]:
    text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    return set(re.findall(r'\bid="([^"]+)"', text))


def prepare_theme(src: ThemeSource, cache: Path = DEFAULT_CACHE) -> dict[str, object]:
    """Rasterise a theme into `cache`/name once; return its record (kept as index.json)."""
    folder = cache / src.name
    record_file = folder / "index.json"
    stamp = {"version": CACHE_VERSION, "source": str(src.path), "mtime": src.path.stat().st_mtime}
    if record_file.exists():
        cached: dict[str, object] = json.loads(record_file.read_text())
        if all(cached.get(k) == v for k, v in stamp.items()):
            return cached
        if (
            cached.get("ok")
            and cached.get("version") in RELOCATE_VERSIONS
            and all(cached.get(k) == v for k, v in stamp.items() if k != "version")
        ):
            return _relocate(cached, folder, record_file, stamp)
    folder.mkdir(parents=True, exist_ok=True)
    record: dict[str, object] = dict(stamp, name=src.name, family=src.family, ok=False, reason="", corners={})
    try:
        record.update(_prepare(src, folder))
        record["ok"] = True
    except (IndexNotFound, subprocess.SubprocessError, OSError) as e:
        record["reason"] = str(e)
    record_file.write_text(json.dumps(record, indent=1))
    return record


def _card_indices(face: np.ndarray, card: str) -> list[list[int]]:
    """A card's index boxes as the cache keeps them; a failure names the card."""
    try:
        return [list(box) for box in locate_indices(face, joker=card == "JK")]
    except IndexNotFound as e:
        raise IndexNotFound(f"{card}: {e}") from None


def _relocate(
    cached: dict[str, object], folder: Path, record_file: Path, stamp: dict[str, object]
) -> dict[str, object]:
    """Find the indices again on a cached theme's pictures (no rasterising)."""
    record = dict(cached, **stamp)
    try:
        cards = cached["corners"]
        assert isinstance(cards, dict)
        faces: dict[str, np.ndarray] = {}
        for card in cards:
            face = cv2.imread(str(folder / f"{card}.png"), cv2.IMREAD_UNCHANGED)
            if face is None:
                raise IndexNotFound(f"{card}: cached picture missing")
            faces[card] = face
        corners = {c: _card_indices(f, c) for c, f in faces.items() if c != "JK" and not _is_court(c)}
        _place_courts(corners, {c: f for c, f in faces.items() if _is_court(c)})
        if "JK" in faces:
            corners["JK"] = _card_indices(faces["JK"], "JK")
        record["corners"] = corners
    except IndexNotFound as e:
        record.update(ok=False, reason=str(e), corners={})
    record_file.write_text(json.dumps(record, indent=1))
    return record


def _prepare(src: ThemeSource, folder: Path) -> dict[str, object]:
    if src.name in KNOWN_SKIPS:
        raise IndexNotFound(KNOWN_SKIPS[src.name])
    if shutil.which("rsvg-convert") is None:
        raise IndexNotFound("rsvg-convert is not installed (vision_models/install_card_themes.sh)")
    ids = _element_ids(src.path)
    naturals = [c for c in CLASS_NAMES if c != "JK"]
    if src.name in OTHER_COURT_LETTERS:
        naturals = [c for c in naturals if not _is_court(c)]
    missing = [c for c in naturals if svg_id(src.kind, c) not in ids]
    if missing:
        raise IndexNotFound(f"no elements for {', '.join(missing[:4])}")
    corners: dict[str, list[list[int]]] = {}
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # a cheap first look at one card: most unusable themes fail here, before 52 rasterisations
        order = ["3C"] + [c for c in naturals if c != "3C"]
        courts: dict[str, np.ndarray] = {}  # placed once the pip cards' indices are known
        for card in order:
            face, ratio = rasterise(src.path, svg_id(src.kind, card), work)
            if _is_court(card):
                courts[card] = face
            else:
                corners[card] = _card_indices(face, card)
            ratios.append(ratio)
            cv2.imwrite(str(folder / f"{card}.png"), face)
        _place_courts(corners, courts)
        joker = None if src.name in JOKER_SKIPS else next((j for j in _JOKER_IDS if j in ids), None)
        if joker is None:
            log.info("theme %s: no joker, the procedural one is drawn", src.name)
        else:
            face, _ = rasterise(src.path, joker, work)
            try:
                corners["JK"] = [list(box) for box in locate_indices(face, joker=True)]
                cv2.imwrite(str(folder / "JK.png"), face)
            except IndexNotFound as e:
                log.info("theme %s: joker has no clean index (%s), the procedural one is drawn", src.name, e)
        if "back" in ids:
            try:
                back, _ = rasterise(src.path, "back", work)
                cv2.imwrite(str(folder / "back.png"), back)
            except (IndexNotFound, subprocess.SubprocessError) as e:
                log.info("theme %s: no back (%s)", src.name, e)
    ratio = float(np.median(ratios))
    if abs(ratio / (FACE_W / FACE_H) - 1) > 0.15:
        raise IndexNotFound(f"cards are {ratio:.2f} wide per height, too far from 63 x 88 mm to stretch")
    return {"corners": corners, "aspect": round(ratio, 3)}


COURT_RANKS = frozenset({"J", "Q", "K"})
PIP_RANKS = frozenset({"A", "2", "3", "4", "5", "6", "7", "8", "9"})  # one glyph wide, as a court letter
COURT_WIDTH = 1.4  # a court index found wider than this many pip indices holds art


def _is_court(card: str) -> bool:
    return card != "JK" and card[:-1] in COURT_RANKS


def _court_indices(face: np.ndarray, card: str, corners: dict[str, list[list[int]]]) -> list[list[int]]:
    """A court card's index boxes: its own search's, unless that fails or takes in art (a big suit
    sign level with the letter: wider than COURT_WIDTH pip indices); then the median of the theme's
    pip cards' boxes, corner by corner (a letter is one glyph wide, as their ranks), which must hold
    ink. With too few pip cards to place it, the card's own search decides."""
    pips = [boxes for c, boxes in corners.items() if c[:-1] in PIP_RANKS]
    counts = {len(boxes) for boxes in pips}
    if len(pips) < 30 or len(counts) != 1:
        return _card_indices(face, card)
    boxes = np.median(np.array(pips, np.float32), axis=0).round().astype(int)
    try:
        own = _card_indices(face, card)
        # a big suit sign level with the letter may be taken into the index: then the pips' place
        if len(own) == len(boxes) and own[0][2] - own[0][0] <= COURT_WIDTH * (boxes[0][2] - boxes[0][0]):
            return own
    except IndexNotFound:
        pass
    x1, y1, x2, y2 = (int(v) for v in boxes[0])
    h, w = face.shape[:2]
    gray = _gray(face)
    paper = float(np.median(gray[int(0.02 * h) : int(0.05 * h), int(0.02 * w) : int(0.05 * w)]))
    if (np.abs(gray[y1:y2, x1:x2] - paper) > _INK_DIFF).mean() < 0.1:
        raise IndexNotFound(f"{card}: no index where the theme's pip cards print theirs")
    return [[int(v) for v in box] for box in boxes]


def _place_courts(corners: dict[str, list[list[int]]], courts: dict[str, np.ndarray]) -> None:
    """Add the court cards' indices, found once the pip cards' are known, and check that every index
    starts at one place (the joker's apart); the same for a theme rasterised or relocated."""
    for card, face in courts.items():
        corners[card] = _court_indices(face, card, corners)
    _check_same_place(corners)


def _check_same_place(corners: dict[str, list[list[int]]]) -> None:
    """All indices of a theme start at one place; one that does not was found in the art."""
    tl = np.array([c[0][:2] for c in corners.values()], np.float32)
    med = np.median(tl, axis=0)
    off = np.abs(tl - med)
    bad = [card for card, o in zip(corners, off) if o[0] > 0.04 * FACE_W or o[1] > 0.04 * FACE_H]
    if bad:
        raise IndexNotFound(f"indices out of line on {', '.join(bad[:4])}")


def _design(record: dict[str, object], folder: Path, family: str) -> ThemeDesign:
    corners = record["corners"]
    assert isinstance(corners, dict)
    frozen = tuple(sorted((c, tuple(tuple(float(v) for v in box) for box in boxes)) for c, boxes in corners.items()))
    # fallback procedural fields, fixed per theme name so that rendering stays deterministic
    base = PROCEDURAL[int(hashlib.sha1(str(record["name"]).encode()).hexdigest(), 16) % len(PROCEDURAL)]
    fields = {k: getattr(base, k) for k in Design.__dataclass_fields__}
    fields["name"] = str(record["name"])
    held_out = family in HELD_OUT_FAMILIES
    return ThemeDesign(**fields, folder=str(folder), held_out=held_out, corners=frozen)


def load_themes(cache: Path | None = None, sources: list[ThemeSource] | None = None) -> list[ThemeDesign]:
    """Every usable installed theme as a design (rasterising any not yet cached); skips are logged."""
    cache = cache or DEFAULT_CACHE
    out = []
    for src in find_theme_files() if sources is None else sources:
        record = prepare_theme(src, cache)
        if not record.get("ok"):
            log.info("theme %s: skipped, %s", src.name, record.get("reason"))
            continue
        out.append(_design(record, cache / src.name, src.family))
    return out


@lru_cache(maxsize=4)
def theme_split(cache: Path | None = None) -> tuple[list[ThemeDesign], list[ThemeDesign]]:
    """The usable themes for training, and those held out for evaluation (by family, see HELD_OUT_FAMILIES)."""
    themes = load_themes(cache)
    return [t for t in themes if not t.held_out], [t for t in themes if t.held_out]
