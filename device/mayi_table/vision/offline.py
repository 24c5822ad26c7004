"""Keep Ultralytics fully offline: no downloads, no auto-installs, no settings outside the project.

Call `prepare_ultralytics()` before the first `import ultralytics` anywhere in the process: Ultralytics
reads these environment variables once, at import. The fonts it would otherwise download for plots
(`Arial.ttf`, `Arial.Unicode.ttf`) are copied from the system's DejaVu Sans into the config folder, so
even a plotting code path finds them locally; still pass `plots=False` when training or validating.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# the repository root (device/mayi_table/vision/offline.py -> parents[3])
PROJECT_ROOT = Path(__file__).resolve().parents[3]
REPO_ROOT = PROJECT_ROOT  # alias
MODELS_DIR = PROJECT_ROOT / "vision_models"
DEFAULT_CONFIG_DIR = MODELS_DIR / "ultralytics_config"
SYSTEM_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
FONT_NAMES: tuple[str, ...] = ("Arial.ttf", "Arial.Unicode.ttf")


def prepare_ultralytics(config_dir: Path | None = None, font: Path = SYSTEM_FONT) -> Path:
    """Set Ultralytics' offline environment and create its config folder with local fonts; return the folder.

    Safe to call repeatedly. Warns (on stderr) if Ultralytics was already imported, since the variables
    then come too late for the settings it read at import.
    """
    folder = Path(config_dir) if config_dir is not None else DEFAULT_CONFIG_DIR
    # Ultralytics keeps settings.json and looks for fonts in the "Ultralytics" folder under YOLO_CONFIG_DIR
    for place in (folder, folder / "Ultralytics"):
        place.mkdir(parents=True, exist_ok=True)
        for name in FONT_NAMES:
            target = place / name
            if not target.exists() and font.is_file():
                shutil.copyfile(font, target)
    wanted = {
        "YOLO_OFFLINE": "1",  # ultralytics.utils.is_online() -> False, so nothing is fetched
        "YOLO_AUTOINSTALL": "0",  # check_requirements() warns instead of running pip
        "YOLO_CONFIG_DIR": str(folder),  # settings.json and fonts live here, not in ~/.config
    }
    changed = any(os.environ.get(k) != v for k, v in wanted.items())
    os.environ.update(wanted)
    if changed and "ultralytics" in sys.modules:
        print(
            "warning: ultralytics was imported before prepare_ultralytics(); its offline settings may not apply",
            file=sys.stderr,
        )
    return folder
