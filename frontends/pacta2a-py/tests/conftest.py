"""The package's tests import pacta2a from this checkout. Most run against
FakePactd (fakepactd.py); the live world (a pactd built from this
repository, pactworld.py) is for the few that need the real thing. Test
files import helpers from those modules, never from conftest (another
folder's conftest may hold that name when pytest runs several folders)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from fakepactd import fake  # noqa: E402,F401  (fixture)
from pactworld import pactd, world  # noqa: E402,F401  (fixtures)
