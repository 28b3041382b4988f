"""A member from the template and its item: `{{NAME.field}}` (or `{{NAME}}`) substituted first.

Item tokens are resolved before the reference's tokens, in the member's `run`,
`params`, `inputs` and `outputs` only; an item value can hold no token itself
(npaflow/fanout/items.py refuses `{{`), so nothing an item says is read twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from pydantic import JsonValue

from npaflow.document.models import Artifact, ParamValue, RunBlock, State
from npaflow.fanout.items import ItemsError, canonical


@cache
def item_token(name: str) -> re.Pattern[str]:
    """`{{NAME}}` or `{{NAME.field}}`, spaces allowed inside the braces."""
    return re.compile(r"\{\{\s*" + re.escape(name) + r"(?:\.([A-Za-z_][A-Za-z0-9_]*))?\s*\}\}")


def has_item_token(text: str, name: str) -> bool:
    """True when `text` names the item (a member's output URI must, so members never collide)."""
    return bool(item_token(name).search(text))


def member_state(template: State, name: str, item: JsonValue, index: int) -> State:
    """The template with this item's values in place of its item tokens.

    Raises:
        ItemsError: the template names a field the item does not have (index and field named).
    """

    def text(value: str) -> str:
        return _substituted(value, name, item, index)

    run = template.run
    if run is not None:
        run = RunBlock(shell=text(run.shell), argv=tuple(text(arg) for arg in run.argv))
    return template.model_copy(
        update={
            "run": run,
            "params": {key: _param(value, text) for key, value in template.params.items()},
            "inputs": tuple(_artifact(a, text) for a in template.inputs),
            "outputs": tuple(_artifact(a, text) for a in template.outputs),
        }
    )


def _param(value: ParamValue, text: Callable[[str], str]) -> ParamValue:
    return text(value) if isinstance(value, str) else value


def _artifact(artifact: Artifact, text: Callable[[str], str]) -> Artifact:
    return artifact.model_copy(update={"uri": text(artifact.uri)})


def _substituted(value: str, name: str, item: JsonValue, index: int) -> str:
    if "{{" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        field = match.group(1)
        if field is None:
            return canonical(item) if isinstance(item, dict) else _scalar(item)
        if not isinstance(item, dict) or field not in item:
            have = ", ".join(sorted(item)) if isinstance(item, dict) else "none: the item is a scalar"
            raise ItemsError(
                f"item {index} has no field '{field}' (the member uses {{{{{name}.{field}}}}}; its "
                f"fields: {have}); write the field in every item or use another"
            )
        return _scalar(item[field])

    return item_token(name).sub(replace, value)


def _scalar(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
