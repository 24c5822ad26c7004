"""A rendered game film: bots play May I? and the table renderer draws every moment of it.

`GameFilm(profile, seed)` plays a bot game (`simulate.play_game`) and keeps, for each true event,
what lies face up on the table: each seat's melds as overlapping rows in its zone (one meld per
row, each card's index showing), the discard pile as a messy stack whose top card is fully visible,
the face-down stock, and at a round's end every hand spread face up in its seat's zone.

`GameFilm.items()` then yields, in time order on a virtual monotonic clock, `FilmFrame`s (a few
frames with a skin-toned arm reaching in from the acting seat's edge, then steady frames of the
new table, each with its own light sensor noise) and `ButtonPress`es ("May I?" presses: the
buyer's within the claim window, the player to act's when it takes the discard, and a long press
by the seat that went out once every hand is spread). Deterministic per seed.

`oracle_cards(labels)` is a recogniser that cannot misread: the exact visible cards of a frame,
built from the renderer's labels, to test reading and refereeing apart from recognition.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import cv2
import numpy as np

from ...rules.cards import JOKER, RANKS
from ...rules.engine import Game
from ...rules.events import Buy, Deal, Discard, Draw, Event, LayOff, Open
from ...rules.simulate import GameRun, play_game
from ..classes import Corner, PhysicalCard
from ..table_reading import Zones, axes_of
from .faces import FACE_H, FACE_W, HELD_OUT_DESIGNS, TRAIN_DESIGNS, Design, render_back, render_face
from .scene import (
    CARD_MM,
    VISIBLE_SHARE,
    CardLabel,
    Placed,
    _apply,
    _card_matrix,
    _texture,
    _tilt_homography,
    _uncovered,
    lead_strip,
    paste_card,
    quad_box,
)

STEP_MM = 17.0  # along a fanned row: at least this, more where the design's indices are wider
ROW_PITCH_MM = 34.0  # between rows of one seat: at least this, more where the design's indices are taller
INDEX_CLEARANCE_MM = 4.5  # what a player leaves beyond an index when fanning (the cards lie a little askew)
MARGIN_MM = 8.0
SKIN_TONES = ((175, 195, 235), (120, 160, 215), (90, 125, 175), (60, 90, 135))  # BGR


@dataclass(frozen=True)
class ButtonPress:
    seat: str
    t: float
    long: bool = False  # held down: "every hand is spread, score the round"


@dataclass
class FilmFrame:
    t: float
    image: np.ndarray  # BGR
    labels: list[CardLabel]
    covered: bool  # an arm is over the table (the truth, for tests)
    truth_events: int  # how many true events the table shows so far


FilmItem = FilmFrame | ButtonPress


@dataclass
class _Moment:
    """What the table shows after one true event, and who reached in."""

    event: Event | None
    events_done: int
    melds: list[tuple[str, tuple[str, ...]]]  # (owner, physical cards in row order)
    pile: tuple[str, ...]
    spreads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    actor: str | None = None
    target: str = "discard"  # where the arm reaches: "discard", "seat:<i>", "stock"
    presses: list[ButtonPress] = field(default_factory=list)
    wait_s: float = 0.0  # the clock moves on this much before the arm comes (a claim window)
    stock: bool = True
    round_no: int | str = 0


def _hash_rng(*key: object) -> random.Random:
    return random.Random(zlib.crc32(repr(key).encode()))


class GameFilm:
    """A bot game as a film of camera frames and button presses (see the module doc)."""

    def __init__(
        self,
        profile: str,
        seed: int,
        players: int = 4,
        zones: Zones | None = None,
        size: tuple[int, int] = (1920, 1080),
        held_out: bool = False,
        steady_frames: int = 4,
        arm_frames: int = 2,
        frame_dt: float = 0.25,
        claim_window_s: float = 3.0,
        tilt_deg: float = 0.0,
        noise: float = 2.0,
        press_on_take: float = 1.0,
        stop_after_round: int | None = None,
        seats: Sequence[str] | None = None,
    ) -> None:
        self.zones = zones or Zones.four_seats()
        if len(self.zones.seats) < players:
            raise ValueError(f"the zones have {len(self.zones.seats)} seats; the film needs {players}")
        self.seed = seed
        self.size = size
        self.steady_frames = steady_frames
        self.arm_frames = arm_frames
        self.frame_dt = frame_dt
        self.claim_window_s = claim_window_s
        self.noise = noise
        rng = random.Random(seed)
        self.design: Design = rng.choice(list(HELD_OUT_DESIGNS if held_out else TRAIN_DESIGNS))
        self.step_mm, self.row_pitch_mm = fan_spacing(self.design)
        self.press_rng = random.Random(rng.random())
        self.press_on_take = press_on_take
        w, h = size
        self.ppm = min(w / 1600.0, h / 900.0)  # the frame covers a 1.6 x 0.9 m table top
        self.background = _texture(random.Random(rng.random()), w, h).astype(np.float32)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        gx, gy = rng.uniform(-1, 1), rng.uniform(-1, 1)
        self.light = (1 + rng.uniform(0.05, 0.25) * ((xs / w - 0.5) * gx + (ys / h - 0.5) * gy)).astype(np.float32)
        self.homography = _tilt_homography(w, h, tilt_deg, rng) if tilt_deg > 0 else None
        self.skin = {i: SKIN_TONES[(seed + i) % len(SKIN_TONES)] for i in range(players)}
        self.moments: list[_Moment] = []
        self._last_deal_dealer: str | None = None
        self.run: GameRun = play_game(
            profile, players, seed, on_event=self._on_event, stop_after_round=stop_after_round, seats=seats
        )
        self.seats: tuple[str, ...] = self.run.game.seats
        self.first_dealer: str | None = next((ev.dealer for ev in self.run.events if isinstance(ev, Deal)), None)

    # ----- the physical table after each true event ------------------------------------
    def _on_event(self, game: Game, ev: Event) -> None:
        r = game.round
        assert r is not None
        seats = game.seats
        melds = [(m.owner, tuple(str(c) for c in m.cards)) for m in r.table]
        mom = _Moment(ev, game.events - 1, melds, tuple(r.pile), round_no=r.number)
        if isinstance(ev, Deal):
            if self.moments:
                # the last round's table is cleared before the new deal
                self.moments.append(_Moment(None, mom.events_done - 1, [], (), stock=False, actor=ev.dealer))
            else:
                # the camera watches the empty table before the first deal
                self.moments.append(_Moment(None, mom.events_done - 1, [], (), stock=False))
            mom.actor, mom.target = ev.dealer, "discard"
        elif isinstance(ev, Draw) and ev.source_pile == "stock":
            if not r.over:
                return  # the stock is face down: nothing the camera can see changes
            mom.actor = None  # the last card of the stock ended the round: the hands are spread
        elif isinstance(ev, Draw):
            mom.actor, mom.target = ev.seat, "discard"
            if self.press_rng.random() < self.press_on_take:
                mom.presses.append(ButtonPress(ev.seat, 0.3))
        elif isinstance(ev, Buy):
            mom.actor, mom.target = ev.seat, "discard"
            mom.presses.append(ButtonPress(ev.seat, 0.3 + self.press_rng.uniform(0, 0.5)))
            mom.wait_s = self.claim_window_s + 0.3
        elif isinstance(ev, (Open, LayOff)):
            mom.actor = ev.seat
            owner = r.table[ev.meld].owner if isinstance(ev, LayOff) else ev.seat
            mom.target = f"seat:{seats.index(owner)}"
        elif isinstance(ev, Discard):
            mom.actor, mom.target = ev.seat, "discard"
        else:
            return
        if mom.actor is not None:
            self.moments.append(mom)
        if r.over and not isinstance(ev, Deal):
            # every hand is spread face up, seat by seat, then the seat that went out holds its button
            spreads: dict[str, tuple[str, ...]] = {}
            for s in r.players:
                spreads = dict(spreads)
                spreads[s] = tuple(sorted(r.hands[s].elements()))
                if not spreads[s]:
                    continue
                self.moments.append(
                    _Moment(
                        None,
                        mom.events_done,
                        melds,
                        mom.pile,
                        spreads,
                        actor=s,
                        target=f"seat:{seats.index(s)}",
                        round_no=r.number,
                    )
                )
            last = self.moments[-1]
            last.presses.append(ButtonPress(r.went_out or r.players[0], 0.5, long=True))

    # ----- layout ----------------------------------------------------------------------
    def _zone_mm(self, poly: Sequence[tuple[float, float]]) -> np.ndarray:
        w, h = self.size
        return np.array([(x * w / self.ppm, y * h / self.ppm) for x, y in poly], np.float64)

    def _seat_frame(self, i: int) -> tuple[np.ndarray, np.ndarray, float, float, float, float, float]:
        facing = self.zones.seat_facing(i)
        along, up = axes_of(facing)
        poly = self._zone_mm(self.zones.seats[i])
        u = poly @ along
        v = poly @ up
        return along, up, float(u.min()), float(u.max()), float(v.min()), float(v.max()), facing

    def layout(self, mom: _Moment) -> list[Placed]:
        placed: list[Placed] = []
        cw, ch = CARD_MM
        if mom.stock:
            sx, sy = self._zone_mm(self.zones.stock).mean(axis=0)
            for k in range(4):
                jr = _hash_rng(self.seed, "stock", k)
                placed.append(
                    Placed("back", (sx + jr.uniform(-2, 2), sy + jr.uniform(-2, 2)), jr.uniform(-6, 6), "stock")
                )
        seat_names = list(self.seats_in_order())
        rows: dict[int, int] = {}
        for k, (owner, cards) in enumerate(mom.melds):
            i = seat_names.index(owner)
            along, up, u0, u1, v0, v1, facing = self._seat_frame(i)
            row = rows.get(i, 0)
            rows[i] = row + 1
            jr = _hash_rng(self.seed, "meld", mom.round_no, k)
            angle = facing + jr.uniform(-2, 2)
            a = math.radians(angle - facing)
            dir_ = along * math.cos(a) + up * math.sin(a)
            start = along * (u0 + MARGIN_MM + cw / 2 + jr.uniform(0, 15)) + up * (
                v1 - MARGIN_MM - ch / 2 - row * self.row_pitch_mm
            )
            for n, c in enumerate(cards):
                cr = _hash_rng(self.seed, "card", k, n, c)
                p = start + dir_ * self.step_mm * n + np.array([cr.uniform(-0.8, 0.8), cr.uniform(-0.8, 0.8)])
                placed.append(Placed(c, (float(p[0]), float(p[1])), angle + cr.uniform(-1.2, 1.2), f"seat:{i}"))
        for s, cards in mom.spreads.items():
            i = seat_names.index(s)
            along, up, u0, u1, v0, v1, facing = self._seat_frame(i)
            ustart = u0 + (u1 - u0) * 0.5 + MARGIN_MM + cw / 2
            per_row = max(1, int((u1 - MARGIN_MM - cw / 2 - ustart) // self.step_mm) + 1)
            for n, c in enumerate(cards):
                row, col = divmod(n, per_row)
                cr = _hash_rng(self.seed, "spread", s, n, c)
                p = along * (ustart + col * self.step_mm) + up * (v1 - MARGIN_MM - ch / 2 - row * self.row_pitch_mm)
                p = p + np.array([cr.uniform(-0.8, 0.8), cr.uniform(-0.8, 0.8)])
                placed.append(Placed(c, (float(p[0]), float(p[1])), facing + cr.uniform(-1.5, 1.5), f"hand:{i}"))
        if mom.pile:
            dx, dy = self._zone_mm(self.zones.discard).mean(axis=0)
            base = len(mom.pile)
            for k in range(max(0, base - 5), base):
                jr = _hash_rng(self.seed, "pile", k, mom.pile[k])
                flip = 180.0 if jr.random() < 0.5 else 0.0
                at = (dx + jr.gauss(0, 5), dy + jr.gauss(0, 5))
                placed.append(Placed(mom.pile[k], at, flip + jr.uniform(-10, 10), "discard"))
        return placed

    def seats_in_order(self) -> tuple[str, ...]:
        return self.run.game.seats

    # ----- drawing ---------------------------------------------------------------------
    def _edge_point(self, seat: str) -> np.ndarray:
        i = self.seats_in_order().index(seat)
        along, up, u0, u1, v0, v1, _ = self._seat_frame(i)
        return along * (u0 + u1) / 2 + up * (v0 - 60)

    def _target_point(self, target: str) -> np.ndarray:
        if target.startswith("seat:"):
            return np.asarray(self._zone_mm(self.zones.seats[int(target[5:])]).mean(axis=0))
        poly = self.zones.discard if target == "discard" else self.zones.stock
        return np.asarray(self._zone_mm(poly).mean(axis=0))

    def draw(
        self, placed: Sequence[Placed], arm: tuple[np.ndarray, np.ndarray, tuple[int, int, int]] | None
    ) -> tuple[np.ndarray, list[CardLabel]]:
        """The table with `placed` cards (and an arm from, to, skin colour in mm), and its labels."""
        w, h = self.size
        ppm = self.ppm
        canvas = self.background.copy()
        owner = np.full((h, w), -1, np.int32)
        face_outline = np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], np.float32)
        outlines: list[np.ndarray] = []
        quads_all: list[tuple[np.ndarray, ...] | None] = []
        for i, p in enumerate(placed):
            m = _card_matrix(p, ppm)
            if p.card == "back":
                img = render_back(7)
                quads = None
            else:
                face = render_face(self.design, p.card)
                img = face.image
                quads = tuple(_apply(m, q) for q in face.corners)
            outline = _apply(m, face_outline)
            outlines.append(outline)
            quads_all.append(quads)
            paste_card(canvas, owner, i, img, m, outline, margin=8, shadow=(1.5, 2.5, 2.0, 0.3))
        if arm is not None:
            a, b, colour = arm
            amask = np.zeros((h, w), np.float32)
            pa, pb = (a * ppm).astype(int), (b * ppm).astype(int)
            thick = int(75 * ppm)
            cv2.line(amask, (int(pa[0]), int(pa[1])), (int(pb[0]), int(pb[1])), 1.0, thick)
            cv2.circle(amask, (int(pb[0]), int(pb[1])), int(55 * ppm), 1.0, -1)
            shadow = cv2.GaussianBlur(np.roll(amask, (int(25 * ppm), int(18 * ppm)), axis=(0, 1)), (0, 0), 12 * ppm)
            canvas *= (1 - 0.45 * shadow)[..., None]
            # in place, one channel at a time: full-frame float temporaries are what the device's memory peaks on
            soft = cv2.GaussianBlur(amask, (0, 0), 2.5)
            skin = (0.85 + 0.15 * cv2.GaussianBlur(amask, (0, 0), 20 * ppm)) * soft
            keep = 1 - soft
            for ch in range(3):
                canvas[..., ch] *= keep
                canvas[..., ch] += skin * np.float32(colour[ch])
            owner[amask > 0.5] = -2
        canvas *= self.light[..., None]
        np.clip(canvas, 0, 255, out=canvas)
        image = canvas.astype(np.uint8)
        if self.homography is not None:
            image = cv2.warpPerspective(image, self.homography, (w, h), borderMode=cv2.BORDER_REFLECT)
            owner = cv2.warpPerspective(
                owner.astype(np.float32), self.homography, (w, h), flags=cv2.INTER_NEAREST, borderValue=-1
            ).astype(np.int32)
        labels: list[CardLabel] = []
        for i, p in enumerate(placed):
            q = quads_all[i]
            if q is None:
                continue
            outline = outlines[i]
            corners: list[np.ndarray] = list(q)
            if self.homography is not None:
                outline = cv2.perspectiveTransform(outline[None], self.homography)[0]
                corners = [cv2.perspectiveTransform(c[None], self.homography)[0] for c in corners]
            shares = [_uncovered(owner, c, i) for c in corners]
            leads = tuple(_uncovered(owner, lead_strip(c), i) for c in corners)
            seen: list[np.ndarray | None] = [c if s >= VISIBLE_SHARE else None for c, s in zip(corners, shares)]
            share = float((owner == i).sum()) / max(1.0, cv2.contourArea(outline))
            labels.append(CardLabel(p.card, p.zone, outline, seen, min(1.0, share), tuple(shares), corners, leads))
        return image, labels

    def _noisy(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.noise <= 0:
            return image
        n = rng.standard_normal(image.shape, dtype=np.float32)
        n *= self.noise
        n += image
        np.clip(n, 0, 255, out=n)
        return n.astype(np.uint8)

    # ----- the film --------------------------------------------------------------------
    def items(self, start: int = 0, stop: int | None = None) -> Iterator[FilmItem]:
        """Frames and presses in time order, for moments `start` to `stop` (all by default)."""
        t = 0.0
        nrng = np.random.default_rng(self.seed)
        for mom in self.moments[start:stop]:
            base_t = t
            for p in mom.presses:
                if not p.long:
                    yield ButtonPress(p.seat, base_t + p.t)
            t = base_t + max([p.t for p in mom.presses if not p.long], default=0.0) + mom.wait_s + 0.2
            placed = self.layout(mom)
            if mom.actor is not None and self.arm_frames > 0:
                a = self._edge_point(mom.actor)
                b = self._target_point(mom.target)
                colour = self.skin[self.seats_in_order().index(mom.actor)]
                for k in range(self.arm_frames):
                    frac = (k + 1) / self.arm_frames  # the hand reaches the target in the last arm frame
                    tip = a + (b - a) * frac
                    image, labels = self.draw(placed, (a, tip, colour))
                    yield FilmFrame(t, self._noisy(image, nrng), labels, True, mom.events_done)
                    t += self.frame_dt
            image, labels = self.draw(placed, None)
            for _ in range(self.steady_frames):
                yield FilmFrame(t, self._noisy(image, nrng), labels, False, mom.events_done)
                t += self.frame_dt
            for p in mom.presses:
                if p.long:
                    yield ButtonPress(p.seat, t + p.t, long=True)
                    t += p.t + 0.2

    def __len__(self) -> int:
        return len(self.moments)


def fan_spacing(design: Design) -> tuple[float, float]:
    """(step along a row, pitch between rows) in mm that leave every card's top-left index of
    `design` uncovered: players fan their melds so that the indices show, whatever the deck."""
    scale = CARD_MM[0] / FACE_W
    wide = tall = 0.0
    for card in [r + s for r in RANKS for s in "SHDC"] + [JOKER]:
        q = render_face(design, card).corners[0]
        wide = max(wide, float(q[:, 0].max()) * scale)
        tall = max(tall, float(q[:, 1].max()) * scale)
    return max(STEP_MM, wide + INDEX_CLEARANCE_MM), max(ROW_PITCH_MM, tall + INDEX_CLEARANCE_MM)


# ------------------------------------------------------------------ the oracle recogniser


def oracle_cards(labels: Sequence[CardLabel]) -> list[PhysicalCard]:
    """The cards a perfect recogniser would report: every card with a visible corner index, its
    box spanning its visible indices (and the card between them when both show), confidence 1."""
    out = []
    for lab in labels:
        corners = tuple(Corner(lab.card, 1.0, quad_box(q)) for q in lab.corners if q is not None)
        if not corners:
            continue
        xs = [v for c in corners for v in (c.box[0], c.box[2])]
        ys = [v for c in corners for v in (c.box[1], c.box[3])]
        orientation = None
        if len(lab.corners) >= 2 and lab.corners[0] is not None and lab.corners[1] is not None:
            o = lab.outline
            orientation = math.degrees(math.atan2(-(o[1][1] - o[0][1]), o[1][0] - o[0][0])) % 360
        out.append(PhysicalCard(lab.card, 1.0, (min(xs), min(ys), max(xs), max(ys)), corners, orientation))
    return out
