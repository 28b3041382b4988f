"""A job's owner in SkyPilot's own record: one `_metadata` key the reconciler reads back.

SkyPilot keeps a task's `_metadata` mapping with the managed job and returns it
from `queue_v2` (field `metadata`), so the owner travels with the job itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from npaflow.render.wave_yaml import dump_wave_yaml, load_wave_yaml
from npaflow.runtime.reconcile.models import JobOwner

#: The `_metadata` key holding the owner as JSON (beside the launch token's key).
OWNER_KEY = "npaflow_owner"


def with_owner(yaml_text: str, owner: JobOwner | None) -> str:
    """The rendered wave with its owner in every task's `_metadata` (unchanged without one)."""
    if owner is None:
        return yaml_text
    header, tasks = load_wave_yaml(yaml_text)
    stamped = owner.model_dump_json()
    for task in tasks:
        metadata = task.get("_metadata")
        task["_metadata"] = {**(metadata if isinstance(metadata, dict) else {}), OWNER_KEY: stamped}
    return dump_wave_yaml(header, tasks)


def owner_of(metadata: Mapping[str, Any] | None) -> JobOwner | None:
    """The owner a job's metadata names; None when it names none or an unreadable one."""
    text = (metadata or {}).get(OWNER_KEY)
    if not isinstance(text, str):
        return None
    try:
        return JobOwner.model_validate_json(text)
    except ValidationError:
        return None
