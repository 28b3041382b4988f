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
    state: str = ""  # explain: the state; purge with `run`: only that state's entries
    key: str = ""  # purge: one entry, by `sha256:<hex>`, bare hex, or a unique prefix of 12+ hex digits
    run: str = ""  # purge: the entries this run wrote
    dry_run: bool = False  # purge: list what would go, delete nothing

    def selects(self) -> bool:
        """True when the purge names what to delete (a scope, an age, a key or a run)."""
        return bool(self.scope or self.older_than_seconds or self.key or self.run)


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
    damaged: str = ""  # why the entry cannot be trusted (its other fields are then unknown)


class CacheExplanation(BaseModel):
    """Why a run's state hit or missed: its key's components, and what differs from the newest entry."""

    model_config = FROZEN

    state: str
    step: CachedStep
    components: dict[str, object] = Field(default_factory=dict)
    newest_entry: str = ""  # the state's newest entry in the scope ("" when none)
    differing: list[str] = Field(default_factory=list)  # components that differ from it (key paths)
    changes: list[str] = Field(default_factory=list)  # the same, in the spec's and the store's words
    states: list[str] = Field(default_factory=list)  # with no step: the run's cached states


class CacheAdminResult(BaseModel):
    """What `cache list`, `explain` or `purge` found or did."""

    model_config = FROZEN

    root: str
    scope: str = ""  # list/purge: the one scope asked for ("" = every scope)
    rows: list[CacheRow] = Field(default_factory=list)
    explanation: CacheExplanation | None = None
    purged: int = 0
    truncated: bool = False
    dry_run: bool = False  # rows are what a purge would delete; nothing was


#: The fewest hex digits a key prefix may have: fewer would match by accident.
MIN_KEY_PREFIX = 12


def key_digits(text: str) -> str:
    """The hex digits a `--key` names (`sha256:<hex>` or bare hex), lower-cased.

    Raises:
        ValueError: not hex, or fewer than MIN_KEY_PREFIX digits.
    """
    digits = text.strip().lower().removeprefix("sha256:")
    if len(digits) < MIN_KEY_PREFIX or any(c not in "0123456789abcdef" for c in digits):
        raise ValueError(
            f"--key {text!r}: a key as `cache list` prints it (sha256:<hex>), its hex, or a prefix of at "
            f"least {MIN_KEY_PREFIX} hex digits"
        )
    return digits


def purge_selects(request: CacheAdminInput, row: CacheRow, age_seconds: float) -> bool:
    """Whether a purge request deletes this entry (a damaged one goes with its scope, whatever its age)."""
    if request.key and not row.key.removeprefix("sha256:").startswith(key_digits(request.key)):
        return False
    if request.run and (row.damaged or row.source_run != request.run):
        return False
    if request.run and request.state and row.state != request.state:
        return False
    if request.older_than_seconds and not row.damaged:
        return age_seconds > request.older_than_seconds
    return True
