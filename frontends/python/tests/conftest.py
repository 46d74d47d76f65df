"""The frontend's tests import it and pacta2a from this checkout, and the
package tests' fake pactd (fakepactd.py) from there."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "frontends" / "pacta2a-py" / "tests"))
sys.path.insert(0, str(REPO / "frontends" / "pacta2a-py" / "src"))
sys.path.insert(0, str(REPO / "frontends" / "python"))
