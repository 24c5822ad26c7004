"""Card faces drawn by the project itself, with the exact boxes of their two corner indices.

A face is a BGRA image of a 63 x 88 mm card at `FACE_W` x `FACE_H` pixels. Designs vary the index
font, its size and placement, colours, border and the centre art, so that the detector learns the
rank-and-suit mark rather than one deck. The index in the bottom-right corner is the top-left one
turned 180 degrees, as on real cards.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FACE_W, FACE_H = 252, 352  # 4 px per mm
SUIT_GLYPH = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
RED_SUITS = ("H", "D")
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = (
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSansCondensed.ttf",
    "DejaVuSansCondensed-Bold.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSerifCondensed.ttf",
    "DejaVuSerifCondensed-Bold.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSansMono-Bold.ttf",
)
SUIT_FONT = "DejaVuSans.ttf"  # holds the four suit glyphs
Quad = np.ndarray  # 4 x 2 float32 points, clockwise from top-left


ART_X = 0.36  # the centre art's left edge, as a share of the card width, unless a design crowds it


@dataclass(frozen=True)
class Design:
    """One procedural deck design."""

    name: str
    font: str
    index_height: float  # rank glyph height as a share of the card height
    index_x: float  # left edge of the index as a share of the card width
    index_y: float
    suit_scale: float  # suit glyph size relative to the rank glyph
    red: tuple[int, int, int]  # BGR
    black: tuple[int, int, int]
    paper: tuple[int, int, int]
    border: int  # 0 for none, else line width in px
    rank_style: str  # "A" or "1" style aces are not used: ranks are always A 2-10 J Q K
    ten_narrow: bool  # draw "10" condensed, as many decks do
    centre: str  # "pips", "big", "frame"
    joker_index: str = "word"  # one of JOKER_INDICES
    four_index: bool = False  # the index in all four corners, as on many continental decks
    suit_font: str = SUIT_FONT  # the index's suit glyphs (a name in FONT_DIR, or a path)
    # the centre art: its left edge as a share of the card width (the right edge mirrors it), its top
    # as a share of the height (the bottom mirrors it), and the pips' size as a share of the height.
    # Many decks crowd their pips against the index; the art never covers the index itself.
    art_x: float = ART_X
    art_y: float = 0.2
    pip_size: float = 0.08

    def own_face(self, card: str) -> Face | None:
        """A face the design supplies ready-made (a card theme's artwork); None to draw it here."""
        return None

    def own_back(self) -> np.ndarray | None:
        """A ready-made BGRA back; None for the drawn lattice."""
        return None


def _rng_design(i: int) -> Design:
    rng = random.Random(9000 + i)
    paper = tuple(
        int(v)
        for v in np.clip(np.array([250, 250, 250]) - rng.randint(0, 30) * np.array([1, rng.random(), 0.6]), 200, 255)
    )
    return Design(
        name=f"proc{i:02d}",
        font=rng.choice(FONTS),
        index_height=rng.uniform(0.085, 0.12),
        index_x=rng.uniform(0.035, 0.08),
        index_y=rng.uniform(0.025, 0.06),
        suit_scale=rng.uniform(0.7, 1.0),
        red=(rng.randint(0, 60), rng.randint(0, 40), rng.randint(150, 230)),
        black=(rng.randint(0, 50), rng.randint(0, 50), rng.randint(0, 50)),
        paper=(paper[0], paper[1], paper[2]),
        border=rng.choice([0, 0, 2, 3]),
        rank_style="A",
        ten_narrow=rng.random() < 0.5,
        centre=rng.choice(["pips", "big", "frame"]),
    )


# How a joker's corner is marked: the word JOKER or Joker written downwards, a star alone, in a
# disc or in a ring, or a J over a star. Decks differ most here, and a reader that knows one form
# misses the others.
JOKER_INDICES = ("word", "word-mixed", "star", "star-disc", "star-ring", "j-star")


def _variant_design(i: int) -> Design:
    """A training design drawn from a wider range than the first 32: large bold indices with wide
    "10"s, every joker mark and four-index faces."""
    rng = random.Random(9500 + i)
    base = _rng_design(100 + i)
    bold = [f for f in FONTS if "Bold" in f]
    return Design(
        **{k: getattr(base, k) for k in ("paper", "red", "black", "border", "rank_style", "centre", "index_y")},
        name=f"var{i:02d}",
        font=rng.choice(bold if rng.random() < 0.6 else FONTS),
        index_height=rng.uniform(0.085, 0.13),
        index_x=rng.uniform(0.03, 0.07),
        suit_scale=rng.uniform(0.7, 1.0),
        ten_narrow=rng.random() < 0.3,
        joker_index=JOKER_INDICES[i % len(JOKER_INDICES)],
        four_index=rng.random() < 0.4,
    )


# Designs 0-23 train, 24-31 are held out for evaluation (never seen in training). The variants
# train too; they came later, so the first 24 stay the designs the demo and the films draw from.
PROCEDURAL = tuple(_rng_design(i) for i in range(32))
TRAIN_DESIGNS = PROCEDURAL[:24]
HELD_OUT_DESIGNS = PROCEDURAL[24:]
VARIANT_DESIGNS = tuple(_variant_design(i) for i in range(18))


def _crowded_design(i: int) -> Design:
    """A training design as the variants are drawn, with big pips crowded against the index (up to a
    few px of it), level with it at the top, and the court cards' frame beside it: a crop of such an
    index holds the art, as on many real decks."""
    rng = random.Random(9900 + i)
    base = _variant_design(300 + i)
    return replace(
        base,
        name=f"crowd{i:02d}",
        art_x=rng.uniform(0.12, 0.26),
        art_y=rng.uniform(0.05, 0.14),
        pip_size=rng.uniform(0.11, 0.17),
        centre="pips" if rng.random() < 0.8 else "frame",
    )


CROWDED_DESIGNS = tuple(_crowded_design(i) for i in range(16))


# Fonts of Debian's font packages that vision_models/install_card_themes.sh installs on training
# machines (never needed on the device or in tests): more letterforms and suit glyphs than DejaVu's,
# for the font variants. Italic, oblique and script faces are left out: no deck prints its index so.
TRAINING_FONT_DIRS = (
    Path("/usr/share/fonts/opentype/urw-base35"),
    Path("/usr/share/fonts/opentype/linux-libertine"),
    Path("/usr/share/fonts/truetype/freefont"),
    Path("/usr/share/fonts/truetype/liberation"),
    Path("/usr/share/texmf/fonts/opentype/public/tex-gyre"),
    Path("/usr/share/fonts/opentype/ebgaramond"),
    Path("/usr/share/fonts/truetype/crosextra"),
    Path("/usr/share/fonts/truetype/open-sans"),
    Path("/usr/share/fonts/truetype/lato"),
    Path("/usr/share/fonts/opentype/cantarell"),
    Path("/usr/share/fonts/truetype/roboto/unhinted"),
)
SLANTED = ("italic", "oblique", "ita.", "_ri.", "_rbi.", "_rzi.", "z003", "math", "hairline", "thin")


def training_fonts() -> tuple[list[str], list[str]]:
    """(fonts that draw every rank, fonts that also draw the four suits) found in TRAINING_FONT_DIRS,
    as sorted paths: the same packages give the same fonts, so the same designs."""
    from fontTools.ttLib import TTFont  # a training-time need, with the fonts

    ranks, suits = [], []
    files = sorted(f for d in TRAINING_FONT_DIRS if d.is_dir() for f in d.rglob("*") if f.suffix in (".ttf", ".otf"))
    for f in files:
        if any(k in f.name.lower() for k in SLANTED):
            continue
        try:
            cmap = TTFont(str(f), fontNumber=0, lazy=True).getBestCmap() or {}
        except Exception:  # noqa: BLE001 - a font fontTools cannot read is one the renderer skips
            continue
        if all(ord(c) in cmap for c in "AJQK1234567890OER"):
            ranks.append(str(f))
            if all(ord(g) in cmap for g in SUIT_GLYPH.values()):
                suits.append(str(f))
    return ranks, suits


def font_variant_designs(count: int = 40) -> tuple[Design, ...]:
    """Training designs as the variants are drawn, their ranks and suits in the training fonts (empty
    where those fonts are not installed)."""
    ranks, suits = training_fonts()
    if not ranks:
        return ()
    suits = suits or [SUIT_FONT]
    out = []
    for i in range(count):
        rng = random.Random(9700 + i)
        base = _variant_design(50 + i)
        out.append(replace(base, name=f"font{i:02d}", font=rng.choice(ranks), suit_font=rng.choice(suits)))
    return tuple(out)


@lru_cache(maxsize=64)
def _font(name: str, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / name), px)


def _colour(design: Design, card: str) -> tuple[int, int, int]:
    if card == "JK":
        return design.black
    return design.red if card[-1] in RED_SUITS else design.black


def _rgb(bgr: tuple[int, int, int]) -> tuple[int, int, int]:
    return (bgr[2], bgr[1], bgr[0])


def _draw_index(draw: ImageDraw.ImageDraw, design: Design, card: str, x: int, y: int) -> tuple[int, int, int, int]:
    """Draw the rank over the suit at (x, y); return the ink box (x1, y1, x2, y2)."""
    colour = _rgb(_colour(design, card))
    h = int(design.index_height * FACE_H)
    if card == "JK" and design.joker_index not in ("word", "word-mixed"):
        return _draw_joker_mark(draw, design.joker_index, colour, x, y, h)
    if card == "JK":
        # a joker's index is the word JOKER (or Joker) written downwards
        font = _font(design.font, int(h * 0.55))
        boxes = []
        cy = y
        for ch in "JOKER" if design.joker_index == "word" else "Joker":
            draw.text((x, cy), ch, font=font, fill=colour)
            b = tuple(int(v) for v in draw.textbbox((x, cy), ch, font=font))
            boxes.append(b)
            cy = b[3] + max(1, h // 14)
        return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
    rank = card[:-1]
    font = _font(design.font, h)
    if rank == "10" and design.ten_narrow:
        font = _font(
            "DejaVuSansCondensed-Bold.ttf" if "Bold" in design.font else "DejaVuSansCondensed.ttf", int(h * 0.9)
        )
    draw.text((x, y), rank, font=font, fill=colour, anchor="lt")
    rb = [int(v) for v in draw.textbbox((x, y), rank, font=font, anchor="lt")]
    sfont = _font(design.suit_font, int(h * design.suit_scale))
    cx = (rb[0] + rb[2]) // 2
    sy = rb[3] + max(2, h // 8)
    draw.text((cx, sy), SUIT_GLYPH[card[-1]], font=sfont, fill=colour, anchor="mt")
    sb = [int(v) for v in draw.textbbox((cx, sy), SUIT_GLYPH[card[-1]], font=sfont, anchor="mt")]
    return (min(rb[0], sb[0]), min(rb[1], sb[1]), max(rb[2], sb[2]), max(rb[3], sb[3]))


def _draw_joker_mark(
    draw: ImageDraw.ImageDraw, kind: str, colour: tuple[int, int, int], x: int, y: int, h: int
) -> tuple[int, int, int, int]:
    """A joker's corner drawn as a star: alone, white in a disc, in a ring, or under a J."""
    star = "\u2605"
    if kind == "j-star":
        font = _font("DejaVuSans-Bold.ttf", h)
        draw.text((x, y), "J", font=font, fill=colour, anchor="lt")
        jb = [int(v) for v in draw.textbbox((x, y), "J", font=font, anchor="lt")]
        cx, sy = (jb[0] + jb[2]) // 2, jb[3] + max(2, h // 8)
        sfont = _font(SUIT_FONT, int(h * 0.8))
        draw.text((cx, sy), star, font=sfont, fill=colour, anchor="mt")
        sb = [int(v) for v in draw.textbbox((cx, sy), star, font=sfont, anchor="mt")]
        return (min(jb[0], sb[0]), jb[1], max(jb[2], sb[2]), sb[3])
    d = int(h * 1.1)
    if kind == "star":
        centre, font = (x + d // 2, y + d // 2), _font(SUIT_FONT, d)
        draw.text(centre, star, font=font, fill=colour, anchor="mm")
        b = [int(v) for v in draw.textbbox(centre, star, font=font, anchor="mm")]
        return (b[0], b[1], b[2], b[3])
    ring = kind == "star-ring"
    draw.ellipse((x, y, x + d, y + d), fill=None if ring else colour, outline=colour, width=max(2, d // 12))
    inner = (255, 255, 255) if not ring else colour
    draw.text((x + d / 2, y + d / 2), star, font=_font(SUIT_FONT, int(d * 0.75)), fill=inner, anchor="mm")
    return (x, y, x + d, y + d)


_PIPS: dict[int, list[tuple[float, float]]] = {  # pip centres in a 3 x 7 grid (column, row), standard layouts
    1: [(1, 3)],
    2: [(1, 0), (1, 6)],
    3: [(1, 0), (1, 3), (1, 6)],
    4: [(0, 0), (2, 0), (0, 6), (2, 6)],
    5: [(0, 0), (2, 0), (1, 3), (0, 6), (2, 6)],
    6: [(0, 0), (2, 0), (0, 3), (2, 3), (0, 6), (2, 6)],
    7: [(0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (0, 6), (2, 6)],
    8: [(0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (1, 4.5), (0, 6), (2, 6)],
    9: [(0, 0), (2, 0), (0, 2), (2, 2), (1, 3), (0, 4), (2, 4), (0, 6), (2, 6)],
    10: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2), (0, 4), (2, 4), (1, 5), (0, 6), (2, 6)],
}


INDEX_CLEARANCE = 6  # px kept between the centre art and the index's ink (the label quads pad it by 2)


def _draw_centre(draw: ImageDraw.ImageDraw, design: Design, card: str, index_right: int) -> None:
    """The centre art, kept clear of the index columns down both sides (`index_right`: the right edge
    of the top-left index's ink; the right-hand index mirrors it)."""
    colour = _rgb(_colour(design, card))
    pip = int(FACE_H * design.pip_size)
    # a pip is drawn centred on its column (its ink under 0.45 of its size either side): the outer
    # columns keep it clear of the index
    x0 = max(FACE_W * design.art_x, index_right + INDEX_CLEARANCE + pip * 0.45)
    x1 = FACE_W - x0
    y0, y1 = FACE_H * design.art_y, FACE_H * (1 - design.art_y)
    if card == "JK":
        font = _font(design.font, int(FACE_H * 0.16))
        draw.text(
            (FACE_W / 2, FACE_H / 2), "\u2605", font=_font(SUIT_FONT, int(FACE_H * 0.35)), fill=colour, anchor="mm"
        )
        draw.text((FACE_W / 2, FACE_H * 0.78), "JK", font=font, fill=colour, anchor="mm")
        return
    rank, suit = card[:-1], card[-1]
    glyph = SUIT_GLYPH[suit]
    if rank in ("J", "Q", "K") or design.centre == "frame":
        fx0 = max(FACE_W * design.art_x, index_right + INDEX_CLEARANCE)
        draw.rectangle((fx0, y0, FACE_W - fx0, y1), outline=colour, width=3)
        if rank in ("J", "Q", "K"):
            draw.text(
                (FACE_W / 2, FACE_H * 0.42), rank, font=_font(design.font, int(FACE_H * 0.22)), fill=colour, anchor="mm"
            )
            draw.text(
                (FACE_W / 2, FACE_H * 0.62), glyph, font=_font(SUIT_FONT, int(FACE_H * 0.14)), fill=colour, anchor="mm"
            )
            return
    n = 1 if rank == "A" else int(rank)
    if design.centre == "big" or n == 1:
        draw.text(
            (FACE_W / 2, FACE_H / 2),
            glyph,
            font=_font(SUIT_FONT, int(FACE_H * (0.3 if n == 1 else 0.22))),
            fill=colour,
            anchor="mm",
        )
        if n > 1:
            draw.text(
                (FACE_W / 2, FACE_H * 0.75), rank, font=_font(design.font, int(FACE_H * 0.1)), fill=colour, anchor="mm"
            )
        return
    pf = _font(SUIT_FONT, pip)
    for cx, cy in _PIPS[n]:
        px = x0 + (x1 - x0) * cx / 2
        py = y0 + (y1 - y0) * cy / 6
        draw.text((px, py), glyph, font=pf, fill=colour, anchor="mm")


@dataclass(frozen=True)
class Face:
    image: np.ndarray  # FACE_H x FACE_W x 4, BGRA
    # the corner indices as quads in face pixels: top-left, bottom-right and, on four-index decks,
    # top-right and bottom-left
    corners: tuple[Quad, ...]


def _corner_radius() -> int:
    return int(FACE_W * 0.055)


@lru_cache(maxsize=4096)
def render_face(design: Design, card: str) -> Face:
    """The face of `card` in `design`, with the quads of its two corner indices."""
    ready = design.own_face(card)
    if ready is not None:
        return ready
    img = Image.new("RGBA", (FACE_W, FACE_H), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    paper = _rgb(design.paper)
    r = _corner_radius()
    draw.rounded_rectangle(
        (0, 0, FACE_W - 1, FACE_H - 1), radius=r, fill=paper + (255,), outline=(150, 150, 150, 255), width=1
    )
    if design.border:
        inset = int(FACE_W * 0.2)
        draw.rounded_rectangle(
            (inset, int(FACE_H * 0.14), FACE_W - inset, int(FACE_H * 0.86)),
            radius=r,
            outline=_rgb(_colour(design, card)) + (255,),
            width=design.border,
        )
    x = int(design.index_x * FACE_W)
    y = int(design.index_y * FACE_H)
    # crowded art needs the index's extent first (a dry run); the designs drawn before crowding
    # existed keep their art where it was, so their faces stay as trained and evaluated
    crowded = design.art_x < ART_X
    index_right = _draw_index(ImageDraw.Draw(Image.new("RGBA", img.size)), design, card, x, y)[2] if crowded else 0
    _draw_centre(draw, design, card, index_right)
    box = _draw_index(draw, design, card, x, y)
    # the bottom-right index: the same mark turned 180 degrees
    rgba = np.array(img)
    x1, y1, x2, y2 = box
    patch = rgba[y1 : y2 + 1, x1 : x2 + 1].copy()
    rot = patch[::-1, ::-1]
    bx1, by1 = FACE_W - 1 - x2, FACE_H - 1 - y2
    _paint(rgba, rot, bx1, by1, paper)
    # quads are continuous edges: pixel x covers [x, x + 1)
    tl = _quad(x1, y1, x2 + 1, y2 + 1)
    br = _quad(bx1, by1, bx1 + (x2 - x1) + 1, by1 + (y2 - y1) + 1)
    quads = [tl, br[[2, 3, 0, 1]]]
    if design.four_index:
        # the top-right index is the top-left one again (above the bottom-right one), the bottom-left
        # one that turned 180 degrees (below the top-left one)
        _paint(rgba, patch, bx1, y1, paper)
        _paint(rgba, rot, x1, by1, paper)
        bl = _quad(x1, by1, x2 + 1, by1 + (y2 - y1) + 1)
        quads += [_quad(bx1, y1, bx1 + (x2 - x1) + 1, y2 + 1), bl[[2, 3, 0, 1]]]
    bgra = cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGRA)
    return Face(bgra, tuple(quads))


def _paint(rgba: np.ndarray, patch: np.ndarray, x: int, y: int, paper: tuple[int, int, int]) -> None:
    """Copy an index's ink (not its paper) onto the face at (x, y)."""
    region = rgba[y : y + patch.shape[0], x : x + patch.shape[1]]
    ink = patch[..., 3] > 0
    ink &= np.any(patch[..., :3] != np.array(paper, dtype=np.uint8), axis=-1)
    region[ink] = patch[ink]


def _quad(x1: float, y1: float, x2: float, y2: float) -> Quad:
    pad = 2.0
    return np.array(
        [[x1 - pad, y1 - pad], [x2 + pad, y1 - pad], [x2 + pad, y2 + pad], [x1 - pad, y2 + pad]], dtype=np.float32
    )


@lru_cache(maxsize=64)
def render_back(seed: int, design: Design | None = None) -> np.ndarray:
    """A card back: the design's own, else a coloured lattice, BGRA."""
    if design is not None:
        ready = design.own_back()
        if ready is not None:
            return ready
    rng = random.Random(seed)
    colour = rng.choice([(40, 40, 170), (150, 60, 30), (40, 110, 40), (90, 30, 90)])
    img = np.zeros((FACE_H, FACE_W, 4), np.uint8)
    mask = np.zeros((FACE_H, FACE_W), np.uint8)
    cv2.rectangle(mask, (0, 0), (FACE_W - 1, FACE_H - 1), 255, -1)
    img[..., :3] = 245
    cv2.rectangle(img, (12, 12), (FACE_W - 13, FACE_H - 13), colour + (255,), -1)
    for k in range(-FACE_H, FACE_W + FACE_H, 14):
        cv2.line(img, (k, 12), (k + FACE_H, FACE_H), (235, 235, 235, 255), 2)
        cv2.line(img, (k, FACE_H), (k + FACE_H, 12), (235, 235, 235, 255), 2)
    img[..., 3] = mask
    return img
