"""A pydantic ValidationError as one line a user can act on: where, what is wrong, what came instead.

pydantic's own text spans lines and links to its documentation site; every place
a document is refused (the run's input, worker settings, activity results) says it
this way instead.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

#: What a user who typed a workflow's input by hand should do instead, by the refused model.
START_HINTS = {
    "RunRequest": (
        "start runs with 'npaflow submit', or give temporal workflow start --input "
        '\'{"spec": "<the spec as YAML text>"}\' (or "spec_uri")'
    ),
    "PoolCarry": "create and change pools with 'npaflow quota set POOL --gpus N'",
    "FlightQueue": "runs start their cache flights themselves; start none by hand",
}


def refusal_text(exc: ValidationError) -> str:
    """One line: which document, what is wrong where, and how to start it right."""
    hint = START_HINTS.get(exc.title)
    text = f"invalid {exc.title}: {validation_problems(exc)}"
    return f"{text} (hint: {hint})" if hint else text


def validation_problems(exc: ValidationError, limit: int = 3) -> str:
    """`field.path: what is wrong` for the first `limit` errors, joined by "; "."""
    errors = exc.errors(include_url=False)
    shown = [_problem(error) for error in errors[:limit]]
    if len(errors) > limit:
        shown.append(f"and {len(errors) - limit} more")
    return "; ".join(shown)


def _problem(error: ErrorDetails) -> str:
    where = ".".join(map(str, error["loc"])) or "the document"
    if error["type"] == "extra_forbidden":
        return f"{where}: not a field it takes (check the spelling)"
    text = message_of(error)
    if error["type"].endswith("_type") or error["type"] == "model_type":
        text = f"{text}, got {type(error['input']).__name__}"
    return f"{where}: {text}"


def message_of(error: ErrorDetails) -> str:
    """What is wrong, without pydantic's "Value error, " prefix (it says nothing a reader needs)."""
    return str(error["msg"]).removeprefix("Value error, ")
