"""Where the files npaflow ships live: the wheel's `npaflow/specs/`, else `specs/` of a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_WHEEL_SPECS_DIR = _PACKAGE_DIR / "specs"  # pyproject maps the checkout's specs/ there
#: The built-in catalog, the examples, the starter spec and the JSON Schema.
SPECS_DIR = _WHEEL_SPECS_DIR if _WHEEL_SPECS_DIR.is_dir() else _PACKAGE_DIR.parent / "specs"
CATALOG_DIR = SPECS_DIR / "catalog"
EXAMPLES_DIR = SPECS_DIR / "examples"
STARTER_SPEC = SPECS_DIR / "starter.yaml"
