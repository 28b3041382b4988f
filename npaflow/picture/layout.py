"""The spec's picture laid out left to right: top-level blocks in ranks, edges that cross no node.

Ranks are the longest path from the start over the forward edges (a depth-first
search from the start finds the backward ones). A block's column holds the blocks
of its rank, stacked and centred. An edge to the next rank turns in the gap
between the two columns; a longer forward edge climbs to a lane above everything,
a backward edge to a lane below, so no edge passes through a node or a box.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npaflow.document.models import WorkflowSpec
from npaflow.picture.blocks import Block, spec_blocks
from npaflow.picture.boxes import Placed, measure, place
from npaflow.picture.geometry import LANE, MARGIN, RANK_GAP, ROW_GAP, START_SIZE, Rect, Route, text_width
from npaflow.spec_graph import START, spec_graph

_BETWEEN_BLOCKS = ("start", "next", "transition")


@dataclass
class Layout:
    """Everything placed: boxes by state name (START too), routes, barriers, and the canvas size."""

    width: float
    height: float
    boxes: dict[str, Rect]
    blocks: dict[str, Block]
    routes: list[Route] = field(default_factory=list)
    barriers: list[tuple[float, float, float]] = field(default_factory=list)
    top_level: list[str] = field(default_factory=list)


def _owners(blocks: list[Block]) -> dict[str, str]:
    """Every state's top-level block."""
    return {inner.name: top.name for top in blocks for inner in top.walk()}


def _ranks(names: list[str], edges: list[tuple[str, str]]) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """Longest-path rank of each block from START, and the edges that go backward."""
    successors: dict[str, list[str]] = {name: [] for name in [START, *names]}
    for source, target in edges:
        successors[source].append(target)
    order, back, state = [], set(), {START: 1}  # state: 1 on the search path, 2 finished
    stack = [(START, iter(successors[START]))]
    while stack:
        node, targets = stack[-1]
        for target in targets:
            if state.get(target) == 1:
                back.add((node, target))
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(successors[target])))
                break
        else:
            stack.pop()
            state[node] = 2
            order.append(node)
    rank = {START: 0}
    for node in reversed(order):  # reverse post-order: every forward edge goes later
        for target in successors[node]:
            if (node, target) not in back:
                rank[target] = max(rank.get(target, 0), rank[node] + 1)
    for name in names:
        rank.setdefault(name, 1)  # unreachable from the start: beside its first state
    return rank, back


def spec_layout(spec: WorkflowSpec) -> Layout:
    """Lay out every state of `spec` and every edge between them."""
    blocks = spec_blocks(spec)
    owner = _owners(blocks)
    owner[START] = START
    edges = []
    for edge in spec_graph(spec).edges:
        if edge.kind in _BETWEEN_BLOCKS and owner[edge.source] != owner[edge.target]:
            edges.append((owner[edge.source], owner[edge.target], edge.kind, edge.label))
    names = [block.name for block in blocks]
    rank, back = _ranks(names, [(s, t) for s, t, _, _ in edges])
    sizes: dict[str, tuple[float, float]] = {START: (START_SIZE, START_SIZE)}
    for block in blocks:
        measure(block, sizes)
    columns: list[list[str]] = [[] for _ in range(max(rank.values()) + 1)]
    for name in sorted([START, *names], key=lambda n: rank[n]):
        columns[rank[name]].append(name)
    above = sum(1 for s, t, _, _ in edges if (s, t) not in back and rank[t] > rank[s] + 1)
    below = sum(1 for s, t, _, _ in edges if (s, t) in back)
    top = MARGIN + LANE * (above + 1 if above else 0)
    heights = [sum(sizes[n][1] for n in column) + ROW_GAP * (len(column) - 1) for column in columns]
    content = max(heights)
    gaps = [RANK_GAP] * len(columns)  # after each column: wide enough for the labels ending next
    for source, target, _, label in edges:
        if rank[target] == rank[source] + 1:
            gaps[rank[source]] = max(gaps[rank[source]], text_width(label) * 0.85 + 52)
    placed, by_name, x = Placed(), {b.name: b for b in blocks}, MARGIN
    column_x: list[tuple[float, float]] = []
    for column, height, gap in zip(columns, heights, gaps, strict=True):
        width = max(sizes[n][0] for n in column)
        y = top + (content - height) / 2
        for name in column:
            w, h = sizes[name]
            if name == START:
                placed.boxes[START] = Rect(x + (width - w) / 2, y, w, h)
            else:
                place(by_name[name], x + (width - w) / 2, y, sizes, placed)
            y += h + ROW_GAP
        column_x.append((x, x + width))
        x += width + gap
    bottom = top + content
    routes = _routes(edges, rank, back, placed.boxes, column_x, (top - LANE, bottom + LANE))
    height = bottom + (LANE * (below + 1) if below else 0) + MARGIN
    return Layout(
        width=x - gaps[-1] + MARGIN,
        height=height,
        boxes=placed.boxes,
        blocks=placed.blocks,
        routes=routes + placed.routes,
        barriers=placed.barriers,
        top_level=names,
    )


def _routes(
    edges: list[tuple[str, str, str, str]],
    rank: dict[str, int],
    back: set[tuple[str, str]],
    boxes: dict[str, Rect],
    column_x: list[tuple[float, float]],
    lanes: tuple[float, float],
) -> list[Route]:
    """Each edge between top-level blocks as a polyline through the gaps and lanes."""
    routes, lane_above, lane_below = [], lanes[0], lanes[1]
    leaving: dict[int, int] = {}  # how many edges already turn in the gap after each column
    entering: dict[int, int] = {}  # and how many come down from a lane before each column
    for source, target, kind, label in edges:
        a, b = boxes[source], boxes[target]
        out_x = column_x[rank[source]][1] + 14 + 5.0 * (leaving.get(rank[source], 0) % 4)
        in_x = column_x[rank[target]][0] - 14 - 5.0 * (entering.get(rank[target], 0) % 4)
        leaving[rank[source]] = leaving.get(rank[source], 0) + 1
        if (source, target) in back or rank[target] > rank[source] + 1:
            entering[rank[target]] = entering.get(rank[target], 0) + 1
        if (source, target) in back:
            lane_below += LANE
            points = [(a.right, a.cy), (out_x, a.cy), (out_x, lane_below), (in_x, lane_below)]
            points += [(in_x, b.cy), (b.x, b.cy)]
        elif rank[target] == rank[source] + 1:
            points = [(a.right, a.cy), (out_x, a.cy), (out_x, b.cy), (b.x, b.cy)]
        else:
            lane_above -= LANE
            points = [(a.right, a.cy), (out_x, a.cy), (out_x, lane_above), (in_x, lane_above)]
            points += [(in_x, b.cy), (b.x, b.cy)]
        routes.append(Route(source, target, kind, label, points))
    return routes
