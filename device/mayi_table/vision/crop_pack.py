"""Carry index-classifier crops to a training machine as one file, and lay them out again there.

A lent GPU machine receives at most 64 MiB, and an index build is some 200,000 small JPEGs: a zip's
per-file headers alone would take a third of that. `pack_crops` merges one or more builds of
`mayi-table dataset --stage index` (`<build>/{train,val}/<class>/*.jpg`) into one NumPy archive of
WebP-encoded crops (training crops at a lower quality than validation ones, which measure), each named
after its build so that two builds' scene numbers do not collide; `unpack_crops` writes them back as
the folder layout Ultralytics classification reads. The archive holds plain arrays only (no pickles).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

SPLITS = ("train", "val")
CROP_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp"}
TRAIN_QUALITY = 50  # WebP quality of training crops (median PSNR 35.7 dB against the 95-quality JPEGs)
VAL_QUALITY = 80  # ... and of validation crops, which score the run


class PackError(ValueError):
    """A build or an archive that cannot be packed or unpacked; the message says which and why."""


@dataclass(frozen=True)
class PackSummary:
    crops: dict[str, int]  # per split
    classes: int
    bytes: int


def list_crops(build: Path) -> list[tuple[str, str, Path]]:
    """(split, class, path) of every crop in one build."""
    if not all((build / split).is_dir() for split in SPLITS):
        raise PackError(f"{build}: not an index build (no train/ and val/ folders)")
    found = []
    for split in SPLITS:
        for folder in sorted(p for p in (build / split).iterdir() if p.is_dir()):
            for path in sorted(folder.iterdir()):
                if path.suffix.lower() in CROP_SUFFIXES:
                    found.append((split, folder.name, path))
    return found


def pack_crops(
    builds: Sequence[Path],
    out: Path,
    train_quality: int = TRAIN_QUALITY,
    val_quality: int = VAL_QUALITY,
    progress: Callable[[int], None] | None = None,
) -> PackSummary:
    """Write every crop of `builds` into the archive `out` (an .npz)."""
    if not builds:
        raise PackError("no builds to pack")
    if not (1 <= train_quality <= 100 and 1 <= val_quality <= 100):
        raise PackError(f"WebP quality {train_quality}/{val_quality}: give 1 to 100")
    if len({b.name for b in builds}) != len(builds):
        raise PackError(f"{', '.join(map(str, builds))}: two builds share a folder name, which names their crops")
    listed = [(build, list_crops(build)) for build in builds]
    classes = sorted({name for _, crops in listed for _, name, _ in crops})
    if not classes:
        raise PackError(f"{', '.join(map(str, builds))}: no crops")
    class_index = {name: i for i, name in enumerate(classes)}
    chunks: list[bytes] = []
    names, splits, labels = [], [], []
    for build, crops in listed:
        for split, name, path in crops:
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is None:
                raise PackError(f"{path}: not a readable image")
            quality = train_quality if split == "train" else val_quality
            ok, encoded = cv2.imencode(".webp", image, [cv2.IMWRITE_WEBP_QUALITY, quality])
            if not ok:
                raise PackError(f"{path}: could not be encoded as WebP")
            chunks.append(encoded.tobytes())
            names.append(f"{build.name}_{path.stem}")
            splits.append(SPLITS.index(split))
            labels.append(class_index[name])
            if progress:
                progress(1)
    offsets = np.cumsum([0] + [len(c) for c in chunks], dtype=np.int64)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        np.savez_compressed(  # the WebP bytes do not shrink; the names and offsets do, to a tenth
            f,
            classes=np.array(classes, dtype="S"),
            names=np.array(names, dtype="S"),
            split=np.array(splits, np.uint8),
            label=np.array(labels, np.int16),
            offsets=offsets,
            blob=np.frombuffer(b"".join(chunks), np.uint8),
        )
    counts = {s: splits.count(k) for k, s in enumerate(SPLITS)}
    return PackSummary(counts, len(classes), out.stat().st_size)


def open_pack(pack: Path) -> dict[str, np.ndarray]:
    """An archive's arrays, checked: `names`, `split`, `label` per crop, `classes`, and the crops'
    WebP bytes (`blob`) cut at `offsets`."""
    try:
        with np.load(pack, allow_pickle=False) as z:
            arrays = {key: z[key] for key in ("classes", "names", "split", "label", "offsets", "blob")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise PackError(f"{pack}: not a crop pack ({e})") from None
    n = len(arrays["names"])
    if not (len(arrays["split"]) == len(arrays["label"]) == n and len(arrays["offsets"]) == n + 1):
        raise PackError(f"{pack}: its arrays disagree on how many crops it holds")
    if n and (arrays["offsets"][-1] != len(arrays["blob"]) or np.any(np.diff(arrays["offsets"]) <= 0)):
        raise PackError(f"{pack}: truncated or damaged (crop offsets do not fit its data)")
    if n and (arrays["label"].min() < 0 or arrays["label"].max() >= len(arrays["classes"])):
        raise PackError(f"{pack}: a crop's class is not among its classes")
    if n and arrays["split"].max() >= len(SPLITS):
        raise PackError(f"{pack}: a crop's split is neither train nor val")
    return arrays


def unpack_crops(
    arrays: dict[str, np.ndarray], out: Path, progress: Callable[[int], None] | None = None
) -> dict[str, int]:
    """Write an opened archive's crops to `out/{train,val}/<class>/<name>.webp`; the count per split.
    Every class gets its folders in both splits, as the builds had them."""
    classes = [c.decode() for c in arrays["classes"]]
    for split in SPLITS:
        for name in classes:
            (out / split / name).mkdir(parents=True, exist_ok=True)
    blob, offsets = arrays["blob"], arrays["offsets"]
    counts = dict.fromkeys(SPLITS, 0)
    for k, (name, split, label) in enumerate(zip(arrays["names"], arrays["split"], arrays["label"])):
        split_name = SPLITS[int(split)]
        path = out / split_name / classes[int(label)] / f"{name.decode()}.webp"
        path.write_bytes(blob[offsets[k] : offsets[k + 1]].tobytes())
        counts[split_name] += 1
        if progress:
            progress(1)
    return counts
