"""Decision normalization and the closed predicate registry (reference §7.1–7.2)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable

from pydantic import JsonValue

from npaflow.errors import PayloadError

PROMOTE = "promote_checkpoint"
LOOP_BACK = "loop_back_to_inner_loop"
_ALIASES = {"promote": PROMOTE, PROMOTE: PROMOTE, "loop_back": LOOP_BACK, LOOP_BACK: LOOP_BACK}
#: Keys read from a decision payload, first present wins (reference §7.3).
DECISION_KEYS = ("decision", "last_decision", "action")


#: What --assume-decision accepts (each normalizes to a decision the predicates know).
KNOWN_ASSUMPTIONS = tuple(_ALIASES)


def assumption_problem(raw: str) -> str:
    """Why `raw` cannot be an assumed decision ("" when it can, or when it is empty)."""
    text = raw.strip()
    if not text or text in _ALIASES:
        return ""
    close = _closest_decision(text)
    hint = f"did you mean '{close}'? " if close else ""
    return f"unknown decision {text!r}: {hint}known decisions: {', '.join(KNOWN_ASSUMPTIONS)}"


def _closest_decision(text: str) -> str:
    """The known spelling of a decision closest to `text` ("" when none is close)."""
    close = difflib.get_close_matches(text, KNOWN_ASSUMPTIONS, n=1)
    return close[0] if close else ""


def shown_decision(decision: str) -> str:
    """A decision as the spec's predicates and the job write it (`loop_back`).

    The ledger keeps the canonical `loop_back_to_inner_loop`, as the reference does.
    """
    return "loop_back" if decision == LOOP_BACK else decision


def unknown_decision_note(decision: str) -> str:
    """What to tell of a decision no predicate can match ("" for a known or an empty one).

    Such a decision is legal (a gate may write `reject` to keep its loop going), but
    a misspelt `promote` takes the same path silently, so readers are told.
    """
    text = normalize_decision(decision)
    if not text or text in (PROMOTE, LOOP_BACK):
        return ""
    close = _closest_decision(text.lower())
    hint = f"; did you mean '{close}'?" if close else ""
    return f"matches neither promote_checkpoint nor loop_back{hint}"


def normalize_decision(raw: str | None) -> str:
    """Map the accepted spellings to canonical decisions; anything else stays as is."""
    text = (raw or "").strip()
    return _ALIASES.get(text, text)


PREDICATES: dict[str, Callable[[str], bool]] = {
    "promote_checkpoint": lambda decision: normalize_decision(decision) == PROMOTE,
    "loop_back": lambda decision: normalize_decision(decision) == LOOP_BACK,
}


def is_known_predicate(name: str) -> bool:
    """True when `name` is in the closed predicate registry."""
    return name in PREDICATES


def evaluate_predicate(name: str, decision: str) -> bool:
    """Evaluate a `loop.until` / `transitions[].when` predicate on a decision.

    Raises:
        ValueError: the predicate is not in the registry.
    """
    if name not in PREDICATES:
        raise ValueError(f"unknown predicate: {name!r} (known: {sorted(PREDICATES)})")
    return PREDICATES[name](decision)


def resolve_assumption(explicit: str, config_value: JsonValue, has_transitions: bool) -> str:
    """Pick the planning assumption (reference §4.1) and normalize it."""
    raw = (explicit or "").strip() or str(config_value or "").strip()
    if not raw and has_transitions:
        raw = "loop_back"
    return normalize_decision(raw)


def parse_decision_payload(body: str, uri: str) -> str:
    """Extract the normalized decision from an artifact body.

    Raises:
        PayloadError: the body is not a JSON object, has no decision field, or gives one twice.
    """
    try:
        payload = json.loads(body, object_pairs_hook=_one_decision_each)
    except PayloadError as exc:
        raise PayloadError(f"decision at {uri} {exc}") from None
    except ValueError as exc:
        raise PayloadError(f"decision at {uri} is not valid JSON: {exc}") from None
    except RecursionError:
        raise PayloadError(f"decision at {uri} nests too deeply to be a decision object") from None
    if not isinstance(payload, dict):
        raise PayloadError(f"decision at {uri} must be a JSON object")
    for key in DECISION_KEYS:
        if key in payload:
            return normalize_decision(str(payload[key] or ""))
    raise PayloadError(f"decision payload missing decision field: {body.strip()[:200]}")


def _one_decision_each(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    """A JSON object, refused when it gives a decision key twice (json would keep the last silently)."""
    keys = [key for key, _ in pairs]
    for key in DECISION_KEYS:
        if keys.count(key) > 1:
            raise PayloadError(f"gives {key!r} {keys.count(key)} times; write it once")
    return dict(pairs)
