"""Wave identity and batching: keys, job names, batch splitting (reference §5, §6.4.1)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

#: SkyPilot job names longer than this get cut; attempt suffixes stay visible.
MAX_JOB_NAME = 60
_UNSAFE = re.compile(r"[^a-z0-9_-]")


def split_into_batches(items: Sequence[T], max_concurrency: int, cap: int = 0) -> list[list[T]]:
    """Split a group's steps into consecutive batches; a positive cap only shrinks them."""
    size = max_concurrency if max_concurrency > 0 else len(items)
    if cap > 0:
        size = min(size, cap)
    size = max(1, size)
    return [list(items[start:start + size]) for start in range(0, len(items), size)]


def wave_member(loop_label: str, state: str, iteration: int | None) -> str:
    """Format one member of a wave key: `loop_label:state:iteration-or-dash`."""
    return f"{loop_label}:{state}:{iteration if iteration else '-'}"


def wave_key(sequence: int, group: str, members: Sequence[str]) -> str:
    """Return the ledger key of a wave, e.g. `001|shards|shards:shard-a:-,shards:shard-b:-`."""
    return f"{sequence:03d}|{group or 'serial'}|" + ",".join(members)


def sanitize_job_name(text: str) -> str:
    """Lowercase and replace characters SkyPilot rejects; never empty, at most 60 chars."""
    name = _UNSAFE.sub("-", text.lower()).strip("-_")
    name = name or "npa-workflow"
    if not name[0].isalpha():
        name = f"npa-{name}"  # `sky jobs launch --name` must start with a letter
    return name[:MAX_JOB_NAME].rstrip("-_")


def job_name(run_id: str, sequence: int, label: str, attempt: int = 1) -> str:
    """Return the unique managed-job name of one wave attempt (reference §6.4.1)."""
    base = sanitize_job_name(f"{run_id}-{sequence:02d}-{label}")
    if attempt <= 1:
        return base
    suffix = f"-a{attempt}"
    return base[:MAX_JOB_NAME - len(suffix)].rstrip("-_") + suffix
