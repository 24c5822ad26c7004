"""Camera shake: find a frame's motion streak from its spectrum, and a sharpened copy of the frame.

A camera moved during the exposure smears every point of the frame into one short straight streak,
and an 18 px index into a smear. The streak multiplies the frame's spectrum by its own transfer
function: frequencies along the streak fall away, in a sinc with zeros every 1/length, while those
across it stay. So the streak shows in the frame's power spectrum (averaged over windowed patches,
the noise floor included) as a loss along one direction that no sharp frame has, and its length
and direction are the streak's whose transfer function best explains that loss. A frame so found
shaken is sharpened by Wiener deconvolution against that streak; the classifier then reads each
index it is unsure of in the frame and in the sharpened copy together (classify.py), so a streak
guessed a pixel long or short, or a steady frame taken for shaken, costs little.

Measured on rendered held-out tables and the real photos (the model card, "Next runs").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

PATCH = 256  # the spectrum's window, px; tiles overlap by half
# fewer tiles make too rough a spectrum: a 504 x 378 photo's two took a sharp one for shaken
# (the real photos); an 800 x 600 hand spread has 15, a 1080p frame 98
MIN_TILES = 12
LENGTHS = tuple(range(2, 10))  # streaks tried, px
ANGLE_STEP = 3  # degrees between the directions tried
BAND = (0.03, 0.3)  # frequencies fitted, cycles/px: below, the table's layout; above, mostly JPEG's loss
NOISE_PERCENTILES = (1, 5, 10, 20, 30)  # the noise floor is fitted too, among these levels of the spectrum
# A streak must explain the spectrum this much better than no streak (mean squared log error);
# near the frame's axes more, since JPEG's 8x8 blocks and a tilted camera's foreshortening soften a
# steady frame along them (chosen on the tables of seeds 1234, 5000 and 6000: no steady one flagged)
MIN_STRENGTH = 0.2
AXIS_MIN_STRENGTH = 0.5
AXIS_DEGREES = 10
# A small frame's spectrum, from few tiles, is rough, and a hand spread's few upright cards soften it
# along their long edges (steady spreads were taken for 6-9 px streaks within 30 degrees of upright):
# under SMALL_FRAME_TILES tiles a streak must explain it by SMALL_FRAME_MIN_STRENGTH in any direction
# (chosen on the spreads of seeds 5001 and 6001: the calls under it cost more spreads than they saved)
SMALL_FRAME_TILES = 40
SMALL_FRAME_MIN_STRENGTH = 1.0
WIENER_K = 0.02  # the deconvolution's noise-to-signal ratio (chosen on the same tables)
TILE_BATCH, CANDIDATE_BATCH = 4, 64  # worked through a batch at a time, to keep the memory small


@dataclass(frozen=True)
class Shake:
    """A camera-shake streak: its length (px), direction (degrees, as `cv2.getRotationMatrix2D`
    turns a horizontal streak, y down) and how much better it explains the spectrum than none."""

    length: int
    angle: float
    strength: float


def streak_kernel(length: int, angle: float) -> np.ndarray:
    """A straight streak `length` px long turned by `angle` degrees: a length x length kernel summing to 1."""
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), angle, 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    return np.asarray(kernel / max(float(kernel.sum()), 1e-6), np.float32)


def point_spread(kernel: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """What `cv2.filter2D(image, -1, kernel)` does to an image, as a convolution's point spread on a
    frame-sized grid for a transfer function: filter2D correlates about the kernel's centre element
    (k // 2), so the spread is the kernel flipped, with its element k - 1 - k // 2 at the origin."""
    k = kernel.shape[0]
    grid = np.zeros(shape, np.float32)
    grid[:k, :k] = kernel[::-1, ::-1]
    origin = k - 1 - k // 2
    return np.roll(grid, (-origin, -origin), axis=(0, 1))


class _Models:
    """Each candidate streak's squared transfer function on the fitted band, and its mean per radius."""

    def __init__(self) -> None:
        # the half plane of a real FFT (a real image's spectrum is symmetric)
        fy, fx = np.meshgrid(np.fft.fftfreq(PATCH), np.fft.rfftfreq(PATCH), indexing="ij")
        radius = np.hypot(fx, fy)
        axis = (np.abs(fx) < 1.5 / PATCH) | (np.abs(fy) < 1.5 / PATCH)  # JPEG's block lines, the frame's edges
        self.band = (radius > BAND[0]) & (radius < BAND[1]) & ~axis
        self.rbin = np.minimum((radius[self.band] * PATCH).astype(np.int64), PATCH // 2)
        self.bins = PATCH // 2 + 1
        self.count = np.maximum(np.bincount(self.rbin, minlength=self.bins), 1)
        self.candidates: list[tuple[int, int]] = [(1, 0)] + [(n, a) for n in LENGTHS for a in range(0, 180, ANGLE_STEP)]
        self.h2 = np.ones((len(self.candidates), int(self.band.sum())), np.float32)  # (candidates, band)
        for row, (n, a) in enumerate(self.candidates[1:], start=1):
            self.h2[row] = (np.abs(np.fft.rfft2(point_spread(streak_kernel(n, a), (PATCH, PATCH)))) ** 2)[self.band]
        self.h2_radial = np.stack([self.radial(h) for h in self.h2]).astype(np.float32)  # (candidates, radii)

    def radial(self, values: np.ndarray) -> np.ndarray:
        return (np.bincount(self.rbin, values, minlength=self.bins) / self.count).astype(np.float32)


@lru_cache(maxsize=1)
def _models() -> _Models:
    return _Models()


def power_spectrum(gray: np.ndarray) -> np.ndarray:
    """The mean power spectrum (half plane) of the frame's half-overlapping Hann-windowed PATCH x PATCH tiles."""
    window = np.outer(np.hanning(PATCH), np.hanning(PATCH)).astype(np.float32)
    h, w = gray.shape
    corners = [(y, x) for y in range(0, h - PATCH + 1, PATCH // 2) for x in range(0, w - PATCH + 1, PATCH // 2)]
    total = np.zeros((PATCH, PATCH // 2 + 1), np.float64)
    for start in range(0, len(corners), TILE_BATCH):
        tiles = np.stack([gray[y : y + PATCH, x : x + PATCH] for y, x in corners[start : start + TILE_BATCH]])
        tiles = tiles.astype(np.float32)
        tiles = (tiles - tiles.mean(axis=(1, 2), keepdims=True)) * window
        total += (np.abs(np.fft.rfft2(tiles)) ** 2).sum(axis=0)
    return total / len(corners)


def tile_count(height: int, width: int) -> int:
    """How many PATCH x PATCH tiles `power_spectrum` averages over a frame of this size."""
    step = PATCH // 2
    return max(0, (height - PATCH) // step + 1) * max(0, (width - PATCH) // step + 1)


def needed_strength(tiles: int, angle: float) -> float:
    """How much better than no streak a streak at `angle` must explain a spectrum of `tiles` tiles."""
    if tiles < SMALL_FRAME_TILES:
        return SMALL_FRAME_MIN_STRENGTH
    near_axis = min(angle % 90, 90 - angle % 90) <= AXIS_DEGREES
    return AXIS_MIN_STRENGTH if near_axis else MIN_STRENGTH


def find_shake(image_bgr: np.ndarray) -> Shake | None:
    """The camera-shake streak of a frame, or None for a steady one (or one too small to tell)."""
    tiles = tile_count(*image_bgr.shape[:2])
    if image_bgr.ndim != 3 or tiles < MIN_TILES:
        return None
    m = _models()
    spectrum = power_spectrum(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY))[m.band].astype(np.float32) + 1e-6
    radial = m.radial(spectrum)
    log_spectrum = np.log(spectrum)
    errors = np.full(len(m.candidates), np.inf, np.float32)
    for noise in np.percentile(spectrum, NOISE_PERCENTILES).astype(np.float32):
        # each candidate: the streak's loss times an isotropic sharp spectrum fitted per radius, plus noise
        level = np.maximum(radial - noise, 1e-6 * radial.max()) / np.maximum(m.h2_radial, 1e-6)
        for start in range(0, len(m.candidates), CANDIDATE_BATCH):
            rows = slice(start, start + CANDIDATE_BATCH)
            predicted = m.h2[rows] * level[rows][:, m.rbin] + noise
            fit = ((log_spectrum - np.log(predicted)) ** 2).mean(axis=1)
            errors[rows] = np.minimum(errors[rows], fit)
    best = int(np.argmin(errors[1:])) + 1
    length, angle = m.candidates[best]
    strength = float(errors[0] - errors[best])
    if strength < needed_strength(tiles, angle):
        return None
    return Shake(length, float(angle), strength)


def sharpen(image_bgr: np.ndarray, shake: Shake, k: float = WIENER_K) -> np.ndarray:
    """The frame deconvolved against the streak (Wiener filter), as BGR uint8."""
    h, w = image_bgr.shape[:2]
    transfer = np.fft.rfft2(point_spread(streak_kernel(shake.length, shake.angle), (h, w))).astype(np.complex64)
    gain = np.conj(transfer) / (np.abs(transfer) ** 2 + np.float32(k))
    del transfer
    out = np.empty(image_bgr.shape, np.uint8)
    for c in range(image_bgr.shape[2]):
        channel = np.fft.irfft2(np.fft.rfft2(image_bgr[..., c].astype(np.float32)) * gain, s=(h, w))
        out[..., c] = np.clip(channel, 0, 255)
    return out
