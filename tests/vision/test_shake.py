"""Camera shake found from a frame's spectrum, the frame sharpened against it, and indices read in both."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from mayi_table.vision.classes import Corner
from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.render.faces import HELD_OUT_DESIGNS
from mayi_table.vision.render.scene import render_spread, render_table
from mayi_table.vision.shake import (
    AXIS_MIN_STRENGTH,
    MIN_STRENGTH,
    SMALL_FRAME_MIN_STRENGTH,
    SMALL_FRAME_TILES,
    Shake,
    find_shake,
    needed_strength,
    sharpen,
    streak_kernel,
    tile_count,
)


@pytest.fixture(scope="module")
def sharp_table() -> np.ndarray:
    """A held-out table as a perfect camera sees it (no blur, noise or JPEG)."""
    return render_table(91, HELD_OUT_DESIGNS, spoil=False).image


def camera(image: np.ndarray, streak: tuple[int, float] | None, sigma: float = 0.0, quality: int = 75) -> np.ndarray:
    """What the renderer's camera does: Gaussian blur, a shake streak, sensor noise, then JPEG."""
    out = cv2.GaussianBlur(image, (0, 0), sigma) if sigma else image.copy()
    if streak:
        out = cv2.filter2D(out, -1, streak_kernel(*streak))
    noisy = out.astype(np.float32) + np.random.default_rng(5).normal(0, 3, out.shape)
    out = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR))


def angle_apart(a: float, b: float) -> float:
    d = abs(a - b) % 180
    return min(d, 180 - d)


def test_streak_kernel_is_a_turned_line_that_sums_to_one() -> None:
    flat = streak_kernel(5, 0)
    assert flat.shape == (5, 5) and flat.sum() == pytest.approx(1.0)
    assert np.count_nonzero(flat[2]) == 5 and np.count_nonzero(flat) == 5
    upright = streak_kernel(5, 90)
    assert np.allclose(upright, flat.T, atol=1e-6)


@pytest.mark.parametrize("streak", [(6, 40.0), (4, 120.0), (7, 3.0)])
def test_a_shaken_frame_is_found_with_its_streak(sharp_table: np.ndarray, streak: tuple[int, float]) -> None:
    """The renderer's camera-shake streaks (3-7 px at any angle) are found within a pixel and a few
    degrees, along the frame's axes too when they are long enough to be plain."""
    shake = find_shake(camera(sharp_table, streak))
    assert shake is not None
    assert abs(shake.length - streak[0]) <= 1
    assert angle_apart(shake.angle, streak[1]) <= 6
    assert shake.strength > 0


@pytest.mark.parametrize(("sigma", "quality"), [(0.0, 90), (1.2, 75), (0.5, 45)])
def test_a_steady_frame_is_not_taken_for_shaken(sharp_table: np.ndarray, sigma: float, quality: int) -> None:
    """Focus blur is the same in every direction and JPEG's blocks soften along the axes: neither is shake."""
    assert find_shake(camera(sharp_table, None, sigma, quality)) is None


@pytest.mark.parametrize("seed", [76, 143, 348])
def test_a_steady_hand_spread_is_not_taken_for_shaken(seed: int) -> None:
    """A hand spread's few upright cards soften its small frame's spectrum along their long edges:
    these steady spreads were taken for 7-9 px streaks near upright (strength 0.22-0.52), and their
    sharpened copies cost held-out spreads more often than they saved one (model card, "Next runs")."""
    scene, _ = render_spread(seed, HELD_OUT_DESIGNS)
    assert scene.spoil.shake_px == 0 and tile_count(*scene.image.shape[:2]) < SMALL_FRAME_TILES
    assert find_shake(scene.image) is None


@pytest.mark.parametrize(("seed", "streak"), [(5, (7, 40.0)), (348, (6, 95.0))])
def test_a_plainly_shaken_hand_spread_is_still_found(seed: int, streak: tuple[int, float]) -> None:
    scene, _ = render_spread(seed, HELD_OUT_DESIGNS)
    shake = find_shake(camera(scene.image, streak))
    assert shake is not None and shake.strength >= SMALL_FRAME_MIN_STRENGTH
    assert abs(shake.length - streak[0]) <= 1
    assert angle_apart(shake.angle, streak[1]) <= 6


def test_a_small_frame_needs_a_plainer_streak_in_every_direction() -> None:
    """A 1080p frame (98 tiles) keeps the thresholds chosen on the tuning tables; an 800 x 600 hand
    spread (15 tiles) needs more, along the axes or not."""
    assert tile_count(1080, 1920) == 98 and tile_count(600, 800) == 15
    assert needed_strength(98, 40.0) == MIN_STRENGTH
    assert needed_strength(98, 95.0) == AXIS_MIN_STRENGTH
    assert needed_strength(15, 40.0) == needed_strength(15, 95.0) == SMALL_FRAME_MIN_STRENGTH > AXIS_MIN_STRENGTH


def test_frames_too_small_to_tell_are_not_checked() -> None:
    small = np.random.default_rng(1).integers(0, 255, (200, 300, 3), dtype=np.uint8)
    assert find_shake(small) is None
    assert find_shake(small[..., 0]) is None


def test_sharpening_brings_a_shaken_frame_back_towards_the_sharp_one(sharp_table: np.ndarray) -> None:
    """The deconvolution undoes the streak as the renderer draws it (`cv2.filter2D`), in place: a
    pixel's shift or a flipped streak would leave half the error. (With sensor noise the copy is
    sharper but noisier; the classifier, which reads it beside the frame, is what it serves.)"""
    shaken = cv2.filter2D(sharp_table, -1, streak_kernel(6, 40.0))
    sharpened = sharpen(shaken, Shake(6, 40.0, 1.0))
    assert sharpened.shape == shaken.shape and sharpened.dtype == np.uint8
    inner = (slice(20, -20), slice(20, -20))  # the deconvolution wraps round the frame's edges

    def error(image: np.ndarray) -> float:
        return float(np.mean((image[inner].astype(np.float32) - sharp_table[inner].astype(np.float32)) ** 2))

    assert error(sharpened) < 0.6 * error(shaken)


def test_indices_are_read_in_the_frame_and_its_sharpened_copy_alike() -> None:
    """With a sharpened copy, an index the frame alone reads unsurely is read as the mean of its
    readings in both images; a sure one as the frame alone reads it."""
    if not (MODELS_DIR / "index.onnx").exists():
        pytest.skip("no index classifier committed under vision_models/ yet")
    from mayi_table.vision.classify import SURE_ALONE, IndexClassifier, index_views

    scene = render_table(77, HELD_OUT_DESIGNS)
    boxes = [b for _, b in scene.corner_boxes()]
    reader = IndexClassifier(MODELS_DIR, "onnx")
    frame = cv2.GaussianBlur(scene.image, (0, 0), 2.5)  # blurred: some readings unsure
    other = scene.image
    alone = reader.read(frame, boxes)
    twice = reader.read(frame, boxes, frame)  # the same image again: the same reading
    assert [r[0] for r in twice] == [r[0] for r in alone]
    assert [r[1] for r in twice] == pytest.approx([r[1] for r in alone], abs=1e-5)
    sure = unsure = 0
    for box, (name, p, _) in zip(boxes, reader.read(frame, boxes, other)):
        own = np.mean([reader.probabilities(v) for v in index_views(frame, box, reader.size)], axis=0)
        if own.max() >= SURE_ALONE:  # a sure reading stands alone
            mean, sure = own, sure + 1
        else:
            views = index_views(frame, box, reader.size) + index_views(other, box, reader.size)
            mean, unsure = np.mean([reader.probabilities(v) for v in views], axis=0), unsure + 1
        assert name == reader.names[int(np.argmax(mean))] and p == pytest.approx(float(mean.max()), abs=1e-5)
    assert sure and unsure
    corners = [Corner("AS", 0.5, b) for b in boxes]
    assert [c.card for c in reader.name_corners(scene.image, corners, sharpened=scene.image)] == [
        c.card for c in reader.name_corners(scene.image, corners)
    ]


def test_the_recogniser_reads_a_shaken_frame_in_its_sharpened_copy(
    sharp_table: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a frame found shaken is sharpened, and only when the recogniser is asked to."""
    if not (MODELS_DIR / "index.onnx").exists():
        pytest.skip("no models committed under vision_models/ yet")
    from mayi_table.vision.classify import IndexClassifier
    from mayi_table.vision.recognize import Recognizer

    seen: list[bool] = []
    real = IndexClassifier.name_corners

    def spy(self, image, corners, min_confidence=0.45, sharpened=None, jokers=None):  # type: ignore[no-untyped-def]
        seen.append(sharpened is not None)
        return real(self, image, corners, min_confidence, sharpened, jokers)

    monkeypatch.setattr(IndexClassifier, "name_corners", spy)
    shaken, steady = camera(sharp_table, (6, 40.0)), camera(sharp_table, None)
    reader = Recognizer(MODELS_DIR, "onnx")
    assert reader.recognize(shaken) and reader.recognize(steady)
    Recognizer(MODELS_DIR, "onnx", deshake=False).recognize(shaken)
    assert seen == [True, False, False]


def test_the_device_reads_shaken_frames_as_its_config_says() -> None:
    """`reading.deshake` reaches the recogniser the device runs."""
    if not (MODELS_DIR / "index.onnx").exists():
        pytest.skip("no models committed under vision_models/ yet")
    from mayi_table.launch import load_recognizer

    assert load_recognizer(MODELS_DIR, "onnx").reader.deshake is True  # type: ignore[attr-defined]
    assert load_recognizer(MODELS_DIR, "onnx", deshake=False).reader.deshake is False  # type: ignore[attr-defined]
