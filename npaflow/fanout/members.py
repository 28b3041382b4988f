"""A member from the template and its item: `{{NAME.field}}` (or `{{NAME}}`) substituted first.

Item tokens are resolved before the reference's tokens, in the member's `run`,
`params`, `inputs` and `outputs` only; an item value can hold no token itself
(npaflow/fanout/items.py refuses `{{`), so nothing an item says is read twice.
In `run.shell` (and a script `run.argv` hands to a shell, `bash -c SCRIPT`) a value is
quoted for where it stands (npaflow/fanout/shell_words.py), and so is one a param carries
there as `{{config.KEY}}`: bash reads it as data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from pydantic import JsonValue

from npaflow.document.models import Artifact, ParamValue, RunBlock, State
from npaflow.fanout.items import ItemsError, canonical
from npaflow.fanout.shell_words import (
    MARK,
    Quoting,
    evaluates_arithmetic,
    is_inert,
    mark_quotings,
    placed,
    reparses,
    shell_scripts,
    substitutes,
)


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
        shell = _member_shell(run.shell, template, name, item, index)
        scripts = shell_scripts(run.argv)
        argv = tuple(
            _member_shell(arg, template, name, item, index) if at in scripts else text(arg)
            for at, arg in enumerate(run.argv)
        )
        run = RunBlock(shell=shell, argv=argv)
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


def _substituted(value: str, name: str, item: JsonValue, index: int, place: Placer | None = None) -> str:
    if "{{" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        text = _item_value(match.group(1), name, item, index)
        return text if place is None else place(text, match.group(0))

    return item_token(name).sub(replace, value)


def _item_value(field: str | None, name: str, item: JsonValue, index: int) -> str:
    if field is None:
        return canonical(item) if isinstance(item, dict) else _scalar(item)
    if not isinstance(item, dict) or field not in item:
        have = ", ".join(sorted(item)) if isinstance(item, dict) else "none: the item is a scalar"
        raise ItemsError(
            f"item {index} has no field '{field}' (the member uses {{{{{name}.{field}}}}}; its "
            f"fields: {have}); write the field in every item or use another"
        )
    return _scalar(item[field])


#: Writes one item value for where its token (the second argument) stands.
Placer = Callable[[str, str], str]


def _member_shell(shell: str, template: State, name: str, item: JsonValue, index: int) -> str:
    """The member's shell command, each item value in it (or in a param it names) placed as data."""
    if "{{" not in shell:
        return shell
    shell = _inline_params(shell, template, name, item, index)
    if _all_inert(shell, name, item, index):
        return _substituted(shell, name, item, index)  # written as is: nothing to scan
    again = reparses(shell)
    if MARK in shell or again:
        quotings = iter([Quoting.OPAQUE] * len(item_token(name).findall(shell)))
    else:
        quotings = iter(mark_quotings(item_token(name).sub(MARK, shell)))
    arithmetic = evaluates_arithmetic(shell)

    def place(value: str, token: str) -> str:
        written = placed(value, next(quotings))
        if written is None and again:
            raise ItemsError(
                f"item {index}: {token} holds {value!r}, and the member's run.shell hands text to "
                "another parser (eval, sh -c, ssh, su, watch) that would read it again as code; pass it as "
                "an argument or environment variable of that command, or use run.argv"
            )
        if written is None:
            raise _opaque_error(value, token, index)
        if arithmetic and substitutes(value):
            raise ItemsError(
                f"item {index}: {token} holds {value!r}, and the member's run.shell evaluates arithmetic "
                "([[ A -eq B ]], let, declare -i), where bash runs a $(...) or `...` inside a value "
                "however it is quoted; compare it as a string, or pass it with run.argv"
            )
        return written

    return _substituted(shell, name, item, index, place)


def _inline_params(shell: str, template: State, name: str, item: JsonValue, index: int) -> str:
    """`{{config.KEY}}` of a param carrying a non-inert item value, replaced by the param's text.

    Only then: a command whose values are all inert renders exactly as before. A param
    whose text names another param cannot move (params resolve against the base
    config), so its item values must be inert.
    """
    for key, value in template.params.items():
        token = re.compile(r"\{\{\s*config\." + re.escape(key) + r"\s*\}\}")
        if not isinstance(value, str) or not has_item_token(value, name) or not token.search(shell):
            continue
        if _all_inert(value, name, item, index):
            continue  # `{{config.KEY}}` stays
        if any(f"config.{other}" in value for other in template.params):
            _substituted(value, name, item, index, _inert_only(index, f"params.{key}"))  # raises
        shell = token.sub(value.replace("\\", "\\\\"), shell)
    return shell


def _all_inert(text: str, name: str, item: JsonValue, index: int) -> bool:
    found = item_token(name).finditer(text)
    return all(is_inert(_item_value(match.group(1), name, item, index)) for match in found)


def _inert_only(index: int, param: str) -> Placer:
    def place(value: str, token: str) -> str:
        if placed(value, Quoting.OPAQUE) is None:
            raise _opaque_error(value, token, index, param)
        return value

    return place


def _opaque_error(value: str, token: str, index: int, param: str = "") -> ItemsError:
    if param:
        return ItemsError(
            f"item {index}: {token} holds {value!r}, which {param} carries into the member's run.shell; "
            f"{param} names another param, so the value cannot be quoted where it lands; use letters, "
            "digits and _@%+=:,./- in it, put the item token in run.shell itself, or pass it with run.argv"
        )
    return ItemsError(
        f"item {index}: {token} holds {value!r}, which bash would read as code where it stands in the "
        "member's run.shell (inside `...`, ${...}, $((...)), a comment or a here-document, or after $ "
        'or \\); put the token in "..." or a plain word, or pass it with run.argv'
    )


def _scalar(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
