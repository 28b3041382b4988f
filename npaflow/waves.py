"""Wave identity and batching: keys, job names, batch splitting (reference §5, §6.4.1).

Words, used the same way in code, ledger and docs (docs/architecture.md):
a *wave* is one launch (one serial step, or one batch of a group occurrence);
an *occurrence* is one visit of a serial state or of a parallel group; a
*batch* is a wave that belongs to a group occurrence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, model_serializer, model_validator

from npaflow.ids import RunId
from npaflow.integers import plain_int
from npaflow.presets import FROZEN

T = TypeVar("T")

#: SkyPilot job names longer than this get cut; attempt suffixes stay visible.
MAX_JOB_NAME = 60
_UNSAFE = re.compile(r"[^a-z0-9_-]")
#: A fan-out member's item key at the end of its state in a wave key (npaflow/fanout/items.py).
_ITEM_SUFFIX = re.compile(r"@([0-9a-f]{12})$")


class WaveMember(BaseModel):
    """One step of a wave as its key names it: `loop_label:state:iteration-or-dash`.

    A fan-out member (npaflow/fanout/) adds its item's key: `loop_label:state@key:-`.
    """

    model_config = FROZEN

    loop_label: str = ""
    state: str
    iteration: int | None = None
    item: str = ""

    def __str__(self) -> str:
        state = f"{self.state}@{self.item}" if self.item else self.state
        return f"{self.loop_label}:{state}:{self.iteration if self.iteration else '-'}"

    @classmethod
    def parse(cls, text: str) -> WaveMember:
        """Parse one member; a malformed member keeps its whole text as the state."""
        label, colon, rest = text.partition(":")
        if not colon:
            return cls(state=text)
        state, colon, iteration = rest.rpartition(":")
        if not colon:
            return cls(loop_label=label, state=rest)
        number = plain_int(iteration)
        item = _ITEM_SUFFIX.search(state)
        if item is not None:
            return cls(loop_label=label, state=state[: item.start()], iteration=number, item=item[1])
        return cls(loop_label=label, state=state, iteration=number)


class WaveKey(BaseModel):
    """The ledger key of a wave, e.g. `001|shards|shards:shard-a:-,shards:shard-b:-`.

    It serialises to (and validates from) that string, so the ledger keeps the
    reference's format; the string is parsed only when a stored ledger is read.
    """

    model_config = FROZEN

    sequence: int
    group: str = ""
    members: tuple[WaveMember, ...] = ()

    def __str__(self) -> str:
        return f"{self.sequence:03d}|{self.group or 'serial'}|" + ",".join(map(str, self.members))

    @property
    def states(self) -> list[str]:
        """The member states, in order."""
        return [member.state for member in self.members]

    def label(self) -> str:
        """The wave as a person reads it: its states, each with its loop iteration (`score #2`).

        A fan-out batch reads as its template and member count (`shard ×50`).
        """
        if self.members and self.members[0].item:
            return f"{self.members[0].state} ×{len(self.members)}"
        return ", ".join(m.state + (f" #{m.iteration}" if m.iteration else "") for m in self.members)

    @classmethod
    def parse(cls, text: str) -> WaveKey:
        """Parse a stored key.

        Raises:
            ValueError: the text does not start with `NNN|group|`.
        """
        sequence, bar, rest = text.partition("|")
        group, bar2, members = rest.partition("|")
        number = plain_int(sequence)
        if not (bar and bar2) or number is None:
            raise ValueError(f"not a wave key: {text!r} (expected 'NNN|group|members')")
        return cls(
            sequence=number,
            group="" if group == "serial" else group,
            members=tuple(WaveMember.parse(m) for m in members.split(",") if m),
        )

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            parsed = cls.parse(value)
            return {"sequence": parsed.sequence, "group": parsed.group, "members": parsed.members}
        return value

    @model_serializer
    def _to_string(self) -> str:
        return str(self)


def pass_labels(keys: Sequence[WaveKey]) -> dict[int, str]:
    """Each wave's label, with its pass (`score #2`) when the same label runs again.

    A sequence loop's children carry no iteration in their keys (reference §4.4),
    so the n-th wave with one label is that label's n-th pass; attempts of one
    wave share its sequence number and so its pass. A fan-out's batches run other
    members (other items) of one template: they are no passes of each other.
    """
    passes: dict[str, list[int]] = {}
    for key in keys:
        seen = passes.setdefault(_pass_identity(key), [])
        if key.sequence not in seen:
            seen.append(key.sequence)
    labels = {}
    for key in keys:
        seen = passes[_pass_identity(key)]
        labels[key.sequence] = key.label() + (f" #{seen.index(key.sequence) + 1}" if len(seen) > 1 else "")
    return labels


def _pass_identity(key: WaveKey) -> str:
    """What a wave is a pass of: its label, and for fan-out members the items they ran."""
    items = [member.item for member in key.members if member.item]
    return key.label() + ("@" + ",".join(items) if items else "")


#: Item labels a line names before it counts the rest (`+12 more`).
LABELS_SHOWN = 4


def counted_states(states: Sequence[str], *, spaced: bool = True) -> list[str]:
    """Each state once, in first-seen order, with how many run at once (`shard ×4`).

    A fan-out batch runs its template once per member: `shard, shard, shard` says less.
    `spaced=False` writes `shard×4`, one word in a whitespace-separated table.
    """
    counts: dict[str, int] = {}
    for state in states:
        counts[state] = counts.get(state, 0) + 1
    times = " ×" if spaced else "×"
    return [state if count == 1 else f"{state}{times}{count}" for state, count in counts.items()]


def items_text(labels: Sequence[str], shown: int = LABELS_SHOWN) -> str:
    """` [shard-000, shard-001, +2 more]`: which items a wave ran ("" for a wave of no fan-out member)."""
    listed = _listed(labels, shown)
    return f" [{listed}]" if listed else ""


def labels_of(key: WaveKey, items: Sequence[str], chosen: Collection[str]) -> list[str]:
    """The items (as people see them) of a batch's members whose item keys are `chosen`."""
    return [label for member, label in zip(key.members, items, strict=False) if member.item in chosen]


def carried_text(labels: Sequence[str]) -> str:
    """`s0, s2 done before`: a retried batch's members it did not launch again ("" for none)."""
    listed = _listed(labels, LABELS_SHOWN)
    return f"{listed} done before" if listed else ""


def _listed(labels: Sequence[str], shown: int) -> str:
    named = [label for label in labels if label]
    rest = len(named) - shown if len(named) > shown + 1 else 0
    return ", ".join(named[: len(named) - rest]) + (f", +{rest} more" if rest else "")


def wave_text(states: Sequence[str], items: Sequence[str]) -> str:
    """`a,b` for a wave's states; a fan-out batch by its items: `shard ×4 [s-0, s-1, s-2, s-3]`."""
    if any(items):
        return ", ".join(counted_states(states)) + items_text(items)
    return ",".join(states)


def states_where(states: Sequence[str], items: Sequence[str] = ()) -> str:
    """Where an error happened: `train, eval`; a fan-out batch by its items, `shard ×4 [s-0, s-1, ...]`."""
    return wave_text(states, items) if any(items) else ", ".join(states)


def split_into_batches(items: Sequence[T], max_concurrency: int, cap: int = 0) -> list[list[T]]:
    """Split a group's steps into consecutive batches; a positive cap only shrinks them."""
    size = max_concurrency if max_concurrency > 0 else len(items)
    if cap > 0:
        size = min(size, cap)
    size = max(1, size)
    return [list(items[start : start + size]) for start in range(0, len(items), size)]


def _job_name_text(text: str) -> str:
    """SkyPilot's alphabet, lowercase, never empty, starting with a letter (no length cut yet)."""
    name = _UNSAFE.sub("-", text.lower()).strip("-_")
    name = name or "npa-workflow"
    if not name[0].isalpha():
        name = f"npa-{name}"  # `sky jobs launch --name` must start with a letter
    return name


def sanitize_job_name(text: str) -> str:
    """Lowercase and replace characters SkyPilot rejects; never empty, at most 60 chars."""
    return _job_name_text(text)[:MAX_JOB_NAME].rstrip("-_")


def job_name(run_id: RunId, sequence: int, label: str, attempt: int = 1) -> str:
    """Return the unique managed-job name of one wave attempt (reference §6.4.1).

    A name that fits is the reference's. One that does not (run ids of 50 or more
    characters, as a long schedule name with its timestamp makes) keeps its start
    and ends in a digest of the whole: cut as the reference cuts it, every wave of
    such a run would share one name in `sky jobs queue`.
    """
    suffix = f"-a{attempt}" if attempt > 1 else ""
    whole = _job_name_text(f"{run_id}-{sequence:02d}-{label}")
    room = MAX_JOB_NAME - len(suffix)
    if len(whole) <= room:
        return whole.rstrip("-_") + suffix
    digest = hashlib.sha256(whole.encode()).hexdigest()[:8]
    return whole[: room - len(digest) - 1].rstrip("-_") + f"-{digest}{suffix}"


_TASK_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_SEPARATOR_RUN = re.compile(r"([-_]{2})[-_]+")


def sanitize_task_name(name: str) -> str:
    """Make a state-derived name acceptable as a SkyPilot task and JobGroup job name."""
    text = _SEPARATOR_RUN.sub(r"\1", _TASK_UNSAFE.sub("-", name)).strip("-_")
    return text or "task"
