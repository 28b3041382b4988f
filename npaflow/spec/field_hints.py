"""How to write a state field the spec gave in the wrong shape: the hints of parse errors."""

from __future__ import annotations

from pydantic import JsonValue

#: A token that names no config key, or is not a token at all.
TOKEN_HINT = "define the key in config (or --var KEY=VALUE) or fix the token"
#: A `{{run.x}}` that names no run value: config cannot define one.
RUN_TOKEN_HINT = (
    "fix the token: the run's values are {{run.id}}, {{run.prefix}} and the keys of the spec's top-level run:"
)
#: The same, where the field wants a whole number (loop.max, maxConcurrency, trigger numbers).
NUMBER_TOKEN_HINT = "use an integer, or a '{{config.key}}' whose key is in config (or --var KEY=VALUE)"


def token_hint(message: str) -> str:
    """The fix of an unknown token: a run token is fixed, a config token may also be defined."""
    return RUN_TOKEN_HINT if message.startswith("unknown run token") else TOKEN_HINT


#: Plain-string state fields given a mapping or a list.
STRING_HINTS = {
    "resources": "name a profile, e.g. resources: gpu, defined under the spec's top-level resources:",
    "next": "name the one state that follows, e.g. next: evaluate; to branch, use transitions",
    "toolRef": "name one catalog tool, e.g. toolRef: npaflow.write_decision",
    "description": "write it as one string; a YAML block scalar (| or >) spans lines",
}


def param_hint(key: str, value: JsonValue) -> str:
    """A `params` value that is not a scalar: null, a mapping or a list."""
    if value is None:
        return f"give params.{key} a value (quote it for text: {key}: 'null'), or remove the key"
    return f"flatten it: one scalar per key, e.g. {key}_a: 1, {key}_b: 2"


def trigger_hint(label: str, floor: int) -> str:
    """A trigger number (minObjects, pollSeconds, ...) that is not a whole number at or above its floor."""
    return f"write trigger.{label}: {floor} or more, or a '{{{{config.key}}}}' that resolves to one"
