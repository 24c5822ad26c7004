"""The table renderer: labels are exact, drawing is deterministic, the dataset is consistent."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from mayi_table.vision.classes import CLASS_NAMES
from mayi_table.vision.dataset import DatasetSpec, build_dataset, crop_labels, label_boxes
from mayi_table.vision.index_crops import index_label
from mayi_table.vision.render.faces import (
    ART_X,
    CROWDED_DESIGNS,
    FACE_H,
    FACE_W,
    HELD_OUT_DESIGNS,
    JOKER_INDICES,
    TRAIN_DESIGNS,
    VARIANT_DESIGNS,
    Design,
    render_face,
)
from mayi_table.vision.render.scene import (
    Placed,
    draw_scene,
    layout_game,
    lead_strip,
    quad_box,
    render_spread,
    render_table,
)


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    a = a.astype(np.float32).ravel() - a.mean()
    b = b.astype(np.float32).ravel() - b.mean()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-6))


def test_face_corner_quads_hold_the_index() -> None:
    """The two corner quads of a face hold ink, and the bottom-right one is the top-left turned 180°."""
    design = next(d for d in TRAIN_DESIGNS if not d.border and d.centre == "pips")
    face = render_face(design, "10H")
    gray = cv2.cvtColor(face.image[..., :3], cv2.COLOR_BGR2GRAY)
    tl, br = face.corners
    x1, y1 = tl.min(axis=0).astype(int)
    x2, y2 = tl.max(axis=0).astype(int)
    top_left = gray[y1:y2, x1:x2]
    assert top_left.min() < 150, "the index has ink"
    bx1, by1 = br.min(axis=0).astype(int)
    bx2, by2 = br.max(axis=0).astype(int)
    bottom_right = gray[by1:by2, bx1:bx2]
    assert _ncc(top_left, bottom_right[::-1, ::-1]) > 0.95


def _strip_picture(gray: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """A quad's pixels warped upright, as the index reads (its points start at its own top-left)."""
    w = int(round(np.linalg.norm(quad[1] - quad[0])))
    h = int(round(np.linalg.norm(quad[3] - quad[0])))
    target = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    upright = cv2.warpPerspective(gray, cv2.getPerspectiveTransform(quad.astype(np.float32), target), (w, h))
    return cv2.GaussianBlur(upright, (0, 0), 1.5)  # a pixel's shift between the turned quads does not count


@pytest.mark.parametrize("design", [d for d in TRAIN_DESIGNS if d.centre == "pips"][:3], ids=lambda d: d.name)
def test_a_tens_leading_strip_holds_its_one_at_both_corners(design: Design) -> None:
    """The leading strip of an index, where a 10 prints its "1" (a fan hides the "0" first), is the
    same picture in the upright top-left index and the turned bottom-right one, and not the strip at
    the index's other end."""
    face = render_face(design, "10S")
    gray = cv2.cvtColor(face.image[..., :3], cv2.COLOR_BGR2GRAY)
    tl, br = face.corners[:2]
    lead_tl, lead_br = (_strip_picture(gray, lead_strip(q)) for q in (tl, br))
    assert lead_tl.min() < 150, "the strip has ink"
    assert _ncc(lead_tl, lead_br) > 0.8
    trailing = _strip_picture(gray, lead_strip(tl[[1, 0, 3, 2]]))[:, ::-1]  # the strip at the other end
    assert _ncc(lead_tl, trailing) < 0.5


def test_a_fan_covers_an_index_from_its_trailing_end() -> None:
    """Of the partly covered indices of fanned hands, the leading strip is the more uncovered: the next
    card lies over the index's far end (where a 10 prints its "0")."""
    partly = [
        (share, lead)
        for seed in (2021, 2030)
        for lab in render_spread(seed, TRAIN_DESIGNS)[0].labels
        for share, lead in zip(lab.corner_shares, lab.lead_shares)
        if 0.2 < share < 0.9
    ]
    assert partly and all(lead > share for share, lead in partly)


def test_faces_differ_by_card_and_design() -> None:
    a = render_face(TRAIN_DESIGNS[0], "7H").image
    assert not np.array_equal(a, render_face(TRAIN_DESIGNS[0], "7S").image)
    assert not np.array_equal(a, render_face(TRAIN_DESIGNS[1], "7H").image)
    assert a.shape == (FACE_H, FACE_W, 4)
    assert {d.name for d in TRAIN_DESIGNS}.isdisjoint({d.name for d in HELD_OUT_DESIGNS})


def _ink_box(gray: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The index's own pixels, without the quad's 2 px of padding (where the card's edge may show)."""
    x1, y1 = quad.min(axis=0).astype(int) + 2
    x2, y2 = quad.max(axis=0).astype(int) - 2
    return gray[y1:y2, x1:x2]


FOUR_INDEX = [d for d in VARIANT_DESIGNS if d.four_index]


@pytest.mark.parametrize("design", FOUR_INDEX[:3], ids=lambda d: d.name)
def test_four_index_faces_repeat_the_index_in_all_four_corners(design: Design) -> None:
    """A four-index variant's top-right index is its top-left one, its bottom-left that one turned."""
    for card in ("10S", "QH", "JK"):
        face = render_face(design, card)
        gray = cv2.cvtColor(face.image[..., :3], cv2.COLOR_BGR2GRAY)
        assert len(face.corners) == 4
        tl, br, tr, bl = (_ink_box(gray, q) for q in face.corners)
        assert tl.min() < 150, "the index has ink"
        # (a wide "10" reaches the pip columns, whose edge then shows beside some of its copies)
        assert _ncc(tl, tr) > 0.9 and _ncc(tl, bl[::-1, ::-1]) > 0.9 and _ncc(tl, br[::-1, ::-1]) > 0.9


def test_variants_mark_the_joker_every_way_and_train_only() -> None:
    assert {d.joker_index for d in VARIANT_DESIGNS} == set(JOKER_INDICES)
    assert FOUR_INDEX and all(d.joker_index == "word" and not d.four_index for d in HELD_OUT_DESIGNS)
    assert {d.name for d in VARIANT_DESIGNS}.isdisjoint({d.name for d in TRAIN_DESIGNS + HELD_OUT_DESIGNS})
    jokers = [render_face(d, "JK").image for d in VARIANT_DESIGNS[: len(JOKER_INDICES)]]
    assert all(not np.array_equal(a, b) for a, b in zip(jokers, jokers[1:]))


@pytest.mark.parametrize(
    "seed, design",
    [(1, TRAIN_DESIGNS[1]), (2, TRAIN_DESIGNS[2]), (3, TRAIN_DESIGNS[3]), (4, FOUR_INDEX[0]), (5, VARIANT_DESIGNS[4])],
    ids=lambda v: v.name if isinstance(v, Design) else str(v),
)
def test_visible_corner_labels_match_what_is_drawn(seed: int, design: Design) -> None:
    """Every corner labelled visible shows that card's index: warped back to the face, the pixels
    match the face's own index; covered corners are not labelled."""
    _check_labels_match_drawing(seed, design)


def test_font_variants_draw_in_the_training_fonts_and_label_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The font variants take their ranks and suits from the training fonts found (slanted faces and
    files that are no font left out), the same designs from the same fonts, and their scenes are
    labelled as exactly as the other designs'."""
    from mayi_table.vision.render import faces

    for name in ("DejaVuSerif-Bold.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Oblique.ttf"):
        (tmp_path / name).write_bytes((faces.FONT_DIR / name).read_bytes())
    (tmp_path / "broken.otf").write_bytes(b"not a font")
    monkeypatch.setattr(faces, "TRAINING_FONT_DIRS", (tmp_path, tmp_path / "absent"))
    ranks, suits = faces.training_fonts()
    assert (
        [Path(f).name for f in ranks] == ["DejaVuSansMono.ttf", "DejaVuSerif-Bold.ttf"] == [Path(f).name for f in suits]
    )
    designs = faces.font_variant_designs()
    assert designs == faces.font_variant_designs() and len(designs) == 40
    assert {d.font for d in designs} == {d.suit_font for d in designs} == set(ranks)
    assert {d.name for d in designs}.isdisjoint({d.name for d in TRAIN_DESIGNS + HELD_OUT_DESIGNS + VARIANT_DESIGNS})
    serif = next(d for d in designs if d.font.endswith("Serif-Bold.ttf"))
    mono = next(d for d in designs if d.font.endswith("SansMono.ttf"))
    assert not np.array_equal(render_face(serif, "QS").image, render_face(mono, "QS").image)
    _check_labels_match_drawing(6, serif)
    monkeypatch.setattr(faces, "TRAINING_FONT_DIRS", (tmp_path / "absent",))
    assert faces.font_variant_designs() == ()


def test_crowded_designs_bring_the_art_against_the_index_but_never_into_it() -> None:
    """A crowded design's pips (or court frame) come within a few pixels of the index, right of its
    labelled quad, and leave the quad itself as the same design draws it with its art set back; they
    train only, and their scenes are labelled exactly."""
    from dataclasses import replace

    assert {d.name for d in CROWDED_DESIGNS}.isdisjoint(
        {d.name for d in TRAIN_DESIGNS + HELD_OUT_DESIGNS + VARIANT_DESIGNS}
    )
    assert all(d.art_x < ART_X for d in CROWDED_DESIGNS) and all(d.art_x == ART_X for d in HELD_OUT_DESIGNS)
    near = 0
    for design in CROWDED_DESIGNS[:6]:
        set_back = replace(design, art_x=ART_X, art_y=0.2)
        for card in ("10D", "7C", "QS", "9H"):
            face, plain = render_face(design, card), render_face(set_back, card)
            for quad in face.corners:
                x1, y1 = np.floor(quad.min(axis=0)).astype(int)
                x2, y2 = np.ceil(quad.max(axis=0)).astype(int)
                assert np.array_equal(face.image[y1:y2, x1:x2], plain.image[y1:y2, x1:x2]), (design.name, card)
            x1, y1 = np.floor(face.corners[0].min(axis=0)).astype(int)
            x2, y2 = np.ceil(face.corners[0].max(axis=0)).astype(int)
            beside = face.image[y1:y2, x2 : x2 + 12, :3].min(axis=-1) < 128  # ink just right of the index
            near += bool(beside.any())
    assert near >= 12  # most of them crowd it (the frame designs' pip cards keep their distance)
    _check_labels_match_drawing(7, CROWDED_DESIGNS[0])


def _check_labels_match_drawing(seed: int, design: Design) -> None:
    rng = random.Random(seed)
    placed = layout_game(rng)
    # a close view (cards about 170 px wide) so that small index strokes survive the comparison
    scene = draw_scene(placed, design, rng, spoil=False, tilt_deg=0.0, table_mm=(600.0, 450.0))
    checked = 0
    for lab in scene.labels:
        face = render_face(design, lab.card)
        for which, quad in enumerate(lab.corners):
            if quad is None or lab.corner_shares[which] < 0.999:
                continue  # covered, or partly covered by another card
            # compare at the size the index has in the frame, so both sides lose the same detail
            w = max(4, int(round(np.linalg.norm(quad[1] - quad[0]))))
            h = max(4, int(round(np.linalg.norm(quad[3] - quad[0]))))
            target = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
            src = face.corners[which].astype(np.float32)
            ref = cv2.warpPerspective(
                cv2.GaussianBlur(face.image[..., :3], (0, 0), FACE_W / (w * 8) + 0.5),
                cv2.getPerspectiveTransform(src, target),
                (w, h),
                flags=cv2.INTER_AREA,
            )
            got = cv2.warpPerspective(scene.image, cv2.getPerspectiveTransform(quad.astype(np.float32), target), (w, h))
            got_gray = cv2.cvtColor(got, cv2.COLOR_BGR2GRAY)
            score = _ncc(cv2.cvtColor(ref, cv2.COLOR_BGR2GRAY), got_gray)
            assert score > 0.6, (lab.card, score)  # the same picture as the face's own index
            ys, xs = np.nonzero(got_gray < np.median(got_gray) - 40)
            assert len(xs), "the labelled quad holds ink"
            # and the quad fits the ink tightly (2 face pixels of padding plus anti-aliasing)
            assert xs.min() <= 5 and xs.max() >= w - 6 and ys.min() <= 5 and ys.max() >= h - 6, lab.card
            checked += 1
    assert checked >= 5


def test_covered_corners_are_not_labelled() -> None:
    """A card laid exactly on another hides the lower card's indices."""
    rng = random.Random(0)
    placed = [Placed("7H", (600, 450), 0, "test"), Placed("KS", (600, 450), 0, "test")]
    scene = draw_scene(placed, TRAIN_DESIGNS[0], rng, spoil=False, tilt_deg=0.0)
    by_card = {lab.card: lab for lab in scene.labels}
    assert by_card["7H"].corners == [None, None]
    assert all(q is not None for q in by_card["KS"].corners)


def test_rendering_is_deterministic_per_seed() -> None:
    a = render_table(5, TRAIN_DESIGNS, size=(640, 360))
    b = render_table(5, TRAIN_DESIGNS, size=(640, 360))
    assert np.array_equal(a.image, b.image) and a.label_dicts() == b.label_dicts()
    c = render_table(6, TRAIN_DESIGNS, size=(640, 360))
    assert not np.array_equal(a.image, c.image)


def test_dataset_labels_are_yolo_rows_inside_the_crop(tmp_path: Path) -> None:
    data = build_dataset(tmp_path, DatasetSpec(scenes=2, val_scenes=1, crops_per_scene=3))
    assert data.exists() and "names:" in data.read_text()
    labels = sorted((tmp_path / "labels" / "train").glob("*.txt"))
    assert len(labels) == 6 and len(list((tmp_path / "images" / "train").glob("*.jpg"))) == 6
    rows = [line.split() for f in labels for line in f.read_text().splitlines()]
    assert rows, "crops are centred on corners, so they hold labels"
    for row in rows:
        cls, cx, cy, w, h = int(row[0]), *map(float, row[1:])
        assert 0 <= cls < len(CLASS_NAMES)
        assert 0 <= cx - w / 2 and cx + w / 2 <= 1.0001 and 0 <= cy - h / 2 and cy + h / 2 <= 1.0001
    # resuming keeps what was written
    before = {f.name: f.read_text() for f in labels}
    build_dataset(tmp_path, DatasetSpec(scenes=2, val_scenes=1, crops_per_scene=3))
    assert {f.name: f.read_text() for f in sorted((tmp_path / "labels" / "train").glob("*.txt"))} == before


def test_partly_covered_labels_add_every_index_the_classifier_names() -> None:
    """With `partly_covered`, the detector is taught every index the classifier is taught to name as
    its card (70% uncovered, or a fanned 10 showing its "1"), not only the 90% uncovered ones; an index
    more covered stays background."""
    seen = added = tens = left = 0
    for seed in (2021, 2030, 2044):
        scene = render_spread(seed, TRAIN_DESIGNS)[0]
        visible = scene.corner_boxes()
        readable = label_boxes(scene, partly_covered=True)
        assert label_boxes(scene) == visible
        assert all(v in readable for v in visible)
        for lab in scene.labels:
            for quad, share, lead in zip(lab.quads, lab.corner_shares, lab.lead_shares):
                box = (lab.card, quad_box(quad))
                if share >= 0.9:
                    seen += 1
                    assert box in visible and box in readable
                elif index_label(lab.card, share, lead) == lab.card:
                    added += 1
                    tens += share < 0.7
                    assert box in readable and box not in visible
                else:
                    left += 1
                    assert box not in readable
    assert seen and added and left, "tight hand spreads show indices of each kind"
    assert tens == 3, "seeds 2021 and 2030 fan three 10s over their 0 (a 10D, a 10D and a 10C)"
    scene = render_spread(2021, TRAIN_DESIGNS)[0]
    h, w = scene.image.shape[:2]
    rows = crop_labels(scene, 0, 0, max(h, w), partly_covered=True)
    assert len(rows) == len(label_boxes(scene, partly_covered=True)) > len(crop_labels(scene, 0, 0, max(h, w)))


def test_dataset_of_hand_spreads_labels_their_indices(tmp_path: Path) -> None:
    """With spread_share 1 every scene is a hand spread (800 x 600): its crops hold index labels too."""
    build_dataset(tmp_path, DatasetSpec(scenes=1, val_scenes=0, crops_per_scene=3, spread_share=1.0))
    images = sorted((tmp_path / "images" / "train").glob("*.jpg"))
    assert len(images) == 3
    rows = [line for f in (tmp_path / "labels" / "train").glob("*.txt") for line in f.read_text().splitlines()]
    assert rows


@pytest.mark.parametrize("seed", [3354, 19163])
def test_a_busy_table_deals_only_the_cards_its_decks_hold(seed: int) -> None:
    """Four seats of long melds and hands can ask for more cards than two decks hold: the table stops
    dealing instead of failing (these seeds stopped a training-data build), and no face-up card is
    placed more often than there are decks."""
    placed = layout_game(random.Random(seed))
    faces = [p.card for p in placed if p.card != "back"]
    assert len(faces) >= 104
    counts = {card: faces.count(card) for card in set(faces)}
    assert max(n for card, n in counts.items() if card != "JK") <= 3
    assert counts.get("JK", 0) <= 6


def test_joker_share_makes_jokers_common_and_leaves_other_scenes_as_they_were() -> None:
    """Training only: with joker_share a share of the dealt cards are jokers (2 in 108 otherwise);
    without it a seed deals exactly the cards it always did (held-out evaluation scenes unchanged)."""
    plain = [p.card for p in layout_game(random.Random(5))]
    assert [p.card for p in layout_game(random.Random(5), joker_share=0.0)] == plain
    jokered = [p.card for p in layout_game(random.Random(5), joker_share=0.3)]
    assert jokered.count("JK") >= 0.2 * len(jokered) > plain.count("JK")
    scene, cards = render_spread(9, TRAIN_DESIGNS[:1], joker_share=1.0)
    assert cards and set(cards) == {"JK"}
    assert {label.card for label in scene.labels} == {"JK"}


class _LoggingCv2:
    """cv2 for the scene module, noting the frame-wide blurs and the JPEG quality it applies."""

    def __init__(self) -> None:
        self.applied: dict[str, float] = {}

    def __getattr__(self, name: str) -> object:
        return getattr(cv2, name)

    def GaussianBlur(self, img: np.ndarray, ksize: object, sigma: float) -> np.ndarray:
        if img.ndim == 3:  # the frame, not a shadow mask
            self.applied["blur_sigma"] = sigma
        return cv2.GaussianBlur(img, ksize, sigma)

    def filter2D(self, img: np.ndarray, depth: int, kernel: np.ndarray) -> np.ndarray:
        self.applied["shake_px"] = kernel.shape[0]
        return cv2.filter2D(img, depth, kernel)

    def imencode(self, ext: str, img: np.ndarray, params: list[int]) -> tuple[bool, np.ndarray]:
        self.applied["jpeg_quality"] = params[1]
        return cv2.imencode(ext, img, params)


def test_the_scene_says_how_the_camera_spoiled_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded blur, camera shake and JPEG quality are exactly those applied to the frame (the
    evaluation splits its figures by them), and a clean render records none."""
    from mayi_table.vision.render import scene as scene_module

    seen_shaken = seen_blurred = False
    for seed in range(40):
        logger = _LoggingCv2()
        monkeypatch.setattr(scene_module, "cv2", logger)
        _, spoil = scene_module.spoil_image(np.full((48, 64, 3), 128, np.uint8), random.Random(seed))
        assert spoil.shake_px == logger.applied.get("shake_px", 0)
        assert spoil.blur_sigma == logger.applied.get("blur_sigma", 0.0)
        assert spoil.jpeg_quality == logger.applied["jpeg_quality"]
        seen_shaken |= spoil.shake_px > 0
        seen_blurred |= spoil.blur_sigma > 0
    assert seen_shaken and seen_blurred
    monkeypatch.undo()
    rng = random.Random(3)
    placed = layout_game(rng)[:6]
    clean = draw_scene(placed, TRAIN_DESIGNS[2], rng, spoil=False, tilt_deg=0.0, size=(640, 480))
    assert clean.design == TRAIN_DESIGNS[2].name
    assert (clean.spoil.shake_px, clean.spoil.blur_sigma, clean.spoil.jpeg_quality) == (0, 0.0, 100)
