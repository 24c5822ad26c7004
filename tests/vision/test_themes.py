"""Debian card themes as designs: the corner-index search (always, on a drawn face) and, where the themes
are installed, their faces and quads."""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass

import cv2
import numpy as np
import pytest

from mayi_table.vision.render.faces import FACE_H, FACE_W, PROCEDURAL, Design, Face, _quad, render_back, render_face
from mayi_table.vision.render.scene import Placed, draw_scene
from mayi_table.vision.render.themes import (
    IndexNotFound,
    _court_indices,
    find_theme_files,
    load_themes,
    locate_indices,
)


def _synthetic_face(
    art_touching: bool = False, four_index: bool = False
) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A white card with a "10" over a suit blob in the top-left, the same turned 180° bottom-right
    (and, on a four-index face, upright top-right and turned bottom-left), a thin court frame and
    centre art; returns the face and the true ink box of the top-left index."""
    face = np.zeros((FACE_H, FACE_W, 4), np.uint8)
    cv2.rectangle(face, (0, 0), (FACE_W - 1, FACE_H - 1), (255, 255, 255, 255), -1)
    cv2.rectangle(face, (0, 0), (FACE_W - 1, FACE_H - 1), (60, 60, 60, 255), 1)  # the card's outline stroke
    index = np.zeros_like(face)
    ink = (20, 20, 200, 255)
    cv2.rectangle(index, (12, 14), (15, 44), ink, -1)  # "1"
    cv2.ellipse(index, (26, 29), (7, 15), 0, 0, 360, ink, 3)  # "0", 4 px right of the "1"
    cv2.circle(index, (21, 62), 9, ink, -1)  # the suit, under the rank
    layers = [index, index[::-1, ::-1]]
    if four_index:
        # the same index upright at the top right, and turned at the bottom left
        top_right = np.roll(index, FACE_W - 12 - 36, axis=1)
        layers += [top_right, top_right[::-1, ::-1]]
    for layer in layers:
        drawn = layer[..., 3] > 0
        face[drawn] = layer[drawn]
    cv2.rectangle(face, (60, 50), (FACE_W - 61, FACE_H - 51), (0, 0, 0, 255), 1)  # the court frame
    cv2.circle(face, (FACE_W // 2, FACE_H // 2), 40, ink, -1)  # centre art
    if art_touching:
        cv2.rectangle(face, (29, 60), (70, 64), ink, -1)  # art running into the suit
    # ink box, x2 and y2 exclusive: the "0" is 15 + 1.5 (its line) round y 29 and 7 + 1.5 round x 26
    return face, (12, 12, 36, 72)


def test_locate_indices_on_a_drawn_face() -> None:
    face, (x1, y1, x2, y2) = _synthetic_face()
    tl, br = locate_indices(face)
    # the ink box, to a pixel of anti-aliasing either way
    assert np.allclose(tl, (x1, y1, x2, y2), atol=1), tl
    assert np.allclose(br, (FACE_W - x2, FACE_H - y2, FACE_W - x1, FACE_H - y1), atol=1), br


def test_locate_indices_finds_all_four_on_a_four_index_face() -> None:
    """Many continental decks print the index in all four corners: all four are labelled."""
    face, (x1, y1, x2, y2) = _synthetic_face(four_index=True)
    boxes = locate_indices(face)
    assert len(boxes) == 4
    tl, br, tr, bl = boxes
    assert np.allclose(tl, (x1, y1, x2, y2), atol=1), tl
    assert np.allclose(br, (FACE_W - x2, FACE_H - y2, FACE_W - x1, FACE_H - y1), atol=1), br
    assert np.allclose(tr, (FACE_W - x2, y1, FACE_W - x1, y2), atol=1), tr
    assert np.allclose(bl, (x1, FACE_H - y2, x2, FACE_H - y1), atol=1), bl
    # a two-index face has no side indices
    assert len(locate_indices(_synthetic_face()[0])) == 2


def test_a_four_index_face_labels_four_corners_in_a_scene() -> None:
    """Drawn on the table, a four-index card's visible indices are all labelled, covered ones not."""
    face_img, _ = _synthetic_face(four_index=True)
    quads = tuple(
        _quad(*b)[[2, 3, 0, 1]] if turned else _quad(*b)
        for b, turned in zip(locate_indices(face_img), (False, True, False, True))
    )

    @dataclass(frozen=True)
    class FourIndexDesign(Design):
        def own_face(self, card: str) -> Face | None:
            return Face(face_img, quads)

    design = FourIndexDesign(**{k: getattr(PROCEDURAL[0], k) for k in Design.__dataclass_fields__})
    # a lone card, and a fan of two where the second covers the first's right-hand indices
    placed = [
        Placed("7H", (150, 225), 10, "loose"),
        Placed("5S", (380, 225), 0, "meld"),
        Placed("6S", (400, 225), 0, "meld"),
    ]
    scene = draw_scene(placed, design, random.Random(4), spoil=False, tilt_deg=0.0, table_mm=(600.0, 450.0))
    by_card = {lab.card: lab for lab in scene.labels}
    assert all(q is not None for q in by_card["7H"].corners) and len(by_card["7H"].corners) == 4
    covered = by_card["5S"].corners
    assert covered[0] is not None and covered[3] is not None  # top-left and bottom-left show
    assert covered[1] is None and covered[2] is None  # the right-hand ones are under the 6S
    assert len(by_card["5S"].quads) == 4 and all(q is not None for q in by_card["5S"].quads)


def test_locate_indices_refuses_art_touching_the_index() -> None:
    face, _ = _synthetic_face(art_touching=True)
    with pytest.raises(IndexNotFound):
        locate_indices(face)


def test_locate_indices_refuses_a_face_without_an_index() -> None:
    face = np.full((FACE_H, FACE_W, 4), 255, np.uint8)
    cv2.circle(face, (FACE_W // 2, FACE_H // 2), 60, (0, 0, 0, 255), -1)
    with pytest.raises(IndexNotFound):
        locate_indices(face)


def test_a_court_card_whose_art_touches_its_index_takes_the_pip_cards_place() -> None:
    """A court card's figure may run into its index (a big suit sign beside the letter): the index is
    then placed where the theme's pip cards print theirs, when that place holds ink."""
    face, _ = _synthetic_face()
    pips = {f"{r}{s}": [list(b) for b in locate_indices(face)] for r in "A23456789" for s in "SHDC"}
    pips["4S"][0][0] += 2  # one pip card's index a little off: the median places the court's
    court, _ = _synthetic_face(art_touching=True)
    with pytest.raises(IndexNotFound):
        locate_indices(court)
    assert _court_indices(court, "KH", pips) == pips["AS"]
    # nothing printed there: no index
    blank = np.full((FACE_H, FACE_W, 4), 255, np.uint8)
    with pytest.raises(IndexNotFound, match="no index where"):
        _court_indices(blank, "KH", pips)
    # too few pip cards to place it by: its own search decides
    with pytest.raises(IndexNotFound, match="^KH: "):
        _court_indices(court, "KH", dict(list(pips.items())[:10]))
    # a clean court index is its own search's
    clean, _ = _synthetic_face()
    assert _court_indices(clean, "KH", pips) == [list(b) for b in locate_indices(clean)]
    # its own box wider than COURT_WIDTH pip indices (a big suit sign taken in) gives way to the pips'
    # place; one no wider is kept
    wide = {c: [[b[0], b[1], b[0] + 2 * (b[2] - b[0]), b[3]] for b in boxes] for c, boxes in pips.items()}
    narrow = {c: [[b[0], b[1], b[0] + (b[2] - b[0]) // 2, b[3]] for b in boxes] for c, boxes in pips.items()}
    assert _court_indices(clean, "KH", narrow) == narrow["AS"]
    assert _court_indices(clean, "KH", wide) == [list(b) for b in locate_indices(clean)]


# ------------------------------------------------------------------ installed themes


def _themes(tmp_path_factory: pytest.TempPathFactory) -> list:
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert is not installed (vision_models/install_card_themes.sh)")
    sources = find_theme_files()
    if not sources:
        pytest.skip("no card themes installed (vision_models/install_card_themes.sh)")
    # two themes are enough to test with: rasterising all takes minutes
    wanted = [s for s in sources if s.name in ("ar-anglo_poker", "kde-white")] or sources[:2]
    return load_themes(tmp_path_factory.mktemp("themes"), wanted)


@pytest.fixture(scope="module")
def themes(tmp_path_factory: pytest.TempPathFactory) -> list:
    found = _themes(tmp_path_factory)
    if not found:
        pytest.skip("no installed theme has a standard corner-index layout")
    return found


def test_theme_faces_and_quads(themes: list) -> None:
    for design in themes:
        for card in ("AS", "10H", "QD", "KC"):
            face = render_face(design, card)
            assert face.image.shape == (FACE_H, FACE_W, 4)
            gray = cv2.cvtColor(face.image[..., :3], cv2.COLOR_BGR2GRAY)
            tl, br = face.corners[:2]
            for q in face.corners:
                x1, y1 = np.floor(q.min(axis=0)).astype(int)
                x2, y2 = np.ceil(q.max(axis=0)).astype(int)
                assert 0 <= x1 < x2 <= FACE_W + 2 and 0 <= y1 < y2 <= FACE_H + 2
                assert gray[max(0, y1) : y2, max(0, x1) : x2].min() < 150, (design.name, card, "the quad holds ink")
            # the bottom-right quad starts at the index's own top-left: the face's bottom-right side
            assert br[0][0] > br[2][0] and br[0][1] > br[2][1]
        assert render_back(7, design).shape == (FACE_H, FACE_W, 4)


def test_theme_design_draws_a_labelled_scene(themes: list) -> None:
    design = themes[0]
    rng = random.Random(3)
    placed = [Placed("7H", (300, 225), 20, "test"), Placed("back", (150, 225), 0, "stock")]
    scene = draw_scene(placed, design, rng, spoil=False, tilt_deg=0.0, table_mm=(600.0, 450.0))
    assert [lab.card for lab in scene.labels] == ["7H"]
    assert all(q is not None for q in scene.labels[0].corners)


def test_theme_names_are_unique() -> None:
    sources = find_theme_files()
    if not sources:
        pytest.skip("no card themes installed (vision_models/install_card_themes.sh)")
    names = [s.name for s in sources]
    assert len(names) == len(set(names))
