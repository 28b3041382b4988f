"""The sizes npaflow keeps its Temporal payloads under, with Temporal's own limits beside them.

Temporal refuses a payload over 2 MiB (`TMPRL1103`: the workflow task then fails and
retries forever), a gRPC message over 4 MiB, and a history over 50 MiB or 51,200
events; it warns from 256 KiB per payload. A run's result lists what it did, so a
wide group or a long loop would cross the first limit at its very end, after every
job ran: the result carries the newest records within a budget and says how many
it left to the ledger, which holds them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

#: Temporal's hard limit on one payload (a workflow result, a query answer, an activity input).
TEMPORAL_PAYLOAD_LIMIT = 2 * 1024 * 1024
#: Temporal's warning threshold for one payload: npaflow's own budget for any one of them.
TEMPORAL_PAYLOAD_WARNING = 256 * 1024
#: The largest payload npaflow sends: past it the workflow task would fail and retry forever
#: (`TMPRL1103`), so the activity, or the run, fails instead with a message naming the size.
PAYLOAD_CEILING = TEMPORAL_PAYLOAD_LIMIT - 64 * 1024
#: Temporal's limits on one history.
TEMPORAL_HISTORY_BYTES = 50 * 1024 * 1024
TEMPORAL_HISTORY_EVENTS = 51_200

#: The share of those limits a run's history may reach before it continues as new (at a wave
#: boundary, nothing in flight), even when the server suggests it later than its default of
#: about 4K events or 4 MB: a fifth, leaving room for a wave of any width to finish.
CONTINUE_AS_NEW_HISTORY_BYTES = TEMPORAL_HISTORY_BYTES // 5
CONTINUE_AS_NEW_HISTORY_EVENTS = TEMPORAL_HISTORY_EVENTS // 5

#: Temporal's limit on one search attribute value (a keyword list counts as its JSON): over it,
#: Temporal terminates the run with BadSearchAttributes.
TEMPORAL_SEARCH_ATTRIBUTE_BYTES = 2048
#: npaflow's budget for the `NpaflowState` list (its JSON): a wide batch lists its first states.
STATE_ATTRIBUTE_BYTES = 1536

#: What a run's result spends on its wave attempts, their member steps, its decisions and its
#: per-state hours: together well under TEMPORAL_PAYLOAD_WARNING with the fixed fields.
RESULT_WAVE_BYTES = 96 * 1024
RESULT_STEP_BYTES = 48 * 1024
RESULT_DECISION_BYTES = 32 * 1024
RESULT_STATE_USAGE_BYTES = 32 * 1024

Item = TypeVar("Item", bound=BaseModel)


def past_the_ceiling(what: str, size: int) -> str:
    """Why a payload of `size` bytes cannot be sent ("" when it can): its size and the limit."""
    if size <= PAYLOAD_CEILING:
        return ""
    return (
        f"{what} is {size / 2**20:.2f} MiB, past Temporal's 2 MiB payload limit (npaflow sends at "
        f"most {PAYLOAD_CEILING / 2**20:.2f} MiB)"
    )


def history_past_share(events: int, size: int) -> bool:
    """Whether a history has reached the share of Temporal's limits at which a run continues as new."""
    return events >= CONTINUE_AS_NEW_HISTORY_EVENTS or size >= CONTINUE_AS_NEW_HISTORY_BYTES


def newest_within(items: Sequence[Item], budget: int) -> tuple[list[Item], int]:
    """The newest items whose JSON fits `budget` bytes, in their order, and how many were left out."""
    kept: list[Item] = []
    spent = 0
    for item in reversed(items):
        size = len(item.model_dump_json())
        if spent + size > budget:
            break
        kept.append(item)
        spent += size
    kept.reverse()
    return kept, len(items) - len(kept)


def names_within(names: Sequence[str], budget: int) -> list[str]:
    """The first names whose JSON list fits `budget` bytes."""
    kept: list[str] = []
    spent = 2  # the list's brackets
    for name in names:
        size = len(name.encode()) + 4  # quotes, comma, space
        if spent + size > budget:
            break
        kept.append(name)
        spent += size
    return kept


def keywords_within(names: Sequence[str], budget: int = STATE_ATTRIBUTE_BYTES) -> list[str]:
    """The first names whose JSON list fits `budget` bytes, then `+N more` for the rest."""
    kept = names_within(names, budget - 16)  # room for the "+N more" mark
    return kept if len(kept) == len(names) else [*kept, f"+{len(names) - len(kept)} more"]


def costliest_within(
    by_state: dict[str, Item], budget: int, cost: Callable[[Item], float]
) -> dict[str, Item]:
    """The states that cost most whose JSON fits `budget` bytes (a wide run's per-state hours)."""
    kept: dict[str, Item] = {}
    spent = 0
    for state, item in sorted(by_state.items(), key=lambda pair: -cost(pair[1])):
        size = len(state) + len(item.model_dump_json()) + 6
        if spent + size > budget:
            break
        kept[state] = item
        spent += size
    return kept
