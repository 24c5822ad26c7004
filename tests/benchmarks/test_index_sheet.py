"""The index sheet (`benchmarks/index_sheet.py`): one tile per visible index, each named as it is."""

from __future__ import annotations

import random

import numpy as np

from mayi_table.vision.offline import MODELS_DIR
from mayi_table.vision.recognize import Recognizer
from mayi_table.vision.render.faces import TRAIN_DESIGNS
from mayi_table.vision.render.scene import draw_scene, layout_game

from .scripts import load_benchmark


def test_each_visible_index_gets_a_tile_with_its_card_and_reading() -> None:
    sheet = load_benchmark("index_sheet")
    rng = random.Random(5)
    scene = draw_scene(layout_game(rng)[:8], TRAIN_DESIGNS[0], rng, spoil=False, tilt_deg=0.0, size=(960, 720))
    visible = sum(q is not None for label in scene.labels for q in label.corners)
    tiles = sheet.tiles(Recognizer(MODELS_DIR, "onnx", threads=1), scene)
    assert visible > 0 and len(tiles) == visible
    assert all(t.shape == (sheet.TILE, sheet.TILE, 3) and t.dtype == np.uint8 for t in tiles)
    # a clean, steady render of a training design: most indices are read right (a green reading)
    green = sum(bool(((t[-14:, :, 1] > 100) & (t[-14:, :, 0] < 80) & (t[-14:, :, 2] < 80)).any()) for t in tiles)
    assert green >= visible // 2
