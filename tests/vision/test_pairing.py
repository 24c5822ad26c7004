"""Pairing corner indices into physical cards: flat cards at every angle, fans, duplicates."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import replace

import pytest

from mayi_table.vision.classes import Corner, PhysicalCard
from mayi_table.vision.pairing import (
    DISTANCE_TOLERANCE,
    JOIN_MIN,
    NATURAL_INDEX,
    fit_pair,
    fit_side,
    normalise_orientation,
    pair_corners,
)

from .helpers import card_corners, fan_corners, four_index_corners


def _angle_diff(a: float, b: float) -> float:
    return abs(normalise_orientation(a - b))


def _contains(outer: tuple[float, ...], inner: tuple[float, ...], slack: float = 0.5) -> bool:
    return (
        outer[0] <= inner[0] + slack
        and outer[1] <= inner[1] + slack
        and outer[2] >= inner[2] - slack
        and outer[3] >= inner[3] - slack
    )


@pytest.mark.parametrize("angle", [0, 15, 30, 45, 60, 75, 90, 120, 135, 150, 180, -170, -135, -90, -45, -10, 200, 270])
@pytest.mark.parametrize("px_per_mm", [1.2, 2.0, 3.5])
def test_a_flat_card_at_any_angle_is_one_card(angle: float, px_per_mm: float) -> None:
    tl, br = card_corners("QH", (600, 500), angle, px_per_mm)
    cards = pair_corners([tl, br])
    assert len(cards) == 1
    card = cards[0]
    assert card.card == "QH" and set(card.corners) == {tl, br}
    assert card.confidence == pytest.approx(0.9)  # the max of the two corners
    assert card.orientation is not None
    # upside down is the same as upright: the orientation is modulo 180 degrees
    assert _angle_diff(card.orientation, angle) < 2.0
    assert -90 < card.orientation <= 90
    # the box covers both corners and roughly the card (63 x 88 mm turned by the angle)
    assert _contains(card.box, tl.box) and _contains(card.box, br.box)
    width = card.box[2] - card.box[0]
    assert width >= 63 * px_per_mm * 0.9


def test_upside_down_card_has_the_same_orientation_as_upright() -> None:
    up = pair_corners(list(card_corners("7S", (300, 300), 0)))
    down = pair_corners(list(card_corners("7S", (300, 300), 180)))
    assert up[0].orientation == pytest.approx(0.0, abs=1e-6)
    assert down[0].orientation == pytest.approx(0.0, abs=1e-6)
    assert up[0].box == pytest.approx(down[0].box)


def test_index_design_variation_still_pairs() -> None:
    """Real decks' marks range about 6-15 x 12-19 mm with 1-6 mm insets."""
    rng = random.Random(3)
    for _ in range(300):
        index = (rng.uniform(6, 14), rng.uniform(12.5, 18.5))
        margin = rng.uniform(1.5, 5.5)
        angle = rng.uniform(-180, 180)
        scale = rng.uniform(1.0, 3.5)
        tl, br = card_corners("10C", (800, 600), angle, scale, index_mm=index, margin_mm=margin)
        fit = fit_pair(tl, br)
        assert fit is not None, (index, margin, angle, scale)
        assert _angle_diff(fit.orientation, angle) < 8


def test_joker_pairs_with_its_own_geometry() -> None:
    tl, br = card_corners("JK", (500, 500), 33, 2.0, index_mm=(5.5, 26.0))
    cards = pair_corners([tl, br])
    assert len(cards) == 1 and len(cards[0].corners) == 2


@pytest.mark.parametrize("angle", [0, -65, 33, 120])
def test_a_jokers_word_framed_short_beside_another_index_still_pairs(angle: float) -> None:
    """petras §02 (each deck brings its jokers): the detector frames a joker's long word short where the
    next card's index touches it; the two words are still one joker. Alone, boxes that far apart in
    size are two marks (two star jokers in two meld rows), and a rank and suit is always framed whole."""

    def short(corner: Corner, share: float) -> Corner:
        x1, y1, x2, y2 = corner.box
        return replace(corner, box=(x1, y1, x2 - share * (x2 - x1), y2 - share * (y2 - y1)))

    def touching(corner: Corner) -> Corner:
        x1, y1, x2, y2 = corner.box
        return Corner("5C", 1.0, (x1 - 30, y1 - 30, x1, y1))

    tl, br = card_corners("JK", (500, 500), angle, 3.0, index_mm=(5.5, 26.0))
    word = short(tl, 0.45)
    cards = pair_corners([word, br, touching(word)])
    assert sorted(c.card for c in cards) == ["5C", "JK"]
    assert len(next(c for c in cards if c.card == "JK").corners) == 2
    assert [c.card for c in pair_corners([word, br])] == ["JK", "JK"]
    tl, br = card_corners("7S", (500, 500), angle, 3.0)
    index = short(tl, 0.45)
    assert fit_pair(index, br, [touching(index)]) is None


@pytest.mark.parametrize("angle", [0, 30, 90, 135, -60])
def test_a_star_jokers_two_marks_are_one_joker_and_fanned_star_jokers_stay_two(angle: float) -> None:
    """petras §02 (each deck brings its jokers): many decks mark the joker's corner with a star (alone,
    in a disc, under a J), a mark the size of a rank and suit, not the word JOKER. Both corners of one
    such joker are one card (held-out spread 18 of seed 2003, ar-simplistic: boxes 23 x 23 and
    24 x 23 px, 164 px apart); two fanned side by side stay two."""
    tl, br = card_corners("JK", (500, 500), angle, 2.0)
    cards = pair_corners([tl, br])
    assert [c.card for c in cards] == ["JK"] and len(cards[0].corners) == 2
    held_out = [Corner("JK", 1.0, (438, 250, 461, 273)), Corner("JK", 1.0, (496, 403, 520, 426))]
    assert [len(c.corners) for c in pair_corners(held_out, (800, 600))] == [2]
    for step_mm in (15.0, 20.0, 25.0):
        fanned = pair_corners(fan_corners(["6S", "JK", "JK", "8D"], (500, 500), angle, step_mm))
        assert Counter(c.card for c in fanned)["JK"] == 2


def test_a_held_out_jokers_two_words_are_one_joker() -> None:
    """The detector's boxes on held-out spread 0 of seed 1235 (proc30): the top JOKER, half under the
    5C fanned over it, boxed 38 x 29 px, the bottom one 60 x 38 px. One joker, not two."""
    top = Corner("JK", 0.99, (530, 387, 568, 416))
    bottom = Corner("JK", 0.99, (457, 515, 517, 553))
    five = Corner("5C", 1.0, (516, 356, 550, 388))
    cards = pair_corners([top, bottom, five], (800, 600))
    assert sorted(c.card for c in cards) == ["5C", "JK"]


def test_a_fanned_meld_is_one_card_per_index() -> None:
    meld = ["7H", "8H", "9H", "10H", "JH", "QH"]
    for angle in (0, 25, 90, 180, -60):
        corners = fan_corners(meld, (700, 500), angle, step_mm=18)
        cards = pair_corners(corners)
        assert sorted(c.card for c in cards) == sorted(meld)
        assert all(len(c.corners) == 1 and c.orientation is None for c in cards)
        assert {c.box for c in cards} == {c.box for c in corners}


@pytest.mark.parametrize("step_mm", [10, 15, 20, 25, 30])
@pytest.mark.parametrize("angle", [0, 30, 45, 90, 135, 180, -100])
def test_identical_cards_fanned_stay_two(step_mm: float, angle: float) -> None:
    corners = fan_corners(["6S", "7H", "7H", "8D"], (500, 500), angle, step_mm=step_mm)
    cards = pair_corners(corners)
    assert Counter(c.card for c in cards) == Counter({"7H": 2, "6S": 1, "8D": 1})


@pytest.mark.parametrize("angle", [0, 20, 45, 90, 170, 180, -35])
@pytest.mark.parametrize("gap_mm", [5, 20, 60])
def test_two_identical_flat_cards_are_two_cards(angle: float, gap_mm: float) -> None:
    """Four 7H corners of two flat cards side by side -> two cards, each made of its own two corners."""
    scale = 2.0
    t = math.radians(angle)
    step = (63 + gap_mm) * scale
    a = card_corners("7H", (800, 600), angle, scale, confidence=(0.9, 0.7))
    b = card_corners("7H", (800 + step * math.cos(t), 600 - step * math.sin(t)), angle, scale, confidence=(0.6, 0.5))
    cards = pair_corners([*a, *b])
    assert len(cards) == 2
    assert {frozenset(c.corners) for c in cards} == {frozenset(a), frozenset(b)}
    assert sorted(c.confidence for c in cards) == [0.6, 0.9]


def test_two_identical_flat_cards_one_above_the_other() -> None:
    a = card_corners("KD", (500, 300), 0, 2.0)
    b = card_corners("KD", (500, 300 + 95 * 2.0), 0, 2.0)
    cards = pair_corners([b[1], a[0], b[0], a[1]])
    assert {frozenset(c.corners) for c in cards} == {frozenset(a), frozenset(b)}


def test_flat_and_fanned_copies_of_one_face() -> None:
    flat = card_corners("9C", (300, 300), 10, 2.0)
    fan = fan_corners(["8C", "9C", "10C"], (900, 700), -20, 18)
    cards = pair_corners([*flat, *fan])
    assert Counter(c.card for c in cards) == Counter({"9C": 2, "8C": 1, "10C": 1})
    assert sum(1 for c in cards if len(c.corners) == 2) == 1


# ------------------------------------------------------------------ four-index decks (Dondorf and kin)


@pytest.mark.parametrize("angle", [0, 20, 45, 90, 135, 180, -60, -100])
@pytest.mark.parametrize("px_per_mm", [1.2, 2.5])
def test_a_four_index_card_is_one_card(angle: float, px_per_mm: float) -> None:
    """All four indices of a card lying free: both diagonal pairs share the centre, so one card."""
    corners = four_index_corners("5D", (700, 500), angle, px_per_mm)
    cards = pair_corners(list(corners))
    assert len(cards) == 1 and set(cards[0].corners) == set(corners)
    assert cards[0].orientation is not None


@pytest.mark.parametrize("missing", [0, 1, 2, 3])
def test_three_indices_of_a_four_index_card_are_one_card(missing: int) -> None:
    corners = [c for k, c in enumerate(four_index_corners("QS", (500, 400), 30, 2.0)) if k != missing]
    cards = pair_corners(corners)
    assert len(cards) == 1 and set(cards[0].corners) == set(corners)


@pytest.mark.parametrize(("shown", "askew"), [(4, 2), (4, 3), (4, 0), (3, 2), (3, 0)])
def test_a_four_index_cards_index_framed_askew_is_still_that_card(shown: int, askew: int) -> None:
    """petras §02 (two or three decks; a Dondorf deck prints four indices): the detector frames one
    index of a 7S wide and a little off its centre, stretched over the big pip beside it (held-out
    spread 92 of seed 2003: 38 x 23 px where the index is 15 x 32). The card's other indices fix where
    it lies: one 7S, not two."""
    corners = list(four_index_corners("7S", (460, 320), 4, 1.9, index_mm=(8.0, 17.0)))[:shown]
    x1, y1, x2, y2 = corners[askew].box
    cx, cy = (x1 + x2) / 2 - 8, (y1 + y2) / 2 + 6
    corners[askew] = replace(corners[askew], box=(cx - 19, cy - 11.5, cx + 19, cy + 11.5))
    cards = pair_corners(corners)
    assert [c.card for c in cards] == ["7S"] and len(cards[0].corners) == shown


def test_a_four_index_cards_index_left_over_beside_the_box_framed_over_its_pip_is_that_card() -> None:
    """A Dondorf 7S showing its four indices (held-out spread 93 of seed 2002): a box framed over the
    big pip beside its top-left index (29 x 38 px, read 0.52) made the card's rectangle with its two
    right-hand indices, and the top-left index it touches was left, with the bottom-left one, as an
    edge pair of its own: two 7S where one lies."""
    read = [
        (1.0, (437, 251, 459, 287)),
        (1.0, (504, 373, 525, 411)),
        (1.0, (522, 264, 544, 302)),
        (0.99, (419, 360, 436, 395)),
        (0.52, (451, 255, 480, 293)),
    ]
    cards = pair_corners([Corner("7S", p, tuple(map(float, box))) for p, box in read])
    assert [(c.card, len(c.corners)) for c in cards] == [("7S", 5)]


@pytest.mark.parametrize("angle", [0, 30, 45, 90, 120, 180, -60])
def test_an_index_beside_the_box_that_stood_in_for_it_joins_its_card(angle: float) -> None:
    """The same at any angle (an 8D of held-out table 4 of seed 4242 too, its box over a pip read
    0.52 and the index itself 1.0); a copy's index lying against a card's index and read as surely
    is another card."""
    tl, br, tr, bl = four_index_corners("8D", (600, 400), angle, 2.0, confidence=(0.99, 0.98, 0.97, 0.96))
    t = math.radians(angle)
    # an index's width (8 mm at 2 px/mm) along the card's width, over the pip beside the index
    dx, dy = 16 * math.cos(t), -16 * math.sin(t)
    pip = Corner("8D", 0.52, (tl.box[0] + dx, tl.box[1] + dy, tl.box[2] + dx, tl.box[3] + dy))
    assert [c.card for c in pair_corners([tl, br, tr, bl, pip])] == ["8D"]
    copy = replace(pip, confidence=0.99)
    assert [c.card for c in pair_corners([tl, br, tr, bl, copy])] == ["8D", "8D"]


@pytest.mark.parametrize(("angle", "stretch"), [(0, 2.3), (0, 2.6), (180, 2.6), (-60, 2.3), (-60, 2.6)])
def test_four_indices_that_make_one_card_only_all_together_are_one_card(angle: float, stretch: float) -> None:
    """A four-index card whose bottom-left box is stretched over the pips towards its middle (an 8C of
    held-out table 14 of seed 9000, 25 x 32 px where its index is 25 x 14): no two of its groups make
    the card's rectangle (the askew box lies by the corner three others complete, on that rectangle's
    edge), but all four do, and they are one card."""
    tl, br, tr, bl = four_index_corners("8C", (700, 500), angle, 2.0, confidence=(1.0, 1.0, 1.0, 0.73))
    x1, y1, x2, y2 = bl.box
    h = y2 - y1
    askew = (x1, y1 - (stretch - 1) * h, x2, y2) if (y1 + y2) / 2 > 500 else (x1, y1, x2, y2 + (stretch - 1) * h)
    cards = pair_corners([tl, br, tr, replace(bl, box=askew)])
    assert [(c.card, len(c.corners)) for c in cards] == [("8C", 4)]


@pytest.mark.parametrize("angle", [0, 30, 72, 90, 135, 180, -60])
@pytest.mark.parametrize("where", [0.3, 0.5, 0.7])
def test_another_index_by_a_covered_corner_does_not_split_three_seen_indices(angle: float, where: float) -> None:
    """Three indices of a four-index card seen, the fourth covered by another card whose own index lies
    on the edge to that corner (a KS of held-out table 7 of seed 777): one card. An index lying between
    two seen indices is what tells a fan of copies from one card, so there it still counts."""
    tl, br, tr, bl = four_index_corners("KS", (700, 500), angle, 2.0)

    def index_between(p: Corner, q: Corner, share: float) -> Corner:
        (ax, ay), (bx, by) = (((c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2) for c in (p, q))
        x, y = ax + share * (bx - ax), ay + share * (by - ay)
        w, h = tr.box[2] - tr.box[0], tr.box[3] - tr.box[1]
        return replace(tr, card="5D", box=(x - w / 2, y - h / 2, x + w / 2, y + h / 2))

    cards = pair_corners([tl, br, bl, index_between(tr, br, where)])
    assert sorted((c.card, len(c.corners)) for c in cards) == [("5D", 1), ("KS", 3)]
    cards = pair_corners([tl, br, bl, index_between(tl, bl, where)])
    assert Counter(c.card for c in cards)["KS"] > 1


@pytest.mark.parametrize("angle", [0, 30, 90, 180, -60])
@pytest.mark.parametrize("out_by", [0.7, 0.9])
def test_a_neighbours_index_just_past_a_four_index_cards_edge_does_not_split_it(angle: float, out_by: float) -> None:
    """A four-index card in a meld showing all four indices, the next card's index lying just past its
    bottom edge (a 2H with a 9D's index 13 px out, held-out table 11 of seed 777): one card. Past the
    edge lies another card, not a copy fanned over this one."""
    tl, br, tr, bl = four_index_corners("2H", (700, 500), angle, 2.0)
    (ax, ay), (bx, by) = (((c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2) for c in (bl, br))
    mx, my = (ax + bx) / 2, (ay + by) / 2
    away = math.hypot(mx - 700, my - 500)
    w, h = tl.box[2] - tl.box[0], tl.box[3] - tl.box[1]
    out = out_by * 0.6 * max(w, h)  # a share of the reach along an edge within which an index counts
    x, y = mx + out * (mx - 700) / away, my + out * (my - 500) / away
    neighbour = replace(tl, card="9D", box=(x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    cards = pair_corners([tl, br, tr, bl, neighbour])
    assert sorted((c.card, len(c.corners)) for c in cards) == [("2H", 4), ("9D", 1)]


@pytest.mark.parametrize(
    "boxes",
    [
        # a 5D at 15 degrees, 1.7 px/mm, boxes a few pixels off (as a detector gives them)
        [(532, 440, 552, 468), (645, 530, 662, 557), (616, 417, 638, 447), (566, 551, 586, 582)],
        # at -105 degrees, 2.26 px/mm
        [(674, 455, 704, 476), (495, 526, 523, 548), (648, 566, 675, 587), (523, 414, 552, 435)],
    ],
)
def test_a_four_index_cards_edges_taken_for_two_diagonals_are_one_card(boxes: list[tuple[int, ...]]) -> None:
    """The matching takes the card's two long edges for the diagonals of two smaller cards (its real
    second diagonal fits no pair's shape). The four make the rectangle of one card's indices, its two
    pairs parallel: one card."""
    corners = [Corner("5D", p, tuple(map(float, b))) for b, p in zip(boxes, (0.9, 0.8, 0.7, 0.6))]
    cards = pair_corners(corners)
    assert len(cards) == 1 and set(cards[0].corners) == set(corners)


def test_three_corners_of_a_four_index_card_take_the_fourth() -> None:
    """A 5D on the pile of a held-out Dondorf table (seed 777, table 1; the detector's boxes): three of
    its indices were grouped first, the fourth, a little apart from where a perfect rectangle puts it,
    joins them rather than standing as a second 5D."""
    boxes = [(1134, 406, 1163, 421), (1139, 477, 1169, 491), (1045, 414, 1076, 441), (1050, 485, 1079, 498)]
    corners = [Corner("5D", p, tuple(map(float, b))) for b, p in zip(boxes, (0.95, 0.95, 0.95, 0.9))]
    cards = pair_corners(corners)
    assert len(cards) == 1 and set(cards[0].corners) == set(corners)


@pytest.mark.parametrize("lower_read_twice", [False, True])
def test_an_index_read_joker_diagonal_to_a_lone_face_shaped_like_it_is_that_card(lower_read_twice: bool) -> None:
    """A 4C thrown on the pile (petras film 2001 round 3, the detector's boxes): its upper index reads
    JK 0.84 (no other reading), its lower one 4C 0.63 (JK 0.31 next). The two boxes are alike and
    shaped like a face's index, not a joker's (tall and narrow, as the table's jokers show): one 4C.
    In the film's frames the lower index was also found, a little taller, as JK 0.57: that box is the
    4C's index read twice, not a joker's second index. The jokers stay jokers."""
    upper = Corner("JK", 0.84, (1110, 478, 1122, 502))
    lower = Corner("4C", 0.63, (1166, 566, 1178, 591), (("JK", 0.31), ("AC", 0.04)))
    twice = [Corner("JK", 0.57, (1170, 567, 1184, 600))] if lower_read_twice else []
    jokers = [Corner("JK", 0.99, (349, 774, 357, 807)), Corner("JK", 1.0, (352, 819, 361, 856))]
    cards = pair_corners([upper, lower, *twice, *jokers], (1920, 1080))
    four = [c for c in cards if c.card == "4C"]
    assert len(four) == 1 and set(four[0].corners) == {upper, lower}
    assert four[0].confidence == pytest.approx(0.63) and four[0].orientation is not None
    assert sorted(len(c.corners) for c in cards if c.card == "JK") == [1, 1]


def test_a_joker_fanned_over_a_face_keeps_its_word_beside_that_faces_index() -> None:
    """A hand spread holding two jokers (petras §02: two decks and four jokers), the detector's boxes on a
    rendered held-out spread: the second joker lies over an 8D, and its tall JOKER word covers half
    of the 8D's index box, centred below it. That is the joker's own index, not the 8D read twice:
    the hand holds both jokers and the 8D."""
    eight = Corner("8D", 0.98, (388, 253, 417, 288))
    word = Corner("JK", 0.88, (394, 264, 435, 317))
    first = Corner("JK", 0.84, (224, 259, 246, 320))
    five = Corner("5C", 0.92, (433, 271, 464, 307))
    cards = pair_corners([eight, word, first, five], (800, 600))
    assert sorted(c.card for c in cards) == ["5C", "8D", "JK", "JK"]


def test_a_copys_index_where_a_flat_cards_pair_would_have_an_edge_is_another_card() -> None:
    """Two meld rows overlapping at a seat (petras §03 melds; petras film 2001 round 2, the detector's
    boxes): a run's 10H lies flat with both indices showing, and the set's 10H above it shows one
    index. The three make a rectangle only with the 10H's diagonal as its edge, at an angle 37 degrees
    off the one that diagonal gives the card: two cards, not one four-index card."""
    run_bottom, run_top = Corner("10H", 1.0, (180, 319, 199, 334)), Corner("10H", 0.97, (255, 267, 276, 281))
    set_index = Corner("10H", 0.99, (208, 216, 227, 229))
    cards = pair_corners([run_bottom, run_top, set_index], (1920, 1080))
    assert sorted(len(c.corners) for c in cards) == [1, 2]
    flat = next(c for c in cards if len(c.corners) == 2)
    assert set(flat.corners) == {run_bottom, run_top} and flat.orientation is not None


@pytest.mark.parametrize("angle", [0, 25, 90, 180, -60])
def test_a_fan_of_four_index_cards_is_one_card_per_edge(angle: float) -> None:
    """A fan leaves each card's left edge showing: its top-left and bottom-left indices, one card; its
    top card shows all four, so the table shows a four-index deck. (At some angles an edge also fits a
    diagonal's geometry; which one it is taken for does not matter.)"""
    meld = ["7H", "7H", "7S", "8H", "7H"]
    t = math.radians(angle)
    top = (700 + 4 * math.cos(t) * 18 * 2.0, 500 - 4 * math.sin(t) * 18 * 2.0)
    _, br, tr, _ = four_index_corners(meld[-1], top, angle, 2.0)
    cards = pair_corners(fan_corners(meld, (700, 500), angle, step_mm=18, four_index=True) + [tr, br])
    assert Counter(c.card for c in cards) == Counter(meld)
    assert sorted(len(c.corners) for c in cards) == [2, 2, 2, 2, 4]


@pytest.mark.parametrize("angle", [0, 40, 60, 90, 135, 180, -60])
@pytest.mark.parametrize("cut_across", [True, False])
def test_a_fanned_four_index_cards_partly_covered_index_still_pairs_along_its_edge(
    angle: float, cut_across: bool
) -> None:
    """A fan of four-index cards where the next card covers a third of one card's bottom-left index
    (across it or along it): the box is cut short and misses the index's shape, yet the card's edge is
    one card (held-out Dondorf spreads: a JC's bottom-left index 12 x 33 px beside its 19 x 31 top one,
    spread 47 of seed 2002; a JS's 14 x 37 beside 23 x 41, spread 1 of seed 4243)."""
    meld = ["7H", "7S", "8H", "9C", "7H"]
    fan = fan_corners(meld, (700, 500), angle, step_mm=18, four_index=True)
    i = [k for k, c in enumerate(fan) if c.card == "8H"][1]  # its bottom-left index
    x1, y1, x2, y2 = fan[i].box
    fan[i] = replace(
        fan[i], box=(x1, y1, x1 + 0.7 * (x2 - x1), y2) if cut_across else (x1, y1, x2, y1 + 0.7 * (y2 - y1))
    )
    cards = pair_corners(fan)
    assert Counter(c.card for c in cards) == Counter(meld)


def test_a_misread_join_along_an_edge_needs_both_boxes_shaped_as_the_index() -> None:
    """Two lone corners of different faces joined along a four-index card's edge by one's next
    reading have the boxes alone to go on: the smaller one must fit the index's shape too (a held-out
    Dondorf spread, seed 778 spread 89: a fanned 3H read 3H 0.86, 5H 0.14, joined to a 5H's top index
    222 px away as one 5H, and the hand lost a 3H)."""
    three = Corner("3H", 0.86, (235.0, 281.0, 257.0, 316.0), (("5H", 0.136),))
    five = Corner("5H", 1.0, (457.0, 282.0, 487.0, 317.0))
    cards = pair_corners([three, five], four_index=True)
    assert sorted(c.card for c in cards) == ["3H", "5H"]


def test_only_a_cut_short_index_may_miss_its_shape_along_an_edge() -> None:
    """The looser shape is for the smaller box of the two, cut short by a card over it: two whole
    boxes both so slender are no edge of one card."""
    top, bottom = Corner("JC", 0.98, (340.0, 255.0, 359.0, 286.0)), Corner("JC", 0.66, (324.0, 355.0, 336.0, 388.0))
    assert fit_side(top, bottom) is not None
    slender_top = Corner("JC", 0.98, (343.5, 254.0, 355.5, 287.0))  # bottom's size, where top lies
    assert fit_side(slender_top, bottom) is None


@pytest.mark.parametrize("step_mm", [14, 20, 24])
@pytest.mark.parametrize("angle", [0, 45, 90, 180])
def test_duplicates_two_apart_in_a_fan_stay_two(step_mm: float, angle: float) -> None:
    """7H 7S 7H: the two 7H indices may lie a card's width apart, like one card's top two indices,
    but the 7S index between them shows they are two cards."""
    cards = pair_corners(fan_corners(["7H", "7S", "7H"], (600, 500), angle, step_mm=step_mm))
    assert Counter(c.card for c in cards) == Counter({"7H": 2, "7S": 1})


@pytest.mark.parametrize("angle", [0, 30, 90, 150, -45])
def test_copies_across_a_fan_are_not_one_cards_diagonal(angle: float) -> None:
    """Two QD in one fanned hand may sit where one card's two corners would; the indices of the cards
    fanned between them show they are two cards. One card lying over a card's middle does not."""
    tl, br = card_corners("QD", (600, 500), angle, 2.0)
    (ax, ay), (bx, by) = (((b.box[0] + b.box[2]) / 2, (b.box[1] + b.box[3]) / 2) for b in (tl, br))
    w, h = tl.box[2] - tl.box[0], tl.box[3] - tl.box[1]

    def index_at(card: str, t: float) -> Corner:
        x, y = ax + t * (bx - ax), ay + t * (by - ay)
        return Corner(card, 0.9, (x - w / 2, y - h / 2, x + w / 2, y + h / 2))

    fanned = [index_at("5D", 0.35), index_at("3C", 0.6)]
    cards = pair_corners([tl, br, *fanned])
    assert Counter(c.card for c in cards) == Counter({"QD": 2, "5D": 1, "3C": 1})
    assert all(c.orientation is None for c in cards if c.card == "QD")
    one_on_top = pair_corners([tl, br, index_at("5D", 0.5)])
    assert Counter(c.card for c in one_on_top) == Counter({"QD": 1, "5D": 1})


@pytest.mark.parametrize("angle", [0.0, 15.0, 90.0, 180.0, 250.0])
@pytest.mark.parametrize("step_mm", [16.0, 19.0, 22.0])
def test_jokers_in_two_meld_rows_are_two_cards(angle: float, step_mm: float) -> None:
    """A joker opening one fanned meld row and a joker in the row below can sit where one joker's two
    corners would; the other cards' indices on that face show they are two cards (a run's joker was
    lost this way in a refereed film)."""
    ppm, pitch = 1.2, 35 * 1.2
    t = math.radians(angle)
    upper = (600.0, 500.0)
    lower = (
        upper[0] + math.sin(t) * pitch + 2 * math.cos(t) * step_mm * ppm,
        upper[1] + math.cos(t) * pitch - 2 * math.sin(t) * step_mm * ppm,
    )
    corners = fan_corners(["JK", "9S", "10S", "JS"], upper, angle, step_mm, ppm) + fan_corners(
        ["4H", "JK", "7H", "8H"], lower, angle, step_mm, ppm
    )
    assert Counter(c.card for c in pair_corners(corners))["JK"] == 2


@pytest.mark.parametrize("angle", [0.0, 15.0, 30.0, 90.0, 180.0, 250.0])
@pytest.mark.parametrize("step_mm", [16.0, 19.0, 22.0])
@pytest.mark.parametrize("pitch_mm", [33.0, 40.0])
def test_copies_in_two_overlapping_runs_stay_apart(angle: float, step_mm: float, pitch_mm: float) -> None:
    """Runs 8C-QC and 9C-QC fanned in two rows, one below the other: each copy's index lies one row
    down and one step along from the other's, as a four-index card's edge would (petras §03 allows
    both runs in one contract). The step to the next card runs slanted to that line, so they are two."""
    ppm = 1.2
    t = math.radians(angle)
    upper = (600.0, 500.0)
    lower = (upper[0] + math.sin(t) * pitch_mm * ppm, upper[1] + math.cos(t) * pitch_mm * ppm)
    corners = fan_corners(["8C", "9C", "10C", "JC", "QC"], upper, angle, step_mm, ppm) + fan_corners(
        ["9C", "10C", "JC", "QC"], lower, angle, step_mm, ppm
    )
    cards = pair_corners(corners)
    assert Counter(c.card for c in cards) == Counter({"8C": 1, "9C": 2, "10C": 2, "JC": 2, "QC": 2})


@pytest.mark.parametrize("angle", [0.0, 90.0, 180.0])
def test_edges_fitting_the_tables_scale_pair_without_a_card_showing_four(angle: float) -> None:
    """A four-index fan whose top card shows only its two diagonal indices: that card gives the
    table's scale, at which the other cards' edges fit, so they pair. Two overlapping meld runs whose
    last card shows both corners: their copies lie far closer than an edge at that scale."""
    meld = ["7H", "7S", "8H", "9C"]
    t = math.radians(angle)
    fan = fan_corners(meld, (700, 500), angle, step_mm=18, four_index=True)
    top = (700 + 3 * math.cos(t) * 36, 500 - 3 * math.sin(t) * 36)
    _, br, _, bl = four_index_corners(meld[-1], top, angle, 2.0)
    fan = [c for c in fan if c.box != bl.box] + [br]
    assert sorted(len(c.corners) for c in pair_corners(fan)) == [2] * len(meld)
    ppm = 1.2
    upper, lower = (600.0, 500.0), (600.0 + math.sin(t) * 40 * ppm, 500.0 + math.cos(t) * 40 * ppm)
    runs = fan_corners(["8C", "9C", "10C", "JC", "QC"], upper, angle, 19, ppm)
    runs += fan_corners(["9C", "10C", "JC", "QC"], lower, angle, 19, ppm)
    last = (lower[0] + 3 * math.cos(t) * 19 * ppm, lower[1] - 3 * math.sin(t) * 19 * ppm)
    runs.append(card_corners("QC", last, angle, ppm)[1])
    assert Counter(c.card for c in pair_corners(runs)) == Counter({"8C": 1, "9C": 2, "10C": 2, "JC": 2, "QC": 2})


@pytest.mark.parametrize("angle", [0.0, 20.0, 90.0, 180.0, -60.0])
def test_a_fan_of_four_index_cards_shows_its_deck_by_its_edges(angle: float) -> None:
    """A hand fanned from a four-index deck whose top card shows no more than its edge either (the
    held-out Dondorf spreads): no card gives three indices or the table's scale, but the cards' edges
    run parallel, of one length, side by side, so each is one card."""
    meld = ["7H", "7S", "8H", "9C", "7H"]
    fan = fan_corners(meld, (700, 500), angle, step_mm=18, four_index=True)
    cards = pair_corners(fan)
    assert Counter(c.card for c in cards) == Counter(meld)
    assert [len(c.corners) for c in cards] == [2] * len(meld)


def test_the_deck_kind_may_be_given() -> None:
    """A deck known to print four indices pairs its cards' edges with no card showing all four; one
    known to print two never does."""
    meld = ["7H", "7S", "8H", "9C"]
    fan = fan_corners(meld, (700, 500), 0.0, step_mm=18, four_index=True)
    assert [len(c.corners) for c in pair_corners(fan, four_index=True)] == [2] * len(meld)
    assert len(pair_corners(fan, four_index=False)) == 2 * len(meld)


def test_jokers_in_two_meld_rows_of_a_film_are_two_cards() -> None:
    """The boxes of that film: meld rows JK 9S 10S JS and 4H 5H JK 7H, 23 px apart along a row."""
    boxes = {
        "JK": [(324, 812, 332, 844), (379, 853, 388, 886)],
        "9S": [(348, 810, 359, 828)],
        "10S": [(371, 810, 385, 829)],
        "JS": [(390, 810, 401, 830)],
        "4H": [(333, 853, 343, 870)],
        "5H": [(356, 851, 366, 868)],
        "7H": [(401, 852, 412, 871)],
    }
    corners = [Corner(card, 0.99, box) for card, bs in boxes.items() for box in bs]
    assert Counter(c.card for c in pair_corners(corners)) == Counter({k: len(v) for k, v in boxes.items()})


@pytest.mark.parametrize("angle", [0.0, 40.0, 135.0])
def test_a_cards_misread_second_index_is_joined_by_its_next_reading(angle: float) -> None:
    """A flat JS whose bottom index reads JC 0.51 (next reading JS 0.49) is one JS, not a JS and a JC;
    with JS under JOIN_MIN among its next readings, the JC stays a card of its own."""
    tl, br = card_corners("JS", (600, 500), angle, 2.0)
    misread = Corner("JC", 0.51, br.box, (("JS", 0.49),))
    cards = pair_corners([tl, misread])
    assert [(c.card, len(c.corners)) for c in cards] == [("JS", 2)]
    unlikely = Corner("JC", 0.9, br.box, (("JS", JOIN_MIN / 2),))
    assert Counter(c.card for c in pair_corners([tl, unlikely])) == Counter({"JS": 1, "JC": 1})


@pytest.mark.parametrize("angle", [0.0, 20.0, 180.0])
def test_a_nine_whose_other_index_reads_six_is_one_card(angle: float) -> None:
    """A 9H whose upper index reads 6H 0.61 (9H not among its next readings) and whose lower one reads
    9H 0.999 is one 9H: a 6 upside down is a 9. Two other faces stay two cards."""
    tl, br = card_corners("9H", (600, 500), angle, 2.0)
    six = replace(tl, card="6H", confidence=0.61, alternatives=(("KH", 0.24),))
    cards = pair_corners([six, replace(br, confidence=0.999)])
    assert [(c.card, len(c.corners)) for c in cards] == [("9H", 2)]
    other = pair_corners([replace(tl, card="6S", confidence=0.61), replace(br, confidence=0.999)])
    assert Counter(c.card for c in other) == Counter({"9H": 1, "6S": 1})


def test_a_six_and_a_nine_closer_than_a_cards_diagonal_at_the_tables_scale_stay_two() -> None:
    """Petras film 1002, round 6 (Cy's melds, seen from across the table): a run's 6C showing one index
    lies below and beside the 9C of the set in the row above, 0.6 of a card's diagonal apart, where
    the boxes' size alone lets a 6 and a 9 of one suit pass for one card (a 6 upside down is a 9): the
    run lost its 6C. The table's cards seen by their diagonals (the laid-off 9S, the pile's 3S) give
    its scale, and the two stay two; a 9 whose other index reads 6 at that scale is one card."""
    seen = [  # the frame's every corner (the pile's 3S, 3S and JC far off), as the recogniser read them
        ("9S", 1.0, (1412.2, 129.3, 1423.3, 148.4)),
        ("9S", 1.0, (1470.6, 212.2, 1481.1, 230.5)),
        ("6C", 0.999, (1537.1, 254.2, 1547.0, 272.3)),
        ("9C", 1.0, (1493.1, 211.3, 1504.2, 230.3)),
        ("9C", 1.0, (1516.6, 212.5, 1528.0, 231.5)),
        ("9D", 1.0, (1538.9, 212.5, 1550.0, 231.5)),
        ("9H", 1.0, (1564.8, 213.4, 1575.5, 231.4)),
        ("9S", 0.998, (1586.2, 213.6, 1596.9, 234.1)),
        ("JK", 0.941, (1585.5, 235.4, 1594.6, 270.1)),
        ("7C", 1.0, (1515.6, 253.1, 1525.0, 272.3)),
        ("5C", 1.0, (1560.0, 253.7, 1570.1, 271.3)),
        ("JK", 0.999, (1533.7, 281.9, 1541.7, 311.4)),
        ("5S", 1.0, (1505.5, 292.8, 1515.6, 311.4)),
        ("2S", 0.999, (1578.3, 293.6, 1588.5, 311.8)),
        ("3S", 1.0, (1553.4, 294.2, 1562.7, 312.3)),
        ("3S", 0.949, (1124.1, 485.2, 1135.9, 505.9)),
        ("3S", 0.997, (1171.5, 572.9, 1185.6, 595.7)),
        ("JC", 0.99, (1112.1, 500.3, 1124.7, 521.2)),
    ]
    corners = [Corner(card, p, box) for card, p, box in seen]
    cards = Counter(c.card for c in pair_corners(corners, (1920, 1080)))
    assert cards["6C"] == 1 and cards["9C"] == 2
    # a 9H whose upper index reads 6H: one card where two cards elsewhere give the table's scale as its
    # own, two where they give one 1.5 times larger
    tl, br = card_corners("9H", (600, 500), 20.0, 2.0)
    pair = [replace(tl, card="6H", confidence=0.61, alternatives=()), replace(br, confidence=0.999)]
    for px_per_mm, nines in ((2.0, 1), (3.0, 2)):
        table = [*card_corners("KD", (200, 250), 0.0, px_per_mm), *card_corners("4S", (1100, 250), 90.0, px_per_mm)]
        got = Counter(c.card for c in pair_corners(pair + table))
        assert got["9H"] + got["6H"] == nines and got["KD"] == got["4S"] == 1


@pytest.mark.parametrize(
    ("hand_box", "nines"),
    [((257.6, 761.7, 275.7, 772.4), 2), ((257.6, 766.7, 268.5, 776.7), 1), ((257.6, 766.7, 270.5, 776.7), 1)],
)
def test_an_index_turned_a_quarter_beside_one_of_its_name_is_no_covered_index_along_an_edge(
    hand_box: tuple[float, float, float, float], nines: int
) -> None:
    """Petras film 1002, round 7 (round end): Bob's spread hand, seen from his side, shows its 9H's index
    turned a quarter (18 x 10 px) 64 px from the upright 9H of Ann's meld beside it (11 x 18). A QD
    seen by its diagonal gives the table's scale, at which that is an edge of a four-index card, and
    the wide box passed for the upright index cut short: the two were one card, and Bob's hand showed
    15 of its 16 cards. A covered index is cut short across or along it, not longer the other way: the
    two stay two. A box as wide as the upright one, or a little wider, cut short in height, still
    pairs with it along that edge."""
    seen = [  # the frame's corners that decide it, as the recogniser read them
        ("QD", 1.0, (214.3, 600.7, 234.3, 611.8)),
        ("QD", 1.0, (134.1, 657.7, 155.2, 670.2)),
        ("9H", 1.0, hand_box),
        ("9H", 1.0, (322.5, 766.7, 333.4, 785.0)),
    ]
    cards = Counter(c.card for c in pair_corners([Corner(card, p, box) for card, p, box in seen], (1920, 1080)))
    assert cards["9H"] == nines and cards["QD"] == 1


@pytest.mark.parametrize("angle", [0.0, 30.0, 180.0])
def test_a_four_index_cards_misread_edge_index_is_joined_by_its_next_reading(angle: float) -> None:
    """A fan of a four-index deck (held-out Dondorf theme, spread 14 of `mayi-table evaluate`): a 2H
    whose upside-down bottom-left index reads 2C 0.53 (next reading 2H 0.18) is one 2H, as a misread
    diagonal is; with 2H under JOIN_MIN among its next readings the 2C stays a card."""
    meld = ["5H", "2S", "2H", "6S", "AS"]
    t = math.radians(angle)
    top = (700 + 4 * math.cos(t) * 18 * 2.0, 500 - 4 * math.sin(t) * 18 * 2.0)
    _, br, tr, _ = four_index_corners(meld[-1], top, angle, 2.0)
    fan = fan_corners(meld, (700, 500), angle, step_mm=18, four_index=True) + [tr, br]
    bottom_left_of_2h = fan[5]
    assert bottom_left_of_2h.card == "2H"
    misread = replace(bottom_left_of_2h, card="2C", confidence=0.53, alternatives=(("2H", 0.18), ("10H", 0.09)))
    cards = pair_corners([misread if c is bottom_left_of_2h else c for c in fan])
    assert Counter(c.card for c in cards) == Counter(meld)
    unlikely = replace(misread, alternatives=(("2H", JOIN_MIN / 2),))
    cards = pair_corners([unlikely if c is bottom_left_of_2h else c for c in fan])
    assert Counter(c.card for c in cards) == Counter(meld) + Counter({"2C": 1})


def test_a_lone_index_away_from_a_cards_corners_is_not_absorbed() -> None:
    """A copy's index lying on the middle of a found card is another card, not that card's index."""
    tl, br = card_corners("9C", (500, 500), 0, 2.0)
    other = card_corners("9C", (500, 500 + 20 * 2.0), 0, 2.0)[0]
    cards = pair_corners([tl, br, other])
    assert Counter(len(c.corners) for c in cards) == Counter({2: 1, 1: 1})


@pytest.mark.parametrize("angle", [0, 35, 90, 160, 250])
def test_a_court_cards_picture_is_not_a_second_copy(angle: float) -> None:
    """petras §02 (two or three decks): a big "Q" and heart in the middle of a QH seen whole is its picture."""
    tl, br = card_corners("QH", (500, 500), angle, 2.0)
    picture = Corner("QH", 0.95, (490.0, 480.0, 510.0, 520.0))
    cards = pair_corners([tl, br, picture])
    assert [(c.card, len(c.corners)) for c in cards] == [("QH", 2)]
    # another face lying on its middle is another card
    other = pair_corners([tl, br, Corner("5D", 0.95, picture.box)])
    assert Counter(c.card for c in other) == Counter({"QH": 1, "5D": 1})


@pytest.mark.parametrize("angle", [0.0, 60.0, 180.0])
def test_a_court_cards_picture_marks_do_not_crowd_its_face(angle: float) -> None:
    """A KS on the pile whose picture shows two marks (its big K read KS, its spade read KC with next
    reading KS) is one card: marks of its own face are no other cards lying on it."""
    tl, br = card_corners("KS", (500, 500), angle, 2.0)
    marks = [
        Corner("KS", 0.9, (490.0, 470.0, 510.0, 500.0)),
        Corner("KC", 0.6, (490.0, 505.0, 510.0, 530.0), (("KS", 0.3),)),
    ]
    kings = [c for c in pair_corners([tl, br, *marks]) if c.card == "KS"]
    assert [len(c.corners) for c in kings] == [2]


def test_copies_of_a_face_on_a_pairs_face_crowd_it() -> None:
    """A run 5S JK 7S (its 5S next read 5C) above a group 5D 5C 5C: the 5S and the far 5C sit where
    one card's two indices would, but the run's JK and 7S and the group's other 5C lie on that face,
    the 5C away from its middle (a copy, not its picture): the 5S stays a card (a film read the run as
    opening with 5C)."""
    corners = [
        Corner("5S", 0.94, (324.0, 770.0, 335.0, 788.0), (("5C", 0.15),)),
        Corner("JK", 1.0, (346.0, 768.0, 354.0, 800.0)),
        Corner("7S", 1.0, (370.0, 770.0, 380.0, 788.0)),
        Corner("5D", 1.0, (327.0, 810.0, 337.0, 828.0)),
        Corner("5C", 1.0, (351.0, 812.0, 361.0, 829.0)),
        Corner("5C", 1.0, (371.0, 812.0, 382.0, 830.0)),
    ]
    assert Counter(c.card for c in pair_corners(corners)) == Counter({"5S": 1, "JK": 1, "7S": 1, "5D": 1, "5C": 2})


def test_of_two_overlapping_copies_the_index_on_the_others_face_pairs_with_its_own_card() -> None:
    """A QH thrown on a QH over a QD (petras film 2001 round 5): the new QH's top index, its bottom
    index (next read QD 0.11), the lower QH's bottom index beside it and the QD's top index. Paired
    with the lower QH's bottom index, the new QH's top index makes a card whose face holds the new
    QH's bottom index, where a card on it would hide that top index: the QH on top is its own two
    indices, and the QD stays one corner."""
    corners = [
        Corner("QH", 0.98, (1121.0, 488.0, 1133.0, 511.0)),
        Corner("QH", 1.0, (1183.0, 560.0, 1196.0, 582.0)),
        Corner("QD", 0.99, (1106.0, 486.0, 1120.0, 508.0)),
        Corner("QH", 0.89, (1166.0, 568.0, 1180.0, 592.0), (("QD", 0.107),)),
    ]
    cards = pair_corners(corners, (1920, 1080))
    assert Counter(c.card for c in cards) == Counter({"QH": 2, "QD": 1})
    top = next(c for c in cards if len(c.corners) == 2)
    assert top.card == "QH" and {k.box for k in top.corners} == {corners[0].box, corners[3].box}


def test_top_indices_of_two_meld_rows_a_short_edge_apart_on_a_slant_are_no_cards_edge() -> None:
    """Ann's runs 4S-10S above 6S JK 8S 9S 10S, the upper one shifted by a JK laid below it (classic
    film 2000 round 3): the lower row's 6S index and the upper row's lie a short edge apart (at the
    table's scale from its cards' diagonals) on a 34 degree slant, and both upright. A four-index
    card's edge turned so would show its indices turned with it; these are two cards."""
    lower = Corner("6S", 1.0, (332.1, 808.6, 342.6, 824.7))
    upper = Corner("6S", 1.0, (392.4, 767.3, 402.9, 784.3))
    assert fit_side(lower, upper, [lower, upper], scale=1.238) is None


def test_a_jokers_word_found_as_two_overlapping_boxes_is_one_index() -> None:
    """The detector may find a joker's long JOKER word as its upper and its lower part, two boxes
    sharing half their area: one joker (a film read the run 8D JK 10D JD as holding two)."""
    halves = [Corner("JK", 0.997, (1564.0, 240.0, 1570.0, 264.0)), Corner("JK", 0.999, (1565.0, 248.0, 1572.0, 271.0))]
    assert len(pair_corners(halves)) == 1
    # two jokers side by side in a fan overlap far less
    fanned = [Corner("JK", 0.99, (1564.0, 240.0, 1570.0, 271.0)), Corner("JK", 0.99, (1586.0, 240.0, 1592.0, 271.0))]
    assert len(pair_corners(fanned)) == 2


def test_an_index_square_to_the_frame_boxed_twice_a_little_apart_is_one_index() -> None:
    """A 9H's index lying square to the frame, boxed twice 10 px apart across its short side (26 x 13 px
    each, sharing a fifth of their area; held-out table 7 of seed 777): one index. Two copies' indices
    never overlap so. Two jokers' words do, one partly covered beside the other (held-out table 1 of
    seed 4242: sharing a third), and stay two."""
    twice = [Corner("9H", 1.0, (294.0, 304.0, 320.0, 317.0)), Corner("9H", 0.91, (294.0, 314.0, 319.0, 326.0))]
    assert [(c.card, len(c.corners)) for c in pair_corners(twice)] == [("9H", 1)]
    # the same boxes apart: two copies
    apart = [twice[0], replace(twice[1], box=(294.0, 320.0, 319.0, 332.0))]
    assert len(pair_corners(apart)) == 2
    jokers = [Corner("JK", 1.0, (946.0, 220.0, 954.0, 240.0)), Corner("JK", 0.89, (937.0, 195.0, 950.0, 235.0))]
    assert len(pair_corners(jokers)) == 2


@pytest.mark.parametrize("angle", [0, 45, 90, 180])
def test_one_index_found_twice_is_one_index(angle: float) -> None:
    """petras §02 (two or three decks): a second, smaller box of the same face lying on a card's
    index (the rank alone, beside the whole index) is that index again, not a second copy."""
    tl, br = card_corners("JS", (500, 500), angle, 2.0)
    x1, y1, x2, y2 = br.box
    w, h = x2 - x1, y2 - y1
    rank_alone = Corner("JS", 0.8, (x1 - 0.2 * w, y1 + 0.1 * h, x2 - 0.4 * w, y2 - 0.1 * h))
    cards = pair_corners([tl, br, rank_alone])
    assert [(c.card, len(c.corners)) for c in cards] == [("JS", 2)]
    # as a lone index too, and another face there stays another card
    assert [c.card for c in pair_corners([br, rank_alone])] == ["JS"]
    assert sorted(c.card for c in pair_corners([br, Corner("5D", 0.8, rank_alone.box)])) == ["5D", "JS"]


def test_corners_too_far_or_too_close_are_not_paired() -> None:
    tl, br = card_corners("4S", (500, 500), 0, 2.0)
    dx = (br.box[0] - tl.box[0]) * (DISTANCE_TOLERANCE + 0.3)
    far = Corner("4S", 0.9, (tl.box[0] + dx, tl.box[1] + dx * 1.3, tl.box[2] + dx, tl.box[3] + dx * 1.3))
    assert fit_pair(tl, far) is None
    near = Corner("4S", 0.9, (tl.box[0] + 8, tl.box[1] + 10, tl.box[2] + 8, tl.box[3] + 10))
    assert fit_pair(tl, near) is None
    assert len(pair_corners([tl, far])) == 2


def test_different_faces_and_different_sizes_never_pair() -> None:
    tl, br = card_corners("4S", (500, 500), 0, 2.0)
    assert fit_pair(tl, Corner("4H", br.confidence, br.box)) is None
    x1, y1, x2, y2 = br.box
    big = Corner("4S", 0.9, (x1 - 10, y1 - 10, x2 + 10, y2 + 10))
    assert fit_pair(tl, big) is None


def test_a_sideways_neighbour_is_not_a_partner() -> None:
    """Two upright 5D seen only by their top-left indices, a card's width apart, are two cards."""
    a = card_corners("5D", (400, 400), 0, 2.0)[0]
    b = card_corners("5D", (400 + 66 * 2.0, 400), 0, 2.0)[0]
    assert fit_pair(a, b) is None


def test_result_is_independent_of_input_order() -> None:
    rng = random.Random(7)
    corners: list[Corner] = []
    for i in range(6):
        # flat cards far enough apart that no index lies on another card (which would cover it)
        corners.extend(card_corners("7H", (300 + 200 * i, 300 + 40 * (i % 2)), rng.uniform(-180, 180), 2.0))
    corners.extend(fan_corners(["7H", "7H", "7H"], (200, 800), 5, 16))
    first = pair_corners(corners)
    for _ in range(5):
        rng.shuffle(corners)
        assert pair_corners(corners) == first
    assert len(first) == 9
    assert sum(1 for c in first if len(c.corners) == 2) == 6


def test_many_corners_of_one_face_fall_back_to_greedy_matching() -> None:
    corners: list[Corner] = []
    for i in range(10):  # 20 corners of one face: past the exact matching's limit
        corners.extend(card_corners("2H", (200 + 200 * (i % 5), 200 + 300 * (i // 5)), 0, 2.0))
    cards = pair_corners(corners)
    assert len(cards) == 10 and all(len(c.corners) == 2 for c in cards)


def test_boxes_are_clipped_to_the_image_and_cards_sorted() -> None:
    tl, br = card_corners("AS", (40, 40), 30, 2.0)
    single = Corner("3C", 0.5, (150.0, 10.0, 170.0, 40.0))
    cards = pair_corners([single, tl, br], image_size=(160, 120))
    for c in cards:
        assert 0 <= c.box[0] <= c.box[2] <= 160 and 0 <= c.box[1] <= c.box[3] <= 120
    assert [c.box[1] for c in cards] == sorted(c.box[1] for c in cards)


def test_physical_card_fields() -> None:
    cards = pair_corners([Corner("JK", 0.42, (1.0, 2.0, 11.0, 32.0))])
    assert cards == [PhysicalCard("JK", 0.42, (1.0, 2.0, 11.0, 32.0), (Corner("JK", 0.42, (1.0, 2.0, 11.0, 32.0)),))]


def test_nominal_geometry_is_a_standard_card() -> None:
    assert 75 < NATURAL_INDEX.pair_distance_mm < 90
    assert 45 < NATURAL_INDEX.pair_angle_deg < 60


def _stacked(mark: Corner, away_from: Corner, share: float) -> Corner:
    """`mark`'s box grown past its far end by `share` of its long side: the index of a card beneath
    peeking out right beyond it, framed with it as one box."""
    x1, y1, x2, y2 = mark.box
    b = away_from.box
    mx, my, ax, ay = (x1 + x2) / 2, (y1 + y2) / 2, (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    if y2 - y1 >= x2 - x1:
        grow = share * (y2 - y1)
        y1, y2 = (y1 - grow, y2) if my < ay else (y1, y2 + grow)
    else:
        grow = share * (x2 - x1)
        x1, x2 = (x1 - grow, x2) if mx < ax else (x1, x2 + grow)
    return Corner("JK", 0.76, (x1, y1, x2, y2), (("2S", 0.1), ("2C", 0.04)))


def test_a_pile_tops_index_boxed_with_the_one_peeking_past_it_is_that_card() -> None:
    """petras film 1002 round 3 (the detector's boxes): Ann's KS thrown on a 2C, the 2C's index peeking
    out right above the KS's top one; the two framed as one box 13 x 37 px read JK 0.76, the KS's
    bottom index KS 0.56, so the referee took the throw for a joker. One KS, its two indices. (The box
    too long for the card's other index would pair with neither: see `_split_stacked_marks`.)"""
    stacked = Corner("JK", 0.76, (1109, 479, 1122, 516), (("2S", 0.1), ("2C", 0.04)))
    bottom = Corner("KS", 0.56, (1180, 568, 1197, 591))
    cards = pair_corners([stacked, bottom], (1920, 1080))
    assert [(c.card, len(c.corners)) for c in cards] == [("KS", 2)]
    # the card's top index is the box's stretch next to its face, not the index peeking past its edge
    assert _contains(stacked.box, cards[0].corners[0].box) and cards[0].corners[0].box[1] > stacked.box[1]
    assert _contains(cards[0].box, cards[0].corners[0].box) and _contains(cards[0].box, bottom.box)
    # the same round: an AC on a 4C, the two top indices boxed 15 x 31 px and read AC 0.54 (4C next),
    # its bottom index boxed 12 x 18: the AC counted twice, the referee took the second for Bob's throw
    stacked = Corner("AC", 0.54, (1118.3, 487.3, 1133.3, 517.9), (("4C", 0.23), ("KC", 0.07)))
    bottom = Corner("AC", 1.0, (1172.7, 584.0, 1184.4, 602.3))
    below = Corner("5D", 0.99, (1190.5, 560.5, 1200.5, 579.0))
    cards = pair_corners([stacked, bottom, below], (1920, 1080))
    assert sorted((c.card, len(c.corners)) for c in cards) == [("5D", 1), ("AC", 2)]
    # the same pile top at other angles, the peeking index as tall as half to all of the top card's,
    # the long box read JK or the top card's face
    for angle in (0, 8, -8, 90, 175):
        for share in (0.5, 0.9):
            for reading in ("JK", "KS"):
                top, low = card_corners("KS", (600, 400), angle, confidence=(0.9, 0.56))
                mark = replace(_stacked(top, low, share), card=reading)
                cards = pair_corners([mark, low], (1200, 800))
                assert [(c.card, len(c.corners)) for c in cards] == [("KS", 2)], (angle, share, reading)


def test_a_sure_joker_or_one_lying_apart_beside_a_faces_index_stays_a_joker() -> None:
    """A box read JK surely is a joker's word, whatever face's index lies where its card's other index
    would; one read unsurely stays a joker where its end does not pair with the face's index: real
    jokers beside lone indices (petras film 1002, the detector's boxes). Nor is a box that is no row
    of marks along the index's long side that index's card."""
    top, low = card_corners("KS", (600, 400), 0, confidence=(0.9, 0.56))
    sure = replace(_stacked(top, low, 0.9), confidence=0.95)
    assert sorted(c.card for c in pair_corners([sure, low], (1200, 800))) == ["JK", "KS"]
    for joker, face in (
        (Corner("JK", 0.7, (1551, 279, 1560, 310)), Corner("4C", 1.0, (1505, 251, 1515, 269))),
        (Corner("JK", 0.7, (344, 769, 354, 801)), Corner("AH", 1.0, (256, 809, 274, 821))),
    ):
        assert sorted(c.card for c in pair_corners([joker, face], (1920, 1080))) == sorted(["JK", face.card])
    # held-out spread 45 of seed 4243 (kde-tigullio-international): a fanned 10D's index read QH 0.64
    # in a box 34 x 31 px, lying where the QH's other index would: a box wider than tall beside a tall
    # index is no row of two marks along it, so two cards
    misread = Corner("QH", 0.64, (456.3, 235.8, 490.6, 267.2), (("6H", 0.18), ("10H", 0.05)))
    queen = Corner("QH", 0.89, (546.5, 346.9, 558.0, 375.7), (("6H", 0.1),))
    assert [c.card for c in pair_corners([misread, queen], (800, 600))] == ["QH", "QH"]
