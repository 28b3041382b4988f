"""A pydantic ValidationError as one line a user can act on: where, what is wrong, what came instead.

pydantic's own text spans lines and links to its documentation site; every place
a document is refused (the run's input, worker settings, activity results) says it
this way instead.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails


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
    text = error["msg"]
    if error["type"].endswith("_type") or error["type"] == "model_type":
        text = f"{text}, got {type(error['input']).__name__}"
    return f"{where}: {text}"
