"""Where the vendor-shaped fixtures live: the demo zip, its tree, the patch set, the shipped copy's name.

Every test folder reads these paths from here (``from tests.fixtures_vendor
import VENDOR_ZIP``); the fixtures built from them are in ``tests/conftest.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
VENDOR_ZIP = FIXTURES / "enginex-vllm-bi100-qwen36-main.zip"
VENDOR_TREE = FIXTURES / "vendor" / "enginex-vllm-bi100-qwen36-main"
PATCHES = ROOT / "patches"
SHIPPED = "qwen3_6_scripts/paged_attn.py"

if str(FIXTURES) not in sys.path:  # fixtures/ holds scripts, not a package
    sys.path.insert(0, str(FIXTURES))
from build_demo_zip import build_zip  # noqa: E402

__all__ = ["FIXTURES", "PATCHES", "ROOT", "SHIPPED", "VENDOR_TREE", "VENDOR_ZIP", "build_zip"]
