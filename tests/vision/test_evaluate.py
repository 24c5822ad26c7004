"""Scoring predicted cards against a rendered scene's labels (issue 3's per-card F1)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mayi_table.vision.classes import Corner, PhysicalCard
from mayi_table.vision.evaluate import SceneScore, SpreadScore, camera_of, held_out_designs, score_cards, spread_points
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
from mayi_table.vision.render.scene import CardLabel, Scene, Spoil


def _quad(x: float, y: float) -> np.ndarray:
    return np.array([[x, y], [x + 10, y], [x + 10, y + 20], [x, y + 20]], float)


def _label(card: str, shares: tuple[float, float], x: float = 0) -> CardLabel:
    """A card at x with two indices, each uncovered by the given share."""
    quads = [_quad(x, 0), _quad(x + 50, 80)]
    corners = [q if s >= 0.9 else None for q, s in zip(quads, shares)]
    outline = np.array([[x, 0], [x + 60, 0], [x + 60, 100], [x, 100]], float)
    return CardLabel(card, "table", outline, corners, max(shares), shares, quads)


def _seen(card: str, *xy: tuple[float, float], confidence: float = 0.9) -> PhysicalCard:
    corners = tuple(Corner(card, confidence, (x, y, x + 10, y + 20)) for x, y in xy)
    return PhysicalCard(card, confidence, corners[0].box, corners)


def _score(pred: list[PhysicalCard], truth: list[CardLabel]) -> SceneScore:
    score = SceneScore()
    score_cards(pred, truth, score)
    return score


def test_a_card_found_through_a_visible_index_is_a_hit_and_a_missed_one_a_miss() -> None:
    truth = [_label("QH", (1.0, 1.0)), _label("7S", (1.0, 0.0), x=200)]
    score = _score([_seen("QH", (0, 0), (50, 80))], truth)
    assert (score.total.tp, score.total.fp, score.total.fn) == (1, 0, 1)


def test_a_wrong_name_on_a_true_index_is_a_false_alarm_and_a_miss() -> None:
    score = _score([_seen("QD", (0, 0))], [_label("QH", (1.0, 1.0))])
    assert (score.total.tp, score.total.fp, score.total.fn) == (0, 1, 1)


def test_one_card_counted_twice_is_one_hit_and_one_false_alarm() -> None:
    """Both indices read but not paired: the second card is a false alarm, also when it lies on a
    partly covered index."""
    for shares in ((1.0, 1.0), (1.0, 0.7)):
        score = _score([_seen("QH", (0, 0)), _seen("QH", (50, 80), confidence=0.8)], [_label("QH", shares)])
        assert (score.total.tp, score.total.fp, score.total.fn) == (1, 1, 0)


def test_two_identical_cards_need_two_predictions() -> None:
    truth = [_label("QH", (1.0, 0.0)), _label("QH", (1.0, 0.0), x=200)]
    assert (_score([_seen("QH", (0, 0))], truth).total.fn) == 1
    both = _score([_seen("QH", (0, 0)), _seen("QH", (200, 0))], truth)
    assert (both.total.tp, both.total.fp, both.total.fn) == (2, 0, 0)


def test_a_card_seen_only_through_partly_covered_indices_may_be_named_or_not() -> None:
    """70% of an index showing: naming the card rightly is no false alarm, not naming it no miss;
    naming it wrongly is still a false alarm."""
    truth = [_label("QH", (0.7, 0.3))]
    assert (_score([], truth).total.fn, _score([], truth).partial_reads) == (0, 0)
    right = _score([_seen("QH", (0, 0))], truth)
    assert (right.total.tp, right.total.fp, right.total.fn, right.partial_reads) == (0, 0, 0, 1)
    wrong = _score([_seen("QD", (0, 0))], truth)
    assert (wrong.total.fp, wrong.partial_reads) == (1, 0)


def test_a_mostly_covered_index_read_as_its_card_is_a_false_alarm() -> None:
    score = _score([_seen("QH", (50, 80))], [_label("QH", (0.0, 0.3))])
    assert (score.total.tp, score.total.fp, score.total.fn) == (0, 1, 0)


def test_a_ten_seen_by_its_one_may_be_named() -> None:
    """A 10 whose "0" a fanned card hides, its "1" showing (`index_label`), is partly seen: naming it
    is no false alarm; another rank covered as much is."""
    ten = replace(_label("10S", (0.4, 0.0)), lead_shares=(1.0, 0.0))
    right = _score([_seen("10S", (0, 0))], [ten])
    assert (right.total.tp, right.total.fp, right.total.fn, right.partial_reads) == (0, 0, 0, 1)
    seven = replace(_label("7S", (0.4, 0.0)), lead_shares=(1.0, 0.0))
    assert _score([_seen("7S", (0, 0))], [seven]).total.fp == 1


def test_spread_points_use_both_profiles_values() -> None:
    """A joker is 25 in petras (§06) and 15 in classic (Scoring); an ace 15 and a ten 10 in both."""
    assert spread_points([]) == (0, 0)
    assert spread_points(["AS", "JK", "10H", "5C"]) == (15 + 25 + 10 + 5, 15 + 15 + 10 + 5)


def test_figures_are_split_by_camera_and_design() -> None:
    """A frame's hits and misses count in the total, under its camera (steady or shaken) and design."""
    total = SceneScore()
    total.add_scene(_score([_seen("QH", (0, 0))], [_label("QH", (1.0, 1.0))]), "proc24", "steady")
    total.add_scene(_score([_seen("QD", (0, 0))], [_label("QH", (1.0, 1.0))]), "proc25", "shaken")
    assert (total.total.tp, total.total.fp, total.total.fn) == (1, 1, 1)
    assert total.per_card["QH"].tp == 1 and total.per_card["QD"].fp == 1
    split = total.breakdown()
    steady = {"frames": 1, "tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert split["by_camera"]["steady"] == steady
    assert split["by_camera"]["shaken"]["frames"] == 1 and split["by_camera"]["shaken"]["f1"] == 0.0
    assert split["by_design"]["proc25"]["fn"] == 1
    # a frame is shaken when the camera streaked it, whatever its focus blur
    assert camera_of(Spoil(shake_px=4)) == "shaken"
    assert camera_of(Spoil(blur_sigma=1.2, jpeg_quality=45)) == camera_of(Spoil()) == "steady"


def test_a_spread_is_exact_when_both_profiles_total_the_same() -> None:
    """A spread is scored by its points (petras §06, classic Scoring): a 10 read as another 10 still
    totals right; a joker read as a king does not (25 against 10 in petras)."""
    tally = SpreadScore()
    steady = Scene(np.zeros((4, 4, 3), np.uint8), design="proc24")
    shaken = Scene(np.zeros((4, 4, 3), np.uint8), design="proc25", spoil=Spoil(shake_px=5))
    assert tally.add(steady, ["10H", "5C"], ["10S", "5C"])
    assert not tally.add(shaken, ["JK", "5C"], ["KS", "5C"])
    assert tally.add(steady, ["AS"], ["AS"])
    out = tally.as_dict()
    assert (out["spreads"], out["points_exact"], out["cards_exact"]) == (3, round(2 / 3, 4), round(1 / 3, 4))
    assert out["by_camera"] == {
        "shaken": {"spreads": 1, "points_exact": 0.0},
        "steady": {"spreads": 2, "points_exact": 1.0},
    }
    assert out["wrong_by_design"] == {"proc25": 1}


def test_held_out_designs_are_chosen_by_name() -> None:
    assert held_out_designs("procedural") == list(HELD_OUT_DESIGNS)
    with pytest.raises(ValueError, match="procedural, themes, all"):
        held_out_designs("fancy")


class JokerMindingReader:
    """A reader that learns a token per frame of jokers and notes which it holds at each reading."""

    def __init__(self) -> None:
        self.jokers: object = None
        self.learnt: list[tuple[int, ...]] = []
        self.held: list[object] = []

    def learn_jokers(self, images: list[np.ndarray]) -> object:
        self.learnt.append(images[0].shape)
        return f"marks {len(self.learnt)}"

    def recognize(self, image_bgr: np.ndarray) -> list[PhysicalCard]:
        self.held.append(self.jokers)
        return []


def test_shown_jokers_are_each_scenes_own_designs() -> None:
    """With jokers shown, each design's jokers are learnt once from a full frame of them, and every
    scene is read holding its own design's marks; without, none are held."""
    from mayi_table.vision.evaluate import evaluate_scenes, evaluate_spreads, learn_held_out_jokers, scene_seed
    from mayi_table.vision.render.scene import render_spread, render_table

    reader = JokerMindingReader()
    designs = list(HELD_OUT_DESIGNS[:3])
    marks = learn_held_out_jokers(reader, designs)
    assert reader.learnt == [(1080, 1920, 3)] * 3
    assert marks == {d.name: f"marks {i + 1}" for i, d in enumerate(designs)}
    evaluate_spreads(reader, 4, seed=5, designs=designs, jokers=marks)  # type: ignore[arg-type]
    evaluate_scenes(reader, 2, seed=6, designs=designs, jokers=marks)  # type: ignore[arg-type]
    expected = [marks[render_spread(scene_seed(5, n), designs)[0].design] for n in range(4)]
    expected += [marks[render_table(scene_seed(6, n), designs).design] for n in range(2)]
    assert reader.held == expected
    reader.held.clear()
    reader.jokers = None
    evaluate_spreads(reader, 2, seed=5, designs=designs)
    assert reader.held == [None, None]
