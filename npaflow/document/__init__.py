"""The spec document itself: its pydantic models and the located YAML it is parsed from.

The lowest layer of the spec language: the catalog, the run context and the
loader all build on it, and it imports none of them.
"""

from npaflow.document.models import (
    SUPPORTED_API_VERSIONS,
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
from npaflow.document.yaml_source import KeyPath, YamlSource, parse_yaml

__all__ = [
    "SUPPORTED_API_VERSIONS",
    "Artifact",
    "ExecutionMode",
    "KeyPath",
    "Loop",
    "Metadata",
    "MultiNodeMode",
    "RunBlock",
    "State",
    "Transition",
    "Trigger",
    "WorkflowSpec",
    "YamlSource",
    "parse_yaml",
]
