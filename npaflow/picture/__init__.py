"""Pictures of a spec and of a run (DESIGN 23): the graph, the timeline, the report.

Everything here is drawn from the spec plus the run's ledger, and needs nothing
from the network: `plan-spec --format svg`, the run page of `npaflow ui` and
`report.html` all call these.
"""

from __future__ import annotations

from npaflow.document.models import WorkflowSpec
from npaflow.picture.layout import Layout, spec_layout
from npaflow.picture.node_states import NodePhase, NodeView, node_views
from npaflow.picture.svg import graph_svg

__all__ = ["Layout", "NodePhase", "NodeView", "graph_svg", "node_views", "spec_layout", "spec_svg"]


def spec_svg(spec: WorkflowSpec) -> str:
    """The spec's graph, before anything runs."""
    return graph_svg(spec_layout(spec), title=spec.name)
