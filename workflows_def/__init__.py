"""Temporal workflow definitions: deterministic glue between the traversal and activities."""

from workflows_def.run_workflow import PHASE_ATTRIBUTE, NpaWorkflowRun

__all__ = ["PHASE_ATTRIBUTE", "NpaWorkflowRun"]
