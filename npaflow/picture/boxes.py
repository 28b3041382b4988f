"""Sizes and places of blocks inside their containers, and the edges drawn inside them.

A block's size includes its loop band. Sequence members are centred on one line
and joined by arrows in the gaps between them; a group's batches are columns with
a dashed barrier between; a loop's back edge runs in its band, above every member,
so no arrow drawn here crosses a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from npaflow.picture.blocks import Block, BlockKind
from npaflow.picture.geometry import (
    BATCH_GAP,
    LOOP_BAND,
    NODE_HEIGHT,
    NODE_MIN_WIDTH,
    PAD,
    SEQUENCE_GAP,
    STACK_GAP,
    TITLE_HEIGHT,
    Rect,
    Route,
    text_width,
)


@dataclass
class Placed:
    """Where everything inside the top-level blocks went."""

    boxes: dict[str, Rect] = field(default_factory=dict)  # each block's drawn rectangle (no band)
    routes: list[Route] = field(default_factory=list)  # sequence arrows and loop back edges
    barriers: list[tuple[float, float, float]] = field(default_factory=list)  # (x, top, bottom)
    blocks: dict[str, Block] = field(default_factory=dict)


def _band(block: Block) -> float:
    return LOOP_BAND if block.loop else 0.0


def _columns(block: Block, sizes: dict[str, tuple[float, float]]) -> list[tuple[float, float]]:
    """(width, height) of each batch column of a group."""
    return [
        (
            max(sizes[m.name][0] for m in batch),
            sum(sizes[m.name][1] for m in batch) + STACK_GAP * (len(batch) - 1),
        )
        for batch in block.batches
    ]


def measure(block: Block, sizes: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """The block's (width, height) with its band; every inner block's size is stored in `sizes`."""
    for member in block.members():
        measure(member, sizes)
    if block.kind is BlockKind.NODE:
        width = max(NODE_MIN_WIDTH, text_width(block.name, block.title) + 28)
        size = (width, NODE_HEIGHT + _band(block))
    else:
        if block.kind is BlockKind.SEQUENCE:
            members = [sizes[m.name] for m in block.members()]
            content = (
                sum(w for w, _ in members) + SEQUENCE_GAP * (len(members) - 1),
                max(h for _, h in members),
            )
        else:
            columns = _columns(block, sizes)
            content = (
                sum(w for w, _ in columns) + BATCH_GAP * (len(columns) - 1),
                max(h for _, h in columns),
            )
        width = max(content[0] + 2 * PAD, text_width(block.widest_caption()) + 2 * PAD)
        size = (width, TITLE_HEIGHT + _band(block) + content[1] + PAD)
    sizes[block.name] = size
    return size


def place(block: Block, x: float, y: float, sizes: dict[str, tuple[float, float]], out: Placed) -> None:
    """Put `block` (band included) with its top-left corner at (x, y), and everything inside it."""
    width, height = sizes[block.name]
    band = _band(block)
    out.blocks[block.name] = block
    if block.kind is BlockKind.NODE:
        box = out.boxes[block.name] = Rect(x, y + band, width, height - band)
        if block.loop:
            out.routes.append(Route(block.name, block.name, "loop", block.loop, _arc(box, y + band / 2)))
        return
    out.boxes[block.name] = Rect(x, y, width, height)
    content_top = y + TITLE_HEIGHT + band
    if block.kind is BlockKind.SEQUENCE:
        _place_sequence(block, x + PAD, content_top, height - TITLE_HEIGHT - band - PAD, sizes, out)
    else:
        _place_group(block, x + (width - _content_width(block, sizes)) / 2, content_top, sizes, out)
    if block.loop and block.kind is BlockKind.SEQUENCE:
        first, last = out.boxes[block.members()[0].name], out.boxes[block.members()[-1].name]
        top = y + TITLE_HEIGHT + band / 2
        points = [(last.cx, last.y), (last.cx, top), (first.cx, top), (first.cx, first.y)]
        members = block.members()
        loop = Route(members[-1].name, members[0].name, "loop", block.loop, points)
        out.routes.append(loop if first is not last else replace(loop, points=_arc(last, top)))


def _arc(box: Rect, top: float) -> list[tuple[float, float]]:
    """A back edge onto the same box: up from its right part to `top`, down onto its left part."""
    right, left = box.x + box.w * 0.7, box.x + box.w * 0.3
    return [(right, box.y), (right, top), (left, top), (left, box.y)]


def _content_width(block: Block, sizes: dict[str, tuple[float, float]]) -> float:
    columns = _columns(block, sizes)
    return sum(w for w, _ in columns) + BATCH_GAP * (len(columns) - 1)


def _place_sequence(
    block: Block, x: float, top: float, height: float, sizes: dict[str, tuple[float, float]], out: Placed
) -> None:
    """Members left to right, centred on one line, joined by arrows through the gaps."""
    previous: Rect | None = None
    for member in block.members():
        width, member_height = sizes[member.name]
        place(member, x, top + (height - member_height) / 2, sizes, out)
        box = out.boxes[member.name]
        if previous is not None:
            gap_x = previous.right + SEQUENCE_GAP / 2
            points = [(previous.right, previous.cy), (gap_x, previous.cy), (gap_x, box.cy), (box.x, box.cy)]
            source = block.members()[block.members().index(member) - 1].name
            out.routes.append(Route(source, member.name, "sequence", "", points))
        previous = box
        x += width + SEQUENCE_GAP


def _place_group(
    block: Block, x: float, top: float, sizes: dict[str, tuple[float, float]], out: Placed
) -> None:
    """One column per batch, members stacked; a dashed barrier between batches."""
    columns = _columns(block, sizes)
    bottom = top + max(h for _, h in columns)
    for index, (batch, (column_width, _)) in enumerate(zip(block.batches, columns, strict=True)):
        y = top
        for member in batch:
            width, height = sizes[member.name]
            place(member, x + (column_width - width) / 2, y, sizes, out)
            y += height + STACK_GAP
        x += column_width
        if index + 1 < len(columns):
            out.barriers.append((x + BATCH_GAP / 2, top, bottom))
            x += BATCH_GAP
