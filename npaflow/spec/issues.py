"""Collecting located spec issues so a document reports every problem at once."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from npaflow.document.yaml_source import KeyPath, YamlSource
from npaflow.errors import SpecError, SpecIssue


class IssueCollector:
    """Turns (key path, message) pairs into SpecIssues with file, line and state."""

    def __init__(self, source: YamlSource) -> None:
        self.source = source
        self.issues: list[SpecIssue] = []

    def add(self, path: KeyPath, message: str, hint: str = "") -> None:
        """Record one problem at `path` (a path under `states` names the state)."""
        line, column = self.source.locate(path)
        state, field = "", ".".join(str(part) for part in path)
        if len(path) >= 2 and path[0] == "states":
            state = str(path[1])
            field = _field_name(path[2:])
        self.issues.append(
            SpecIssue(
                file=self.source.file,
                line=line,
                column=column,
                state=state,
                field=field,
                message=message,
                hint=hint,
            )
        )

    def reject_unknown(self, value: Mapping[str, object], known: set[str], path: KeyPath) -> None:
        """Report each key of `value` not in `known` (an `x-` key is the user's own), with a hint."""
        for key in value:
            if key not in known and not key.startswith("x-"):
                self.add((*path, key), f"unknown field '{key}'", did_you_mean(key, known))

    def raise_if_any(self) -> None:
        """Raise SpecError carrying every issue collected so far.

        Raises:
            SpecError: at least one issue was recorded.
        """
        if self.issues:
            raise SpecError(self.issues)


def _field_name(parts: KeyPath) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


#: What other workflow engines call a field this spec names otherwise (squashed,
#: lower case): Step Functions' `End`/`StartAt`, Argo's and Dagster's `dependencies`.
_NAMED_ELSEWHERE = {
    "end": "terminal",
    "startat": "initial",
    "start": "initial",
    "dependson": "needs",
    "depends": "needs",
    "dependencies": "needs",
    "command": "run",
    "script": "run",
    "branches": "parallel",
}


def did_you_mean(word: str, known: Iterable[str], kind: str = "fields") -> str:
    """Return a hint naming the closest known word, or a generic one."""
    options = list(known)
    plain = word.lower().replace("-", "").replace("_", "")
    lowered = {option.lower(): option for option in options}
    exact = lowered.get(plain)
    if exact is None:
        squashed = {o.lower().replace("_", ""): o for o in options}
        exact = squashed.get(plain) or squashed.get(_NAMED_ELSEWHERE.get(plain, "").lower())
    matches = [exact] if exact else difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if matches:
        return f"did you mean '{matches[0]}'?"
    listed = sorted(options)
    more = f", ... ({len(listed) - 12} more)" if len(listed) > 12 else ""
    return f"known {kind}: " + ", ".join(listed[:12]) + more
