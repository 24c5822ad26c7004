"""Index builds carried to a training machine as one archive and laid out again there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from mayi_table.vision.crop_pack import PackError, list_crops, open_pack, pack_crops, unpack_crops


def _crop(seed: int) -> np.ndarray:
    """A 64 px crop with a dark mark on a light card, different per seed."""
    rng = np.random.default_rng(seed)
    image = np.full((64, 64, 3), 230, np.uint8)
    x, y = (int(v) for v in rng.integers(8, 40, 2))
    cv2.putText(image, str(seed % 10), (x, y + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (20, 20, 160), 2)
    return image


def _build(root: Path, crops: dict[tuple[str, str], int]) -> Path:
    """An index build as `mayi-table dataset --stage index` lays it out: crops[(split, class)] files."""
    seed = 0
    for (split, name), count in crops.items():
        folder = root / split / name
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(count):
            seed += 1
            cv2.imwrite(
                str(folder / f"s{seed:05d}_{k:03d}.jpg"), _crop(seed + len(root.name)), [cv2.IMWRITE_JPEG_QUALITY, 95]
            )
    (root / "val").mkdir(exist_ok=True)
    return root


def test_two_builds_pack_into_one_archive_and_unpack_as_one_class_layout(tmp_path: Path) -> None:
    a = _build(tmp_path / "index-wide", {("train", "10H"): 3, ("train", "none"): 2, ("val", "10H"): 1})
    b = _build(tmp_path / "index-more", {("train", "10H"): 2, ("train", "JK"): 2, ("val", "JK"): 1})
    summary = pack_crops([a, b], tmp_path / "crops.npz", train_quality=50, val_quality=80)
    assert summary.crops == {"train": 9, "val": 2} and summary.classes == 3

    counts = unpack_crops(open_pack(tmp_path / "crops.npz"), tmp_path / "out")
    assert counts == {"train": 9, "val": 2}
    out = tmp_path / "out"
    # every class has its folder in both splits (Ultralytics wants the same classes in each)
    assert (
        {p.name for p in (out / "train").iterdir()}
        == {p.name for p in (out / "val").iterdir()}
        == {"10H", "JK", "none"}
    )
    # each crop kept its split and class, named after its build so that the two builds' s00001 stay two
    for build in (a, b):
        for split, name, path in list_crops(build):
            carried = out / split / name / f"{build.name}_{path.stem}.webp"
            assert carried.is_file(), carried
            original, decoded = cv2.imread(str(path)), cv2.imread(str(carried))
            assert decoded.shape == original.shape
            assert cv2.PSNR(original, decoded) > 28  # WebP at 50-80 keeps a crop readable
    assert len(list(out.rglob("*.webp"))) == 11


def test_archives_too_big_for_one_transfer_unpack_into_one_layout(tmp_path: Path) -> None:
    """Builds over one transfer's size travel as two archives, unpacked one after the other into the
    same folder: the layout then holds both, as one archive of all the builds would."""
    a = _build(tmp_path / "index-wide", {("train", "10H"): 3, ("val", "10H"): 1})
    b = _build(tmp_path / "index-crowd", {("train", "10H"): 2, ("train", "JK"): 2, ("val", "JK"): 1})
    pack_crops([a], tmp_path / "first.npz", train_quality=50, val_quality=80)
    pack_crops([b], tmp_path / "second.npz", train_quality=50, val_quality=80)
    assert unpack_crops(open_pack(tmp_path / "first.npz"), tmp_path / "two") == {"train": 3, "val": 1}
    assert unpack_crops(open_pack(tmp_path / "second.npz"), tmp_path / "two") == {"train": 4, "val": 1}
    pack_crops([a, b], tmp_path / "all.npz", train_quality=50, val_quality=80)
    unpack_crops(open_pack(tmp_path / "all.npz"), tmp_path / "one")
    layout = {
        folder: sorted(p.relative_to(tmp_path / folder) for p in (tmp_path / folder).rglob("*"))
        for folder in ("two", "one")
    }
    assert layout["two"] == layout["one"] and len([p for p in layout["one"] if p.suffix == ".webp"]) == 9


def test_a_damaged_archive_or_a_folder_that_is_no_build_is_refused_by_name(tmp_path: Path) -> None:
    build = _build(tmp_path / "index-a", {("train", "5C"): 2, ("val", "5C"): 1})
    with pytest.raises(PackError, match="not an index build"):
        pack_crops([tmp_path / "elsewhere"], tmp_path / "x.npz")
    with pytest.raises(PackError, match="share a folder name"):
        pack_crops([build, build], tmp_path / "x.npz")
    pack = tmp_path / "a.npz"
    pack_crops([build], pack)
    data = pack.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(PackError, match="cut.npz"):
        open_pack(tmp_path / "cut.npz")
    (tmp_path / "text.npz").write_text("not an archive")
    with pytest.raises(PackError, match="not a crop pack"):
        open_pack(tmp_path / "text.npz")


def test_pack_and_unpack_commands_round_trip_and_fail_clearly(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mayi_table.cli", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ),
        )

    build = _build(tmp_path / "index-b", {("train", "QS"): 2, ("val", "QS"): 1})
    res = cli("pack-crops", str(build), "--out", str(tmp_path / "b.npz"))
    assert res.returncode == 0 and "2 train, 1 val crops of 1 classes" in res.stdout, res.stderr
    res = cli("unpack-crops", str(tmp_path / "b.npz"), "--out", str(tmp_path / "data"))
    assert res.returncode == 0 and len(list((tmp_path / "data").rglob("*.webp"))) == 3, res.stderr

    (tmp_path / "junk.npz").write_text("junk")
    for args, words in (
        (
            ("pack-crops", str(tmp_path / "nowhere"), "--out", str(tmp_path / "c.npz")),
            ("nowhere", "not an index build"),
        ),
        (("pack-crops", str(build), "--out", str(tmp_path / "c.npz"), "--train-quality", "0"), ("quality", "1 to 100")),
        (("unpack-crops", str(tmp_path / "gone.npz"), "--out", str(tmp_path / "d")), ("gone.npz", "does not exist")),
        (("unpack-crops", str(tmp_path / "junk.npz"), "--out", str(tmp_path / "d")), ("junk.npz", "not a crop pack")),
    ):
        res = cli(*args)
        out = (res.stdout + res.stderr).strip()
        assert res.returncode == 2 and "Traceback" not in out and all(w in out for w in words), out
    assert not (tmp_path / "c.npz").exists() and not (tmp_path / "d").exists()
