"""YAML loading that remembers where every value came from, within bounds.

Errors must name file, line and column, so the document is composed into
nodes and converted by hand, recording a position for every key path. The
conversion is iterative (no document is too deep or too long for it), and a
document is refused, with its line, when it is too large, nests too deeply, or
uses aliases that expand into more values than any spec needs (an expansion
bomb: a few hundred bytes of nested aliases can stand for millions of values).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml
import yaml.constructor

from npaflow.document.yaml_aliases import ALIAS as _ALIAS
from npaflow.document.yaml_aliases import MAX_ALIAS_VALUES, bomb, check_aliases
from npaflow.document.yaml_aliases import spec_issue as _issue
from npaflow.document.yaml_errors import yaml_error_issue
from npaflow.errors import SpecError, SpecIssue
from npaflow.gc_pause import gc_paused

#: A key path into the document, e.g. ("states", "train", "loop", "max").
KeyPath = tuple[str | int, ...]

YamlValue = None | bool | int | float | str | list["YamlValue"] | dict[str, "YamlValue"]

#: Largest spec accepted (bytes); runs pass larger ones by reference, but nothing this large
#: fits in a Temporal payload once validated (2 MB), and parsing it costs seconds.
MAX_SPEC_BYTES = 32 * 1024 * 1024
#: Values a document may expand to in all (a 50,000-state spec has about 600,000).
MAX_VALUES = 2_000_000
#: Nesting levels of mappings and lists (a spec needs about ten).
MAX_NESTING = 100
_YAML_TAG_PREFIX = "tag:yaml.org,2002:"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
#: The only tags a mapping or a list may carry: the ones YAML gives them when untagged.
_PLAIN: dict[type[yaml.Node], str] = {
    yaml.MappingNode: "tag:yaml.org,2002:map",
    yaml.SequenceNode: "tag:yaml.org,2002:seq",
}


@dataclass
class YamlSource:
    """A parsed YAML document plus the position of every value in it."""

    file: str
    data: YamlValue
    positions: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: KeyPath) -> tuple[int, int]:
        """Return (line, column) of the deepest known prefix of `path`."""
        for end in range(len(path), -1, -1):
            pos = self.positions.get(tuple(path[:end]))
            if pos:
                return pos
        return (0, 0)


#: libyaml's composer when available (about 5x faster on large specs); same node marks.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Constructor(yaml.constructor.SafeConstructor):
    """Constructs scalars the way `yaml.safe_load` would."""


Parent = list["YamlValue"] | dict[str, "YamlValue"]


def convert(root: yaml.Node, file: str, out: dict[KeyPath, tuple[int, int]]) -> YamlValue:
    """Build plain values from composed nodes, recording every key path's position (iteratively).

    Values reached again through an alias are counted as they are expanded, so an
    expansion bomb is refused after MAX_ALIAS_VALUES, long before it is built.

    Raises:
        SpecError: the document nests deeper than MAX_NESTING, grows past MAX_VALUES, or its
            aliases add more than MAX_ALIAS_VALUES values (naming the anchor).
    """
    constructor = _Constructor()
    holder: list[YamlValue] = [None]
    seen: set[int] = set()
    produced = repeated = 0
    stack: list[tuple[yaml.Node, KeyPath, Parent, int | str, yaml.Node | None]] = [
        (root, (), holder, 0, None)
    ]
    while stack:
        node, path, parent, slot, alias = stack.pop()
        first_visit = id(node) not in seen
        if alias is None and not first_visit:
            alias = node  # an alias re-enters an anchored node: everything below is a copy
        seen.add(id(node))
        produced += 1
        if alias is not None:
            repeated += 1
            if repeated > MAX_ALIAS_VALUES:
                raise bomb(file, alias)
        _check_size(file, node, path, produced)
        if node.tag != _PLAIN.get(type(node), node.tag):
            raise _foreign_tag(file, node)
        out.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        value: YamlValue
        if isinstance(node, yaml.MappingNode):
            if first_visit:  # before merges add their keys, which explicit ones may override
                _check_unique_keys(file, node)
            constructor.flatten_mapping(node)
            mapping: dict[str, YamlValue] = {}
            pending = []
            for key_node, value_node in node.value:
                key = key_node.value if key_node.tag == _STR else _constructed(constructor, key_node, file)
                name = key if isinstance(key, str) else str(key)
                out[(*path, name)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                mapping[name] = None
                pending.append((value_node, (*path, name), mapping, name, alias))
            stack.extend(reversed(pending))  # popped in document order
            value = mapping
        elif isinstance(node, yaml.SequenceNode):
            items: list[YamlValue] = [None] * len(node.value)
            stack.extend((item, (*path, index), items, index, alias) for index, item in enumerate(node.value))
            value = items
        else:
            value = _scalar(constructor, node, file)
        parent[slot] = value  # type: ignore[index]
    return holder[0]


def _check_unique_keys(file: str, node: yaml.MappingNode) -> None:
    """Refuse a key given twice in one mapping: YAML forbids it, and the last silently winning hides a paste.

    Raises:
        SpecError: at the second occurrence, naming the line of the first.
    """
    first: dict[str, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
            continue
        earlier = first.setdefault(str(key_node.value), key_node)
        if earlier is not key_node:
            raise _issue(
                file,
                key_node,
                f"key {key_node.value!r} is given twice in this mapping (first at line "
                f"{earlier.start_mark.line + 1})",
                "keep one of them: YAML allows a key once, and the later one would silently win",
            )


def _check_size(file: str, node: yaml.Node, path: KeyPath, produced: int) -> None:
    """Refuse a document past MAX_VALUES values or MAX_NESTING levels, at the node that crossed it."""
    if produced > MAX_VALUES:
        raise _issue(
            file,
            node,
            f"the document holds more than {MAX_VALUES:,} values",
            "split the workflow into smaller specs",
        )
    if len(path) > MAX_NESTING:
        raise _issue(
            file,
            node,
            f"the document nests more than {MAX_NESTING} levels deep here",
            "flatten the structure; a spec needs only a few levels",
        )


def _foreign_tag(file: str, node: yaml.Node) -> SpecError:
    """A tag no safe loader constructs (`!!python/object`, `!Ref`), or one on a mapping or list.

    Read as plain values, such a tag would be dropped without a word, so it is refused.
    """
    tag = str(node.tag).replace(_YAML_TAG_PREFIX, "!!")
    return _issue(
        file,
        node,
        f"YAML tag {tag!r} is not one a spec may use",
        "remove the tag: a spec holds plain mappings, lists, strings, numbers and booleans",
    )


def _constructed(constructor: _Constructor, node: yaml.Node, file: str) -> object:
    """The node's value; one its tag cannot hold (an integer of 5,000 digits, February 31) is an issue.

    Raises:
        SpecError: at the node, with the hint to quote it.
    """
    try:
        return constructor.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError:
        raise _foreign_tag(file, node) from None
    except (ValueError, OverflowError) as exc:
        kind = str(node.tag).rsplit(":", 1)[-1]
        shown = str(node.value)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}...{shown[-8:]} ({len(shown):,} characters)"
        reason = "too many digits" if "digits" in str(exc) else str(exc)
        message = f"cannot read {shown} as a YAML {kind}: {reason}"
        raise _issue(file, node, message, "quote it to keep it as text") from None


def _scalar(constructor: _Constructor, node: yaml.Node, file: str) -> YamlValue:
    if node.tag == _STR:
        return str(node.value)
    value = _constructed(constructor, node, file)
    if isinstance(value, bytes | bytearray):
        return value.decode("utf-8", "replace")
    if not isinstance(value, bool | int | float | str) and value is not None:
        return str(value)  # timestamps and other tagged scalars render as text
    return value


def parse_yaml(text: str, file: str, what: str = "workflow spec") -> YamlSource:
    """Parse one YAML document, raising SpecError with the location on bad or unbounded YAML.

    Raises:
        SpecError: the text is not valid YAML, holds more than one document, or is too
            large, too deep, or an alias expansion bomb.
    """
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(
            [
                SpecIssue(
                    file=file,
                    message=f"{what} is {len(text) / 2**20:.1f} MiB; at most "
                    f"{MAX_SPEC_BYTES // 2**20} MiB is read",
                    hint="split the workflow into smaller specs",
                )
            ]
        )
    try:
        with gc_paused():
            nodes = list(yaml.compose_all(text, Loader=_LOADER))
    except yaml.YAMLError as exc:
        raise SpecError([yaml_error_issue(exc, text, file, what)]) from None
    if len(nodes) > 1:
        raise SpecError(
            [
                SpecIssue(
                    file=file,
                    line=nodes[1].start_mark.line + 1,
                    column=1,
                    message=f"{what} must be a single YAML document",
                    hint="remove the extra '---' document",
                )
            ]
        )
    positions: dict[KeyPath, tuple[int, int]] = {}
    data: YamlValue = {}
    if nodes and nodes[0] is not None:
        with gc_paused():
            if _ALIAS.search(text):
                check_aliases(nodes[0], file)
            data = convert(nodes[0], file, positions)
    return YamlSource(file=file, data=data, positions=positions)
