"""`{{scope.key}}` token substitution exactly as reference §2.

One regex pass, no rescanning; text that does not match the grammar passes
through untouched; values render with `str()`.
"""

from __future__ import annotations

import base64
import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from npaflow.errors import TokenError
from npaflow.integers import plain_int

TOKEN_PATTERN = re.compile(r"\{\{\s*(config|run|state|loop)\.([A-Za-z0-9_.-]+)(?:\|([A-Za-z0-9_-]+))?\s*\}\}")
_CONFIG_REF = re.compile(r"^(?:config\.([A-Za-z0-9_.-]+)|\{\{config\.([A-Za-z0-9_.-]+)\}\})$")


class UnknownStateTokenError(TokenError):
    """A `{{state.X.key}}` names a state that has not produced outputs (yet)."""


@dataclass
class TokenScope:
    """What tokens can see: config, run, materialized state outputs, loop numbers."""

    config: Mapping[str, JsonValue]
    run: Mapping[str, JsonValue]
    state_outputs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    loop_iterations: Mapping[str, int] = field(default_factory=dict)

    def lookup(self, scope: str, key: str) -> JsonValue:
        """Return the value a token names, or raise TokenError."""
        if scope == "config":
            if key in self.config:
                return self.config[key]
            raise _unknown(scope, key, self.config)
        if scope == "run":
            if key in self.run:
                return self.run[key]
            raise _unknown(scope, key, self.run)
        if scope == "loop":
            if key in self.loop_iterations:
                return self.loop_iterations[key]
            raise _unknown(scope, key, self.loop_iterations)
        state, _, attr = key.rpartition(".")
        outputs = self.state_outputs.get(state)
        if outputs is None or attr not in outputs:
            raise UnknownStateTokenError(f"unknown state token: state.{key}")
        return outputs[attr]


def _unknown(scope: str, key: str, known: Iterable[str]) -> TokenError:
    """`unknown run token: run.idd (did you mean run.id?)`: a typo names what it meant."""
    close = difflib.get_close_matches(key, list(known), n=1)
    meant = f" (did you mean {scope}.{close[0]}?)" if close else ""
    return TokenError(f"unknown {scope} token: {scope}.{key}{meant}")


def _apply_transform(text: str, transform: str | None) -> str:
    if not transform:
        return text
    if transform == "base64":
        return base64.b64encode(text.encode("utf-8")).decode("ascii")
    raise TokenError(f"unsupported token transform: {transform}")


def resolve_text(text: str, scope: TokenScope) -> str:
    """Substitute every token in `text` once (no rescanning)."""
    if "{{" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        value = scope.lookup(match.group(1), match.group(2))
        return _apply_transform(render_value(value), match.group(3))

    return TOKEN_PATTERN.sub(replace, text)


def render_value(value: JsonValue) -> str:
    """Render a value the way the reference does (`str()` of the Python value)."""
    return str(value)


def resolve_deep(value: JsonValue, scope: TokenScope) -> JsonValue:
    """Resolve tokens in every string inside nested dicts and lists."""
    if isinstance(value, str):
        return resolve_text(value, scope)
    if isinstance(value, dict):
        return {key: resolve_deep(item, scope) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_deep(item, scope) for item in value]
    return value


def token_scopes_in(text: str) -> set[str]:
    """Return the scopes (`config`, `run`, ...) that tokens in `text` use."""
    return {match.group(1) for match in TOKEN_PATTERN.finditer(text)}


def resolve_config_int(raw: JsonValue, config: Mapping[str, JsonValue], what: str = "loop max") -> int:
    """Resolve an int-or-config-reference bound (loop max, maxConcurrency, ...).

    Accepts an int, a digit string, `config.a` or exactly `{{config.a}}`.

    Raises:
        TokenError: the value is not an integer or a resolvable reference.
    """
    if isinstance(raw, bool):
        raise TokenError(f"{what} must be int or config ref, not bool")
    if isinstance(raw, int):
        return raw
    text = str(raw).strip() if raw is not None else ""
    if (number := plain_int(text)) is not None:
        return number
    match = _CONFIG_REF.match(text)
    if not match:
        raise TokenError(f"cannot resolve {what} from {raw!r}")
    attr = match.group(1) or match.group(2)
    if attr not in config:
        raise TokenError(f"config has no attribute '{attr}'")
    value = config[attr]
    if isinstance(value, bool):
        raise TokenError(f"{what} must be int or config ref, not bool")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and (number := plain_int(value.strip())) is not None:
        return number
    raise TokenError(f"config.{attr} must be an integer loop bound, got {value!r}")
