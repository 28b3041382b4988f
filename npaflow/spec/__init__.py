"""The `npa.workflow/v0.0.1` spec language: loading and validating documents.

The document models live in `npaflow.document` (re-exported here); loading sits
above the catalog and the run context, which both build on those models.
"""

from npaflow.document.models import (
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
from npaflow.spec.load import load_spec_from_path, load_spec_from_str, parse_spec
from npaflow.spec.validate import validate_spec

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
