"""Rewrite the generated state diagrams in docs/runtime-states.md from the transition tables.

Run after changing npaflow/runtime/transitions.py:
    python tests/regenerate_diagrams.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from npaflow.runtime.diagrams import render_blocks  # noqa: E402

DOC = ROOT / "docs" / "runtime-states.md"

if __name__ == "__main__":
    DOC.write_text(render_blocks(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"regenerated {DOC.relative_to(ROOT)}")
