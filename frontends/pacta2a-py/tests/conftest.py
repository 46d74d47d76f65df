"""The package's tests import pacta2a from this checkout; their shared world
(a live pactd, a PA, Brands, the served middleware) is in pactworld.py,
whose fixtures are registered here. Test files import helpers from
pactworld, never from conftest (another folder's conftest may hold that
name when pytest runs several folders)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from pactworld import pactd, server, srv, world  # noqa: E402,F401  (fixtures)
