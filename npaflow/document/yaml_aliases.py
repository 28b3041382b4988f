"""YAML aliases sized before a document is built: an expansion bomb is refused at once.

A few hundred bytes of nested aliases can stand for millions of values; the
document's distinct nodes are sized first (aliases counted as copies), and the
anchor that expands most is named.
"""

from __future__ import annotations

import re

import yaml

from npaflow.errors import SpecError, SpecIssue

#: Values aliases may add beyond the document's own nodes (legitimate anchors add a handful).
MAX_ALIAS_VALUES = 100_000


def spec_issue(file: str, node: yaml.Node, message: str, hint: str) -> SpecError:
    """One spec problem at the node's line and column."""
    mark = node.start_mark
    return SpecError(
        [SpecIssue(file=file, line=mark.line + 1, column=mark.column + 1, message=message, hint=hint)]
    )


#: What an alias looks like in YAML text; only documents that may use one are sized up front.
ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[^\s\]},]+", re.MULTILINE)


def check_aliases(root: yaml.Node, file: str) -> None:
    """Size the document over its distinct nodes (aliases counted as copies) before building it.

    Cheap for a bomb (few distinct nodes), so an expansion bomb is refused at once.

    Raises:
        SpecError: aliases would add more than MAX_ALIAS_VALUES values.
    """
    sizes: dict[int, int] = {}
    refs: dict[int, int] = {}
    nodes: dict[int, yaml.Node] = {}
    open_nodes: set[int] = set()  # the current node's ancestors: their sizes wait on it
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        if ready:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            open_nodes.discard(id(node))
            continue
        if id(node) in open_nodes:
            raise spec_issue(
                file,
                node,
                "an alias here refers to an anchor that contains it: the value would be infinite",
                "alias an anchored block only after the block ends",
            )
        refs[id(node)] = refs.get(id(node), 0) + 1
        if id(node) not in nodes:
            open_nodes.add(id(node))
            nodes[id(node)] = node
            stack.append((node, True))
            stack.extend((child, False) for child in children)
    if sizes[id(root)] - len(nodes) <= MAX_ALIAS_VALUES:
        return
    worst = max((k for k in nodes if refs[k] > 1), key=lambda k: sizes[k] * (refs[k] - 1))
    raise bomb(file, nodes[worst])


def bomb(file: str, anchor: yaml.Node) -> SpecError:
    """The refusal of an expansion bomb, naming the anchor that expands most."""
    return spec_issue(
        file,
        anchor,
        f"YAML aliases expand this document past {MAX_ALIAS_VALUES:,} "
        "copied values: the alias structure at this anchor is an expansion bomb",
        "use anchors for small repeated blocks, not nested alias fan-outs",
    )
