import sys
from pathlib import Path

# the tests import the package from the source tree as well as from an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))
