"""`mayi-table recognize IMAGE... [--json] [--annotate DIR] [--backend B] [--model DIR]`.

`recognize` is a plain typer-annotated function; the `mayi-table` app registers it as a command
(`app.command()(recognize)`), and `python -m mayi_table.vision.recognize_cli` runs it on its own.

Exit status: 0 when every image was read, 1 when any image failed (the others are still processed),
2 when the model or the jokers file cannot be used (missing folder or file, unreadable, unknown backend).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List

import typer

from .detect import BACKENDS, ModelError
from .jokers import JokerMarksError
from .offline import MODELS_DIR

DEFAULT_MODEL_DIR = Path(os.environ.get("MAYI_TABLE_MODELS", str(MODELS_DIR)))
_KEEP_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}


def _error(message: str) -> None:
    typer.echo(f"error: {message}", err=True)


def _annotated_path(folder: Path, image: Path, taken: set[Path]) -> Path:
    suffix = image.suffix.lower() if image.suffix.lower() in _KEEP_SUFFIXES else ".png"
    path = folder / f"{image.stem}.cards{suffix}"
    n = 2
    while path in taken:
        path = folder / f"{image.stem}.cards-{n}{suffix}"
        n += 1
    taken.add(path)
    return path


def recognize(
    images: List[Path] = typer.Argument(
        ..., metavar="IMAGE...", help="Photos or camera frames (JPEG, PNG; EXIF orientation is applied)."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object per image: {image, cards: [{card, confidence, box, orientation}]}."
    ),
    annotate: Path | None = typer.Option(
        None, "--annotate", metavar="DIR", help="Write each image with its cards' boxes and names drawn into DIR."
    ),
    backend: str = typer.Option("onnx", "--backend", help=f"Detector runtime: {', '.join(BACKENDS)}."),
    model: Path = typer.Option(
        DEFAULT_MODEL_DIR, "--model", help="Model folder (corners.onnx, corners_ncnn_model/, corners.pt, model.yaml)."
    ),
    conf: float | None = typer.Option(None, "--conf", min=0.0, max=1.0, help="Corner confidence threshold."),
    four_index: bool | None = typer.Option(
        None,
        "--four-index/--two-index",
        help="The deck prints its index in all four corners, or in two (default: as each image shows it).",
    ),
    deshake: bool = typer.Option(
        True, "--deshake/--no-deshake", help="Read an image blurred by a shaken camera in a sharpened copy too."
    ),
    jokers: Path | None = typer.Option(
        None, "--jokers", metavar="FILE", help="The deck's own jokers, as `mayi-table learn-jokers` wrote them."
    ),
    tens_reader: bool = typer.Option(
        True,
        "--tens-reader/--no-tens-reader",
        help="Ask the model folder's tens reader (index_tens) where the classifier is unsure, when it has one.",
    ),
) -> None:
    """Recognise the cards in photos: one line per image (boxes in pixels of the upright image)."""
    from .recognize import ImageLoadError, Recognizer, card_record, load_image
    from .recognize import annotate as draw

    if backend not in BACKENDS:
        _error(f"unknown backend {backend!r} (choose one of {', '.join(BACKENDS)})")
        raise typer.Exit(2)
    try:
        recognizer = Recognizer(
            model, backend, conf=conf, four_index=four_index, deshake=deshake, jokers=jokers, tens_reader=tens_reader
        )
    except (ModelError, JokerMarksError) as e:
        _error(str(e))
        raise typer.Exit(2) from None
    if annotate is not None:
        try:
            annotate.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            _error(f"cannot create the annotation folder {annotate}: {e.strerror or e}")
            raise typer.Exit(2) from None
    failed = 0
    taken: set[Path] = set()
    for path in images:
        try:
            image = load_image(path)
            cards = recognizer.recognize(image)
        except ImageLoadError as e:
            message = str(e)
        except ModelError as e:
            message = f"{path}: {e}"
        except Exception as e:  # noqa: BLE001 - one bad image must not stop the others or print a traceback
            message = f"{path}: recognition failed ({type(e).__name__}: {e})"
        else:
            message = ""
        if message:
            failed += 1
            _error(message)
            if as_json:
                typer.echo(json.dumps({"image": str(path), "error": message}, ensure_ascii=False))
            continue
        if annotate is not None:
            import cv2

            out = _annotated_path(annotate, path, taken)
            try:
                ok = bool(cv2.imwrite(str(out), draw(image, cards)))
            except cv2.error:
                ok = False
            if not ok:
                failed += 1
                _error(f"cannot write the annotated image {out}")
        if as_json:
            record = {"image": str(path), "cards": [card_record(c) for c in cards]}
            typer.echo(json.dumps(record, ensure_ascii=False))
        else:
            names = " ".join(c.card for c in cards)
            typer.echo(f"{path}: {len(cards)} card{'s' if len(cards) != 1 else ''}" + (f": {names}" if cards else ""))
    if failed:
        raise typer.Exit(1)


def main() -> None:
    """Run `recognize` as a command of its own."""
    typer.run(recognize)


if __name__ == "__main__":
    main()
