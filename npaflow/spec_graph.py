"""A spec as a graph (`plan-spec --format mermaid|dot|json`): its shape, before anything runs.

States become nodes; `next` and `transitions` (labelled with their decision)
become edges; a `sequence:` or `parallel:` state becomes a cluster of its members
(a sequence chained in order, a group with its `maxConcurrency`); a loop's `max`
and `until` label its cluster and a back edge; terminal states are marked.
Unlike a plan, the graph shows every branch, not the one an assumption takes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from npaflow.document.models import State, WorkflowSpec

START = "__start__"


@dataclass(frozen=True)
class Edge:
    """One arrow: `source` -> `target`, with what makes it taken."""

    source: str
    target: str
    label: str = ""
    kind: str = "next"  # start | next | transition | sequence | loop


@dataclass
class Graph:
    """Nodes (state name -> label), clusters (container -> members) and edges."""

    name: str
    nodes: dict[str, str] = field(default_factory=dict)
    terminals: set[str] = field(default_factory=set)
    clusters: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # name -> (label, members)
    edges: list[Edge] = field(default_factory=list)


_CONFIG_REFERENCE = re.compile(r"^\s*(?:\{\{\s*)?config\.([A-Za-z0-9_]+)(?:\s*\}\})?\s*$")


def shown_bound(value: object, config: dict[str, Any]) -> str:
    """A bound as the run will read it: `{{config.rounds}}` shows the configured number."""
    match = _CONFIG_REFERENCE.match(str(value))
    if match and match.group(1) in config:
        return str(config[match.group(1)])
    return str(value)


def _loop_text(state: State, config: dict[str, Any]) -> str:
    if state.loop is None:
        return ""
    until = f" until {state.loop.until}" if state.loop.until else ""
    return f"loop max {shown_bound(state.loop.max, config)}{until}"


def _node_label(state: State, config: dict[str, Any]) -> str:
    parts = [state.name]
    if state.trigger is not None:
        parts.append(f"waits for {state.trigger.uri}")
    if state.writes_decision:
        parts.append("writes decision")
    if state.loop is not None and not (state.sequence or state.parallel):
        parts.append(_loop_text(state, config))
    if not state.is_executable() and state.transitions:
        parts.append("router")
    return "\n".join(parts)


def spec_graph(spec: WorkflowSpec) -> Graph:
    """The graph of every state and edge of `spec`."""
    graph, config = Graph(name=spec.name), dict(spec.config)
    graph.edges.append(Edge(START, spec.initial, kind="start"))
    for state in spec.states.values():
        if state.sequence or state.parallel:
            members = list(state.sequence or state.parallel)
            if state.parallel:
                bound = (
                    f", maxConcurrency {shown_bound(state.max_concurrency, config)}"
                    if state.max_concurrency
                    else ""
                )
                label = f"{state.name}: parallel{bound}"
            else:
                label = f"{state.name}: sequence"
            loop = _loop_text(state, config)
            graph.clusters[state.name] = (f"{label}, {loop}" if loop else label, members)
            for first, second in zip(state.sequence, state.sequence[1:], strict=False):
                graph.edges.append(Edge(first, second, kind="sequence"))
            if state.loop is not None and state.sequence:
                graph.edges.append(Edge(state.sequence[-1], state.sequence[0], loop, kind="loop"))
        else:
            graph.nodes[state.name] = _node_label(state, config)
            if state.loop is not None:
                graph.edges.append(Edge(state.name, state.name, _loop_text(state, config), kind="loop"))
        if state.terminal:
            graph.terminals.add(state.name)
        for transition in state.transitions:
            when = transition.when or (f"if {transition.if_}" if transition.if_ else "otherwise")
            graph.edges.append(Edge(state.name, transition.goto, when, kind="transition"))
        if state.next:
            graph.edges.append(Edge(state.name, state.next, "then" if state.transitions else "", kind="next"))
    return graph


def _outermost(graph: Graph) -> list[str]:
    """Clusters that are no other cluster's member (the rest are drawn inside their parent)."""
    inner = {member for _, members in graph.clusters.values() for member in members}
    return [name for name in graph.clusters if name not in inner]


def _mermaid_id(name: str) -> str:
    return "s_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def _mermaid_text(text: str) -> str:
    return text.replace('"', "'").replace("\n", "<br/>")


def _mermaid_cluster(graph: Graph, name: str, depth: int) -> list[str]:
    label, members = graph.clusters[name]
    pad = "  " * depth
    lines = [f'{pad}subgraph {_mermaid_id(name)}["{_mermaid_text(label)}"]']
    for member in members:
        if member in graph.clusters:
            lines.extend(_mermaid_cluster(graph, member, depth + 1))
        else:
            lines.append(f"{pad}  {_mermaid_id(member)}")
    lines.append(f"{pad}end")
    return lines


def to_mermaid(graph: Graph) -> str:
    """A Mermaid flowchart (GitHub renders it in Markdown)."""
    lines = ["flowchart TD", f'  {_mermaid_id(START)}(("start"))']
    for name, label in graph.nodes.items():
        text = _mermaid_text(label)
        shape = f'(["{text}"])' if name in graph.terminals else f'["{text}"]'
        lines.append(f"  {_mermaid_id(name)}{shape}")
    for name in _outermost(graph):
        lines.extend(_mermaid_cluster(graph, name, 1))
    for edge in graph.edges:
        arrow = "-.->" if edge.kind == "loop" else "-->"
        label = f"|{_mermaid_text(edge.label)}|" if edge.label else ""
        lines.append(f"  {_mermaid_id(edge.source)} {arrow}{label} {_mermaid_id(edge.target)}")
    return "\n".join(lines) + "\n"


def _dot(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dot_cluster(graph: Graph, name: str, depth: int, numbers: dict[str, int]) -> list[str]:
    label, members = graph.clusters[name]
    pad = "  " * depth
    lines = [f"{pad}subgraph cluster_{numbers[name]} {{", f"{pad}  label={_dot(label)};"]
    # The container is a node too: edges into and out of it attach inside its cluster.
    lines.append(f"{pad}  {_dot(name)} [label={_dot(name)}, shape=plaintext];")
    for member in members:
        if member in graph.clusters:
            lines.extend(_dot_cluster(graph, member, depth + 1, numbers))
        else:
            lines.append(f"{pad}  {_dot(member)};")
    lines.append(f"{pad}}}")
    return lines


def to_dot(graph: Graph) -> str:
    """Graphviz DOT (`dot -Tsvg`): sequences and groups as clusters."""
    lines = [f"digraph {_dot(graph.name)} {{", "  rankdir=TB;", "  node [shape=box, style=rounded];"]
    lines.append(f"  {_dot(START)} [label=start, shape=circle];")
    for name, label in graph.nodes.items():
        extra = ", peripheries=2" if name in graph.terminals else ""
        lines.append(f"  {_dot(name)} [label={_dot(label)}{extra}];")
    numbers = {name: index for index, name in enumerate(graph.clusters)}
    for name in _outermost(graph):
        lines.extend(_dot_cluster(graph, name, 1, numbers))
    for edge in graph.edges:
        attributes = [f"label={_dot(edge.label)}"] if edge.label else []
        if edge.kind == "loop":
            attributes.append("style=dashed")
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"  {_dot(edge.source)} -> {_dot(edge.target)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"
