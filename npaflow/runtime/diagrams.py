"""The state diagrams docs/runtime-states.md embeds, generated from the transition tables."""

from __future__ import annotations

from npaflow.runtime.transitions import RunTransition, WaveTransition, mermaid_diagram, notes_table
from npaflow.runtime.vocabulary import AttemptStage, RunPhase


def blocks() -> dict[str, str]:
    """Each generated block of docs/runtime-states.md (a fenced diagram, or markdown), by marker name."""
    return {
        "run-phases": _mermaid(mermaid_diagram((t.value for t in RunTransition), RunPhase.STARTING)),
        "wave-attempts": _mermaid(mermaid_diagram((t.value for t in WaveTransition), AttemptStage.NEW)),
        "run-notes": notes_table(),
    }


def _mermaid(diagram: str) -> str:
    return f"```mermaid\n{diagram}\n```"


def render_blocks(document: str) -> str:
    """Replace every generated block of `document` with the tables' current diagrams."""
    for name, diagram in blocks().items():
        start, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
        head, found, rest = document.partition(start)
        if not found:
            raise ValueError(f"missing marker {start}")
        _, found_end, tail = rest.partition(end)
        if not found_end:
            raise ValueError(f"missing marker {end}")
        document = f"{head}{start}\n{diagram}\n{end}{tail}"
    return document
