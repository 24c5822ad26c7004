"""The second stage: index crops (shared by training and the device) and the index classifier."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mayi_table.vision.classes import CLASS_NAMES, Corner
from mayi_table.vision.index_crops import (
    CROP_PAD,
    CROP_SIZE,
    INDEX_CLASSES,
    NONE,
    READABLE_SHARE,
    build_index_dataset,
    detected_samples,
    index_crop,
    index_label,
    jittered,
    scene_samples,
)
from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS, TRAIN_DESIGNS
from mayi_table.vision.render.scene import VISIBLE_SHARE, quad_box, render_spread, render_table


def test_crop_is_centred_on_the_box_and_scaled_to_its_longer_side() -> None:
    image = np.zeros((200, 300, 3), np.uint8)
    image[90:110, 145:155] = 255  # a 10 x 20 white mark centred at (150, 100)
    crop = index_crop(image, (145, 90, 155, 110))
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
    ys, xs = np.nonzero(crop[:, :, 0] > 128)
    assert abs(xs.mean() - CROP_SIZE / 2) < 1.5 and abs(ys.mean() - CROP_SIZE / 2) < 1.5
    # the mark's height fills 1 / CROP_PAD of the crop
    assert abs((ys.max() - ys.min() + 1) - CROP_SIZE / CROP_PAD) <= 2


def test_crop_past_the_image_edge_replicates_the_border() -> None:
    image = np.full((50, 50, 3), 77, np.uint8)
    crop = index_crop(image, (-10, -10, 10, 10))
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3) and (crop == 77).all()


def test_jitter_stays_near_the_box() -> None:
    rng = random.Random(1)
    for _ in range(100):
        x1, y1, x2, y2 = jittered((100, 100, 120, 150), rng)
        assert abs((x1 + x2) / 2 - 110) <= 0.12 * 20 + 1e-9 and abs((y1 + y2) / 2 - 125) <= 0.12 * 50 + 1e-9
        assert 0.84 * 20 <= x2 - x1 <= 1.21 * 20


def test_scene_samples_label_every_readable_index_and_negatives_avoid_visible_ones() -> None:
    """Visible indices and partly covered ones still readable (a hand spread shows no more) are
    positives; mostly covered ones are `none`."""
    scene = render_table(5, TRAIN_DESIGNS)
    samples = scene_samples(scene, random.Random(5))
    positives = [(c, b) for c, b in samples if c != NONE]
    readable = [
        lab.card for lab in scene.labels for share in lab.corner_shares if READABLE_SHARE <= share < VISIBLE_SHARE
    ]
    assert readable, "the scene has partly covered indices"
    assert sorted(c for c, _ in positives) == sorted([c for c, _ in scene.corner_boxes()] + readable)
    negatives = [b for c, b in samples if c == NONE]
    assert negatives
    for nb in negatives:
        for _, vb in scene.corner_boxes():
            ix = max(0.0, min(nb[2], vb[2]) - max(nb[0], vb[0]))
            iy = max(0.0, min(nb[3], vb[3]) - max(nb[1], vb[1]))
            union = (nb[2] - nb[0]) * (nb[3] - nb[1]) + (vb[2] - vb[0]) * (vb[3] - vb[1]) - ix * iy
            assert ix * iy / union < 0.1


def test_a_ten_showing_its_one_is_read_where_other_ranks_so_covered_are_not() -> None:
    """A fanned card hides a 10's "0" first; its "1", which no other rank prints, and some of its suit
    still name it. Any other rank covered so is `none`, or either answer where half of it shows."""
    assert index_label("10H", 0.4, 1.0) == "10H"
    assert index_label("10H", 0.4, 0.6) == NONE  # its "1" covered too
    assert index_label("10H", 0.3, 1.0) == NONE  # too little of its suit left
    assert index_label("7H", 0.4, 1.0) == NONE
    assert index_label("7H", 0.6, 1.0) is None
    assert index_label("10H", 0.6, 0.5) is None
    assert index_label("QS", READABLE_SHARE, 0.0) == "QS"


def test_a_fanned_tens_one_makes_crops_of_the_ten() -> None:
    """In this hand spread a 10D's index is 57% uncovered, its leading strip whole: both the rendered
    samples and a detector's box on it are the 10D, not `none` and not left out."""
    scene, _ = render_spread(2021, TRAIN_DESIGNS)
    tens = [
        quad_box(q)
        for lab in scene.labels
        if lab.card == "10D"
        for q, share, lead in zip(lab.quads, lab.corner_shares, lab.lead_shares)
        if share < READABLE_SHARE and lead == 1.0 and share > 0.5
    ]
    assert len(tens) == 1
    (x1, y1, x2, y2) = tens[0]
    samples = scene_samples(scene, random.Random(1))
    near = [c for c, b in samples if abs(b[0] - x1) < x2 - x1 and abs(b[1] - y1) < y2 - y1]
    assert "10D" in near and NONE not in near
    assert detected_samples(scene, tens) == [("10D", tens[0])]


def test_index_dataset_layout_is_deterministic_and_resumes(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build_index_dataset(a, scenes=1, val_scenes=1, seed=3)
    build_index_dataset(b, scenes=1, val_scenes=1, seed=3)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*.jpg"))
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*.jpg"))
    assert {p.parts[0] for p in files_a} == {"train", "val"}
    assert {p.parts[1] for p in files_a} <= set(INDEX_CLASSES)
    calls: list[int] = []
    build_index_dataset(a, scenes=1, val_scenes=1, seed=3, progress=calls.append)  # all done: nothing redrawn
    assert calls == [1, 1] and sorted(p.relative_to(a) for p in a.rglob("*.jpg")) == files_a


INDEX_FILES = [MODELS_DIR / "index.onnx", MODELS_DIR / "index_ncnn_model"]


@pytest.fixture(scope="module")
def held_out_scene():  # type: ignore[no-untyped-def]
    return render_table(77, HELD_OUT_DESIGNS)


def test_committed_classifier_names_held_out_indices(held_out_scene) -> None:  # type: ignore[no-untyped-def]
    """The committed classifier, through onnx and ncnn, names the indices of a table drawn in a deck design
    it never saw, and both runtimes agree."""
    if not all(p.exists() for p in INDEX_FILES):
        pytest.skip("no index classifier committed under vision_models/ yet")
    from mayi_table.vision.classify import IndexClassifier

    truth = held_out_scene.corner_boxes()
    onnx, ncnn = IndexClassifier(MODELS_DIR, "onnx"), IndexClassifier(MODELS_DIR, "ncnn")
    assert set(onnx.names) == set(INDEX_CLASSES) and ncnn.names == onnx.names
    boxes = [b for _, b in truth]
    got_onnx, got_ncnn = onnx.classify(held_out_scene.image, boxes), ncnn.classify(held_out_scene.image, boxes)
    assert [n for n, _ in got_onnx] == [n for n, _ in got_ncnn]
    right = sum(name == card for (card, _), (name, _) in zip(truth, got_onnx))
    assert right / len(truth) >= 0.8
    corners = [Corner(CLASS_NAMES[0], 0.5, b) for b in boxes]
    named = onnx.name_corners(held_out_scene.image, corners)
    assert all(c.card in CLASS_NAMES for c in named)


def test_a_long_box_is_read_again_at_each_end_an_index_long() -> None:
    """A box STACKED_LENGTH times longer than the surely read indices of its breadth yields its two ends;
    a box of their length, or one with too few such indices to judge by, yields none."""
    from mayi_table.vision.classify import STACKED_PAD, stacked_ends

    sure = [(0, 0, 10, 19), (50, 0, 61, 20), (90, 0, 100, 19), (0, 50, 40, 90)]  # the last: a turned card's
    upright = (100.0, 100.0, 112.0, 128.0)
    (top, bottom) = stacked_ends(upright, sure)
    length = STACKED_PAD * 19
    assert top == (100, 100, 112, 100 + length) and bottom == (100, 128 - length, 112, 128)
    (left, right) = stacked_ends((100.0, 100.0, 128.0, 112.0), [(0, 0, 19, 10), (0, 30, 19, 41)])
    assert left == (100, 100, 100 + length, 112) and right == (128 - length, 100, 128, 112)
    assert stacked_ends((100.0, 100.0, 112.0, 120.0), sure) == []  # an index's own length
    assert stacked_ends(upright, sure[:1]) == []
    assert stacked_ends((100.0, 100.0, 130.0, 128.0), sure[:3]) == []  # none of its breadth


def test_a_long_boxs_end_read_surely_stands_for_it_unless_another_box_reads_that_index() -> None:
    """The end of an unsurely read long box that reads STACKED_SURE or surer replaces it; an end lying on
    an index another box already reads surely does not (a Dondorf 6C read 0.99 was lost for a looser
    box around it, spread 52 of seed 2003)."""
    from mayi_table.vision.classify import STACKED_PAD, IndexClassifier

    top_end = (100.0, 100.0, 112.0, 100 + STACKED_PAD * 19)
    said = {top_end: ("8C", 1.0, ())}

    def read(image: Any, boxes: Any, *_: Any) -> list[tuple[str, float, tuple[tuple[str, float], ...]]]:
        return [said.get(tuple(b), ("none", 0.8, ())) for b in boxes]

    reader = IndexClassifier.__new__(IndexClassifier)
    reader.read = read  # type: ignore[method-assign]
    long_box = (100.0, 100.0, 112.0, 128.0)
    others = [(0.0, 0.0, 10.0, 19.0), (50.0, 0.0, 60.0, 19.0)]
    boxes = [long_box, *others]
    named = [("2C", 0.33, ()), ("5D", 0.99, ()), ("KS", 0.95, ())]
    got_boxes, got_named = reader.read_stacked(None, boxes, named)  # type: ignore[arg-type]
    assert got_boxes[0] == top_end and got_named[0] == ("8C", 1.0, ()) and got_named[1:] == named[1:]
    # a surely read box on that end: the long box is left as it was read
    boxes.append((101.0, 101.0, 111.0, 120.0))
    named.append(("8C", 0.99, ()))
    assert reader.read_stacked(None, boxes, named) == (boxes, named)  # type: ignore[arg-type]
    # a surely read box beside it changes nothing; an end read under STACKED_SURE neither
    boxes[-1] = (130.0, 100.0, 140.0, 119.0)
    assert reader.read_stacked(None, boxes, named)[1][0] == ("8C", 1.0, ())  # type: ignore[arg-type]
    said[top_end] = ("8C", 0.85, ())
    assert reader.read_stacked(None, boxes, named)[1][0] == named[0]  # type: ignore[arg-type]


def test_a_pile_cards_index_framed_with_the_one_beneath_is_read_as_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Petras film 1002, round 5: Dee's discard 8C lies on a 9H and a 10H a few mm apart, and the
    detector frames each of its indices with the mark of the card beneath (a 9H's "9" above the top
    index, a 10H's "10" below the bottom one). Read whole, the top box is a 2C at 0.33 and the 8C is
    lost (so Ann's draw of it was taken for a buy); each box's end an index long reads 8C surely."""
    if not all(p.exists() for p in INDEX_FILES):
        pytest.skip("no index classifier committed under vision_models/ yet")
    from mayi_table.vision.classify import IndexClassifier
    from mayi_table.vision.evaluate import _overlaps
    from mayi_table.vision.recognize import Recognizer
    from mayi_table.vision.render.game import GameFilm

    film = GameFilm("petras", 1002, size=(1920, 1080), stop_after_round=5)
    (moment,) = [m for m in film.moments if m.events_done == 491]
    assert moment.pile[-3:] == ("9H", "10H", "8C")
    image, labels = film.draw(film.layout(moment), None)
    pile = [quad_box(q) for label in labels if label.zone == "discard" for q in label.quads]
    recognizer = Recognizer(MODELS_DIR, "onnx", threads=1)

    def pile_cards() -> list[str]:
        cards = recognizer.recognize(image)
        return [c.card for c in cards if any(_overlaps(k.box, b) for k in c.corners for b in pile)]

    assert pile_cards() == ["8C"]
    monkeypatch.setattr(IndexClassifier, "read_stacked", lambda self, image, boxes, named, *_: (boxes, named))
    assert "8C" not in pile_cards()


def test_a_box_inside_another_is_read_once() -> None:
    """The detector may frame the word JOKER and its J apart: the best reading of nested boxes stays;
    neighbouring indices that only touch both stay."""
    from mayi_table.vision.classify import drop_nested

    joker = Corner("JK", 0.95, (100, 100, 112, 160))
    its_j = Corner("JC", 0.54, (100, 100, 112, 118))
    neighbour = Corner("5S", 0.9, (110, 100, 124, 130))  # overlaps the joker's box by a sliver
    kept = drop_nested([its_j, neighbour, joker])
    assert set(kept) == {joker, neighbour}
    # the better reading wins whichever box is larger
    assert drop_nested([Corner("JK", 0.4, joker.box), Corner("JC", 0.9, its_j.box)]) == [Corner("JC", 0.9, its_j.box)]


def test_a_jokers_mark_framed_whole_and_in_two_pieces_is_one_index() -> None:
    """The detector frames a joker's mark whole and two overlapping pieces of it, all read JK: the
    pieces, not nested in each other, were two jokers. Now the whole stands for its pieces, when it
    reads their face surely; one loose box around a single index does not replace it (a loose 9C box
    about a tight one broke a card's pair on a held-out table), nor two cards' indices side by side."""
    from mayi_table.vision.classify import WHOLE_SURE, drop_nested

    whole = Corner("JK", 0.995, (460, 294, 505, 341))  # the boxes of held-out spread 165 of seed 5001
    pieces = [Corner("JK", 0.999, (474, 293, 503, 327)), Corner("JK", 0.998, (459, 307, 491, 341))]
    assert drop_nested([*pieces, whole]) == [whole]
    assert set(drop_nested([*pieces, Corner("JK", WHOLE_SURE - 0.1, whole.box)])) == set(pieces)
    assert set(drop_nested([*pieces, Corner("QS", 0.999, whole.box)])) == set(pieces)
    neighbour = Corner("5S", 0.9, (503, 300, 520, 330))  # touches the whole mark: stays
    assert set(drop_nested([*pieces, neighbour, whole])) == {whole, neighbour}
    tight = Corner("9C", 1.0, (1172, 609, 1188, 633))  # held-out table 23 of seed 4242
    assert drop_nested([tight, Corner("9C", 0.991, (1160, 607, 1189, 635))]) == [tight]
    side_by_side = [Corner("8C", 1.0, (100, 100, 116, 124)), Corner("8C", 0.99, (117, 101, 133, 125))]
    assert set(drop_nested([*side_by_side, Corner("8C", 0.95, (98, 98, 135, 127))])) == set(side_by_side)


@pytest.mark.parametrize("seed", [150, 331])
def test_a_held_out_spreads_joker_is_one_card(seed: int) -> None:
    """Held-out procedural spreads whose one joker was read as two (its mark framed whole and in two
    pieces)."""
    if not (MODELS_DIR / "index.onnx").exists():
        pytest.skip("no models committed under vision_models/ yet")
    from mayi_table.vision.recognize import Recognizer

    scene, truth = render_spread(seed, HELD_OUT_DESIGNS)
    assert truth.count("JK") == 1
    assert [c.card for c in Recognizer(MODELS_DIR, "onnx").recognize(scene.image)].count("JK") == 1


def test_index_dataset_of_hand_spreads(tmp_path: Path) -> None:
    """Hand spreads give crops too, and the share of spreads is part of what the seed fixes."""
    build_index_dataset(tmp_path / "a", scenes=1, val_scenes=0, seed=3, spread_share=1.0)
    build_index_dataset(tmp_path / "b", scenes=1, val_scenes=0, seed=3)
    spread = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.jpg"))
    table = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.jpg"))
    assert spread and table and spread != table


def test_detected_samples_take_the_detectors_boxes_and_label_them_by_what_they_lie_on() -> None:
    """Crops at a detector's boxes: a box on a readable index is that card, one on the table or on a
    mostly covered index is `none`, one on an index half to 70% uncovered is left out."""
    from mayi_table.vision.index_crops import UNREADABLE_SHARE, detected_samples
    from mayi_table.vision.render.scene import quad_box

    scene = render_table(5, TRAIN_DESIGNS)
    quads = [(lab.card, quad_box(q), s) for lab in scene.labels for q, s in zip(lab.quads, lab.corner_shares)]

    def alone(box: tuple[float, float, float, float]) -> bool:  # touches no other index
        return sum(b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3] for _, b, _ in quads) == 1

    readable = [(c, b) for c, b, s in quads if s >= READABLE_SHARE and alone(b)]
    covered = [b for _, b, s in quads if 0.05 < s < UNREADABLE_SHARE and alone(b)]
    unsure = [b for _, b, s in quads if UNREADABLE_SHARE <= s < READABLE_SHARE and alone(b)]
    assert readable and covered and unsure
    background = (0.0, 0.0, 12.0, 20.0)  # the table's corner: no card there
    assert not any(b[0] < 12 and b[1] < 20 for _, b, _ in quads)
    samples = detected_samples(scene, [b for _, b in readable] + covered + unsure + [background])
    assert sorted(samples) == sorted(readable + [(NONE, b) for b in covered] + [(NONE, background)])


def test_index_dataset_adds_crops_where_a_detector_finds_indices(tmp_path: Path) -> None:
    plain, mined = tmp_path / "plain", tmp_path / "mined"
    build_index_dataset(plain, scenes=1, val_scenes=0, seed=3)
    build_index_dataset(mined, scenes=1, val_scenes=0, seed=3, detector=lambda image: [(0.0, 0.0, 12.0, 20.0)])
    assert len(list(mined.rglob("*.jpg"))) == len(list(plain.rglob("*.jpg"))) + 1
    assert len(list((mined / "train" / NONE).glob("*.jpg"))) == len(list((plain / "train" / NONE).glob("*.jpg"))) + 1


def test_dataset_command_refuses_a_missing_mining_model_and_mining_for_the_detector(tmp_path: Path) -> None:
    """And a bad shard, an unknown design group, a broken or missing recipe: clear errors."""
    import os
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mayi_table.cli", "dataset", "--out", str(tmp_path / "d"), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ),
        )

    broken = tmp_path / "broken.yaml"
    broken.write_text("dataset:\n  scenes: [1\ntrain: {}\n")
    for args, words in (
        (("--stage", "index", "--mine-with", str(tmp_path / "nowhere")), ("onnx", "nowhere")),
        (("--stage", "corners", "--mine-with", str(MODELS_DIR)), ("--mine-with", "index")),
        (("--shard", "2/2"), ("--shard", "0 <= I < K")),
        (("--designs", "procedural,decks"), ("--designs", "groups are")),
        (("--recipe", str(broken)), (broken.name, "not valid YAML")),
        (("--recipe", str(tmp_path / "none.yaml")), ("none.yaml", "cannot read")),
        (("--joker-share", "1.5"), ("joker-share 1.5", "from 0 to 1")),
    ):
        res = cli(*args)
        out = (res.stdout + res.stderr).strip()
        assert res.returncode != 0 and "Traceback" not in out and all(w in out for w in words), out
    assert not list(tmp_path.rglob("*.jpg"))


def test_each_index_is_read_framed_three_ways_and_turned_four() -> None:
    """The classifier reads every crop framing at each quarter turn: the same crop turned, not another."""
    from mayi_table.vision.classify import VIEW_PADS, VIEW_TURNS, index_views

    image = np.random.default_rng(3).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    box = (50.0, 30.0, 70.0, 58.0)
    views = index_views(image, box, size=64)
    assert len(views) == len(VIEW_PADS) * len(VIEW_TURNS) == 12
    assert all(v.shape == (64, 64, 3) and v.flags["C_CONTIGUOUS"] for v in views)
    for k, pad in enumerate(VIEW_PADS):
        upright = index_crop(image, box, size=64, pad=pad)
        for j, turns in enumerate(VIEW_TURNS):
            assert np.array_equal(views[k * len(VIEW_TURNS) + j], np.rot90(upright, turns))
    assert not np.array_equal(views[0], views[1])  # a quarter turn is another view
