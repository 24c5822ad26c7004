"""Debian card themes as designs: the corner-index search (always, on a drawn face) and, where the themes
are installed, their faces and quads."""

from __future__ import annotations

import random
import shutil

import cv2
import numpy as np
import pytest

from mayi_table.vision.render.faces import FACE_H, FACE_W, render_back, render_face
from mayi_table.vision.render.scene import Placed, draw_scene
from mayi_table.vision.render.themes import IndexNotFound, find_theme_files, load_themes, locate_indices


def _synthetic_face(art_touching: bool = False) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A white card with a "10" over a suit blob in the top-left, the same turned 180° bottom-right,
    a thin court frame and centre art; returns the face and the true ink box of the top-left index."""
    face = np.zeros((FACE_H, FACE_W, 4), np.uint8)
    cv2.rectangle(face, (0, 0), (FACE_W - 1, FACE_H - 1), (255, 255, 255, 255), -1)
    cv2.rectangle(face, (0, 0), (FACE_W - 1, FACE_H - 1), (60, 60, 60, 255), 1)  # the card's outline stroke
    index = np.zeros_like(face)
    ink = (20, 20, 200, 255)
    cv2.rectangle(index, (12, 14), (15, 44), ink, -1)  # "1"
    cv2.ellipse(index, (26, 29), (7, 15), 0, 0, 360, ink, 3)  # "0", 4 px right of the "1"
    cv2.circle(index, (21, 62), 9, ink, -1)  # the suit, under the rank
    for layer in (index, index[::-1, ::-1]):
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


def test_locate_indices_refuses_art_touching_the_index() -> None:
    face, _ = _synthetic_face(art_touching=True)
    with pytest.raises(IndexNotFound):
        locate_indices(face)


def test_locate_indices_refuses_a_face_without_an_index() -> None:
    face = np.full((FACE_H, FACE_W, 4), 255, np.uint8)
    cv2.circle(face, (FACE_W // 2, FACE_H // 2), 60, (0, 0, 0, 255), -1)
    with pytest.raises(IndexNotFound):
        locate_indices(face)


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
            tl, br = face.corners
            for q in (tl, br):
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
