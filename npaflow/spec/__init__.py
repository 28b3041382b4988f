"""The `npa.workflow/v0.0.1` spec language: models, loading and validation.

Loading is re-exported lazily: the validators depend on modules (context,
catalog) that themselves import the models from this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from npaflow.spec.models import (
    Artifact,
    ExecutionMode,
    Loop,
    Metadata,
    MultiNodeMode,
    RunBlock,
    State,
    Transition,
    Trigger,
    WorkflowSpec,
)

if TYPE_CHECKING:
    from npaflow.spec.load import load_spec_from_path, load_spec_from_str, parse_spec
    from npaflow.spec.validate import validate_spec

_LAZY = {
    "load_spec_from_path": "npaflow.spec.load",
    "load_spec_from_str": "npaflow.spec.load",
    "parse_spec": "npaflow.spec.load",
    "validate_spec": "npaflow.spec.validate",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "Artifact",
    "ExecutionMode",
    "Loop",
    "Metadata",
    "MultiNodeMode",
    "RunBlock",
    "State",
    "Transition",
    "Trigger",
    "WorkflowSpec",
    "load_spec_from_path",
    "load_spec_from_str",
    "parse_spec",
    "validate_spec",
]
