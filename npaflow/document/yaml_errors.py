"""Where a YAML syntax error really is: the parser's position, or the mis-indented line behind it.

PyYAML reports an indentation mistake where parsing could no longer go on, often
several lines below the line that is off (a key indented one level too deep
carries its children along until the next sibling). The line a user must fix is
the head of the deeper block above that position, or the shallower key right
above it; both are found from the indentation alone.
"""

from __future__ import annotations

import yaml

from npaflow.errors import SpecIssue

#: Problems PyYAML reports when keys of one mapping do not line up.
_INDENTATION_PROBLEMS = ("expected <block end>", "did not find expected key")


def yaml_error_issue(exc: yaml.YAMLError, text: str, file: str, what: str) -> SpecIssue:
    """One issue for a YAML syntax error: at the mis-indented line when there is one."""
    mark = getattr(exc, "problem_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None and any(p in problem for p in _INDENTATION_PROBLEMS):
        lines = text.splitlines()
        off = _misindented(lines, mark.line)
        if off is not None:
            expected, found = _indent(lines[mark.line]), _indent(lines[off])
            return SpecIssue(
                file=file,
                line=off + 1,
                column=found + 1,
                message=f"{what} is not valid YAML: this line is indented {found} spaces, but the "
                f"keys of its mapping are indented {expected} (line {line} is; the parser stopped "
                f"there: {problem})",
                hint=f"indent it {expected} spaces, as line {line}, or line {line} as this one",
            )
    return SpecIssue(
        file=file,
        line=line,
        column=column,
        message=f"{what} is not valid YAML: {problem}",
        hint="check indentation and quoting near this position",
    )


def _misindented(lines: list[str], stopped: int) -> int | None:
    """The line above `stopped` whose indentation breaks its mapping, if one is plain to see."""
    if stopped >= len(lines) or _blank(lines[stopped]):
        return None
    expected = _indent(lines[stopped])
    above, head = stopped - 1, None
    while above >= 0 and (_blank(lines[above]) or _indent(lines[above]) > expected):
        if not _blank(lines[above]):
            head = above  # a deeper block: its first line is the key that went too deep
        above -= 1
    if head is not None:
        return head
    if above >= 0 and _indent(lines[above]) < expected and not lines[above].rstrip().endswith(":"):
        return above  # a key shallower than the next one, which is no child of it
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")
