"""A spec as nested blocks: what the picture draws before it places anything.

A state is a node; a `sequence:` state is a box of its members left to right; a
`parallel:` state is a box of its members in batches of `maxConcurrency` (one
column per batch, a barrier between them); a loop adds a band above its box (or
node) where its back edge runs. Blocks that are no container's member are the
top level, which the layout ranks by the `next`/`transitions` edges between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import JsonValue

from npaflow.document.models import State, WorkflowSpec
from npaflow.fanout.models import widest_badge
from npaflow.integers import plain_int
from npaflow.spec_graph import shown_bound
from npaflow.waves import split_into_batches


class BlockKind(StrEnum):
    """What a block is drawn as."""

    NODE = "node"
    SEQUENCE = "sequence"
    PARALLEL = "parallel"


@dataclass
class Block:
    """One state of the spec, with its members when it is a container."""

    name: str
    kind: BlockKind
    title: str  # the container's caption, or the node's second line ("writes decision")
    loop: str = ""  # "loop max 3 until promote_checkpoint"; "" when it does not loop
    terminal: bool = False
    batches: list[list[Block]] = field(default_factory=list)  # sequence: one batch of all members
    iterations: int = 0  # the loop's max when it is a number (a live page adds "· iteration N")
    widest_badge: str = ""  # a forEach group's members at their widest ("1000/1000 ok · ...")

    def caption(self) -> str:
        """A container's caption line: what it is, and how it loops."""
        return f"{self.title} · {self.loop}" if self.loop else self.title

    def widest_caption(self) -> str:
        """The caption as wide as a live page ever draws it (at the loop's last iteration)."""
        caption = self.caption() + (f" · iteration {self.iterations}" if self.iterations else "")
        return caption + (f" · {self.widest_badge}" if self.widest_badge else "")

    def members(self) -> list[Block]:
        """The blocks inside, in spec order."""
        return [member for batch in self.batches for member in batch]

    def walk(self) -> list[Block]:
        """This block and every block inside it, outside in."""
        return [self, *(inner for member in self.members() for inner in member.walk())]


def _loop_text(state: State, config: dict[str, JsonValue]) -> str:
    if state.loop is None:
        return ""
    until = f" until {state.loop.until}" if state.loop.until else ""
    return f"loop max {shown_bound(state.loop.max, config)}{until}"


def _node_title(state: State) -> str:
    if state.trigger is not None:
        return "waits for a trigger"
    if state.writes_decision:
        return "writes decision"
    if not state.is_executable() and state.transitions:
        return "router"
    return ""


def _batch_size(state: State, config: dict[str, JsonValue]) -> int:
    bound = shown_bound(state.max_concurrency, config) if state.max_concurrency else ""
    return plain_int(bound) or 0


def _block(spec: WorkflowSpec, name: str, config: dict[str, JsonValue]) -> Block:
    state = spec.states[name]
    loop = _loop_text(state, config)
    if state.sequence:
        members = [_block(spec, member, config) for member in state.sequence]
        iterations = plain_int(shown_bound(state.loop.max, config)) or 0 if state.loop else 0
        return Block(
            name, BlockKind.SEQUENCE, f"{name}: sequence", loop, state.terminal, [members], iterations
        )
    if state.parallel:
        members = [_block(spec, member, config) for member in state.parallel]
        size = _batch_size(state, config)
        bound = f", maxConcurrency {size}" if size else ""
        batches = split_into_batches(members, size)
        kind = f"forEach {state.for_each.name}" if state.for_each else "parallel"  # one template per item
        block = Block(name, BlockKind.PARALLEL, f"{name}: {kind}{bound}", loop, state.terminal, batches)
        block.widest_badge = widest_badge(state.for_each.max_items) if state.for_each else ""
        return block
    return Block(name, BlockKind.NODE, _node_title(state), loop, state.terminal)


def spec_blocks(spec: WorkflowSpec) -> list[Block]:
    """The top-level blocks of `spec` (states no container holds), in spec order."""
    inner = {member for state in spec.states.values() for member in (*state.sequence, *state.parallel)}
    config = dict(spec.config)
    return [_block(spec, name, config) for name in spec.states if name not in inner]
