"""`npaflow cache list | explain | purge`: what a worker reads and deletes in the stage cache for the CLI.

Workers hold the storage credentials, so the CLI asks one through the small
`NpaflowCacheAdmin` workflow, as `npaflow artifacts` does.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from npaflow.presets import FROZEN
from npaflow.runtime.ledger import CachedStep

#: Entries `list` reads at most (newest first); `purge` deletes without a cap.
MAX_LISTED_ENTRIES = 1000


class CacheAction(StrEnum):
    """What the CLI asks of the cache."""

    LIST = "list"
    EXPLAIN = "explain"
    PURGE = "purge"


class CacheAdminInput(BaseModel):
    """One `npaflow cache` request."""

    model_config = FROZEN

    action: CacheAction
    root: str = ""  # "" = the worker's own cache root (beside its ledger root)
    scope: str = ""  # list/purge: one scope ("" = every scope)
    older_than_seconds: float | None = Field(default=None, gt=0)  # purge: entries older than this
    ledger_uri: str = ""  # explain: the run's ledger
    state: str = ""  # explain: the state


class CacheRow(BaseModel):
    """One entry as `cache list` shows it."""

    model_config = FROZEN

    scope: str
    state: str
    key: str
    created_at: str
    source_run: str
    source_job: str
    gpu_hours: float
    objects: int
    uri: str


class CacheExplanation(BaseModel):
    """Why a run's state hit or missed: its key's components, and what differs from the newest entry."""

    model_config = FROZEN

    state: str
    step: CachedStep
    components: dict[str, object] = Field(default_factory=dict)
    newest_entry: str = ""  # the state's newest entry in the scope ("" when none)
    differing: list[str] = Field(default_factory=list)  # components that differ from it


class CacheAdminResult(BaseModel):
    """What `cache list`, `explain` or `purge` found or did."""

    model_config = FROZEN

    root: str
    scope: str = ""  # list/purge: the one scope asked for ("" = every scope)
    rows: list[CacheRow] = Field(default_factory=list)
    explanation: CacheExplanation | None = None
    purged: int = 0
    truncated: bool = False
