"""The laid-out spec as one inline SVG: boxes, nodes coloured by phase, edges, labels.

Self-contained (its own style, no fonts or scripts from anywhere), so the same
drawing serves `plan-spec --format svg`, the run page and `report.html`. Every
node and box carries `data-state` and `data-phase`, and a `<title>` read on hover.
"""

from __future__ import annotations

from npaflow.picture.blocks import BlockKind
from npaflow.picture.geometry import PAD, Rect, Route
from npaflow.picture.layout import Layout
from npaflow.picture.node_states import NodePhase, NodeView
from npaflow.printable import html_text
from npaflow.runtime.usage import gpu_hours_text
from npaflow.spec_graph import START

#: Fill and stroke of each phase (colour-blind safe pairs; text stays dark on every fill).
PHASE_COLOURS: dict[NodePhase, tuple[str, str]] = {
    NodePhase.PENDING: ("#f4f5f7", "#9aa1ab"),
    NodePhase.WAITING: ("#fff4d6", "#c99a06"),
    NodePhase.LAUNCHING: ("#e3ecff", "#6b8fd6"),
    NodePhase.RUNNING: ("#cfe0ff", "#2f6fdb"),
    NodePhase.SUCCEEDED: ("#d8f3dc", "#2d8a4e"),
    NodePhase.CACHED: ("#e6f5f1", "#3f9c8a"),
    NodePhase.FAILED: ("#fde0e0", "#c93636"),
    NodePhase.CANCELLED: ("#ece6f5", "#7d5ba6"),
    NodePhase.SKIPPED: ("#fafafa", "#c8ccd2"),
}
_STYLE = """
.npa-graph text{font:12px sans-serif;fill:#1d232b}
.npa-graph .caption{font-weight:600;fill:#39424e}
.npa-graph .detail{font-size:10px;fill:#39424e}
.npa-graph .edge{fill:none;stroke:#6b7380;stroke-width:1.4}
.npa-graph .edge.kind-loop{stroke-dasharray:5 3}
.npa-graph .edge.taken{stroke:#1d232b;stroke-width:2.2}
.npa-graph .edge-label{font-size:10px;fill:#4a5360}
.npa-graph .barrier{stroke:#9aa1ab;stroke-dasharray:3 3}
.npa-graph .node rect,.npa-graph .box rect{stroke-width:1.5}
.npa-graph .node.terminal rect{stroke-width:3}
.npa-graph .phase-running rect{animation:npa-pulse 1.6s ease-in-out infinite}
@keyframes npa-pulse{50%{stroke-opacity:.35}}
"""


def _title(view: NodeView | None, name: str) -> str:
    if view is None:
        return name
    lines = [f"{name}: {view.phase.value}"]
    if view.attempts:
        lines.append(f"attempt {view.attempts}" + (f", iteration {view.iteration}" if view.iteration else ""))
    if view.job_ids:
        lines.append("job " + ", ".join(view.job_ids))
    if view.gpu_hours:
        lines.append(f"{gpu_hours_text(view.gpu_hours)} GPU-hours")
    lines.extend(line for line in (view.detail, view.error[:300]) if line)
    return "\n".join(lines)


def _detail(view: NodeView | None, fallback: str) -> str:
    if view is None or view.phase is NodePhase.PENDING:
        return fallback
    parts = [view.phase.value]
    if view.attempts > 1:
        parts.append(f"try {view.attempts}")
    if view.iteration:
        parts.append(f"#{view.iteration}")
    return " · ".join(parts)


def _rect(box: Rect, phase: NodePhase, radius: float) -> str:
    fill, stroke = PHASE_COLOURS[phase]
    return (
        f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" '
        f'rx="{radius:g}" fill="{fill}" stroke="{stroke}"/>'
    )


def _node(layout: Layout, name: str, view: NodeView | None) -> str:
    block, box = layout.blocks[name], layout.boxes[name]
    phase = view.phase if view else NodePhase.PENDING
    terminal = " terminal" if block.terminal else ""
    text = html_text(_detail(view, block.title))
    name_y = box.y + 18 if text else box.cy + 4
    return (
        f'<g class="node phase-{phase.value}{terminal}" data-state="{html_text(name)}" '
        f'data-phase="{phase.value}"><title>{html_text(_title(view, name))}</title>{_rect(box, phase, 8)}'
        f'<text x="{box.cx:.1f}" y="{name_y:.1f}" text-anchor="middle">{html_text(name)}</text>'
        f'<text class="detail" x="{box.cx:.1f}" y="{box.y + 33:.1f}" text-anchor="middle">{text}</text></g>'
    )


def _box(layout: Layout, name: str, view: NodeView | None) -> str:
    block, box = layout.blocks[name], layout.boxes[name]
    phase = view.phase if view else NodePhase.PENDING
    caption = block.caption() + (f" · iteration {view.iteration}" if view and view.iteration else "")
    caption += f" · {view.badge}" if view and view.badge else ""
    return (
        f'<g class="box {block.kind.value} phase-{phase.value}" data-state="{html_text(name)}" '
        f'data-phase="{phase.value}"><title>{html_text(_title(view, name))}</title>{_rect(box, phase, 10)}'
        f'<text class="caption" x="{box.x + PAD:.1f}" y="{box.y + 15:.1f}">{html_text(caption)}</text></g>'
    )


def _edge(route: Route, taken: bool) -> str:
    path = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in route.points)
    classes = f"edge kind-{route.kind}" + (" taken" if taken else "")
    drawn = (
        f'<path class="{classes}" d="{path}" marker-end="url(#npa-arrow)" '
        f'data-source="{html_text(route.source)}" data-target="{html_text(route.target)}"/>'
    )
    if route.label and route.kind != "loop":
        # above the last piece, ending at the arrow; along its lane for an edge that takes one
        (x, y), anchor = ((route.points[-1][0] - 8, route.points[-1][1]), "end")
        if len(route.points) > 4:
            (x, y), anchor = ((route.points[2][0] + 6, route.points[2][1]), "start")
        drawn += (
            f'<text class="edge-label" x="{x:.1f}" y="{y - 5:.1f}" text-anchor="{anchor}">'
            f"{html_text(route.label)}</text>"
        )
    return drawn


def _taken(route: Route, views: dict[str, NodeView] | None) -> bool:
    if not views or route.kind == "loop":
        return False
    reached = {NodePhase.PENDING, NodePhase.SKIPPED}
    source_ran = route.source == START or views[route.source].phase not in reached
    return source_ran and views[route.target].phase not in reached


def graph_svg(layout: Layout, views: dict[str, NodeView] | None = None, title: str = "") -> str:
    """The whole picture; with `views`, every node coloured by its phase and taken edges in bold."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="npa-graph" width="{layout.width:.0f}" '
        f'height="{layout.height:.0f}" viewBox="0 0 {layout.width:.0f} {layout.height:.0f}" role="img" '
        f'aria-label="{html_text(title or "workflow graph")}"><style>{_STYLE}</style>',
        '<defs><marker id="npa-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#4a5360"/>'
        "</marker></defs>",
    ]
    containers = [n for n, b in layout.blocks.items() if b.kind is not BlockKind.NODE]
    parts.extend(_box(layout, name, (views or {}).get(name)) for name in containers)
    parts.extend(
        f'<line class="barrier" x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>'
        for x, top, bottom in layout.barriers
    )
    nodes = [n for n, b in layout.blocks.items() if b.kind is BlockKind.NODE]
    parts.extend(_node(layout, name, (views or {}).get(name)) for name in nodes)
    start = layout.boxes[START]
    parts.append(
        f'<g class="start"><title>start</title><circle cx="{start.cx:.1f}" cy="{start.cy:.1f}" '
        f'r="{start.w / 2:.1f}" fill="#39424e"/></g>'
    )
    parts.extend(_edge(route, _taken(route, views)) for route in layout.routes)
    parts.append("</svg>")
    return "".join(parts)
