"""`mayi-table learn-jokers`: show the device the deck's own jokers once (see vision/jokers.py).

The jokers lie face up on the empty table; the configured camera (or `--frame` photos of them) gives
the frame, the recogniser keeps every joker mark it finds, draws them on a picture to check, and
writes them to the config's `reading.jokers` file, which the device reads when it starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .calibrate import frames_for, grab_frame
from .config import ConfigError, DeviceConfig, load_config


def draw_marks(image: np.ndarray, boxes: Sequence[tuple[float, float, float, float]]) -> np.ndarray:
    """The frame with each learnt mark boxed."""
    import cv2

    out = image.copy()
    for x1, y1, x2, y2 in boxes:
        cv2.rectangle(out, (int(x1), int(y1)), (int(x2), int(y2)), (0, 200, 255), 3)
        cv2.putText(out, "JK", (int(x1), max(0, int(y1) - 6)), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 200, 255), 2)
    return out


def learn_jokers_main(
    config_path: Path | str,
    frames: Sequence[Path] = (),
    out_picture: Path | str = "jokers.png",
    out: Path | None = None,
    dry_run: bool = False,
    *,
    echo: Callable[[str], None] = print,
    grab: Callable[[DeviceConfig], np.ndarray] = grab_frame,
) -> int:
    """Learn the jokers shown in `frames` (else one frame of the configured camera), save the picture
    with their marks boxed, and unless `dry_run` write the marks to `out` (default: the config's
    `reading.jokers`). Returns the exit code: 0 done, 2 the config, a frame, the model or the file
    could not be used, or no joker was found."""
    import cv2

    from .launch import _model_dir
    from .vision.detect import ModelError
    from .vision.jokers import JokerMarks
    from .vision.recognize import Recognizer

    try:
        config = load_config(config_path, skip_zones=True)
    except ConfigError as exc:
        echo(f"error: {exc}")
        return 2
    images = frames_for(config, frames, echo, grab)
    if images is None:
        return 2
    try:
        recognizer = Recognizer(
            _model_dir(config.detector.model_dir), config.detector.backend, threads=config.detector.threads
        )
        found = [recognizer.joker_marks(image) for image in images]
    except (ModelError, ValueError) as exc:
        echo(f"error: {exc}")
        return 2
    sources = [str(path) for path in frames] or ["the camera's frame"]
    for source, marks_here in zip(sources, found):
        if not marks_here:
            echo(f"error: no joker's mark found in {source}: lay the jokers face up, alone, where the camera sees them")
            return 2
    marks = JokerMarks.of([f for marks_here in found for _, f in marks_here], recognizer.classifier_id)
    echo(f"joker marks learnt: {len(marks.features)}")
    picture = draw_marks(images[0], [box for box, _ in found[0]])
    if not cv2.imwrite(str(out_picture), picture):
        echo(f"error: cannot write the picture {out_picture} (does its folder exist? is it .png or .jpg?)")
        return 2
    echo(f"picture with the marks boxed: {out_picture}")
    target = out or config.reading.jokers
    if dry_run:
        echo(f"dry run: {target} is unchanged")
        return 0
    try:
        marks.save(target)
    except OSError as exc:
        echo(f"error: cannot write {target}: {exc.strerror or exc}")
        return 2
    echo(f"wrote the deck's jokers to {target}; restart to use them: sudo systemctl restart mayi-table")
    return 0
