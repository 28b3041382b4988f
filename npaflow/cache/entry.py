"""A cache entry is the manifest of a wave's verified outputs, and a hit is one whose manifest still holds.

An entry is written only after the wave's job succeeded and its declared
outputs were verified; it lists every output object (key, size, checksum,
version id) with who produced it. Before a hit is used, storage is asked about
each of those objects again: one missing, resized or rewritten object makes the
entry a miss that names the object (an entry is never trusted on its word).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field, model_validator

from npaflow.cache.key import KeyComponents, ObjectFacts
from npaflow.presets import FROZEN

#: The entry document's schema name, in every entry.
ENTRY_SCHEMA = "npaflow.stage-cache.entry.v1"


class CachedOutput(BaseModel):
    """One declared output of the producing run and the objects it held then (sorted by key)."""

    model_config = FROZEN

    declared: str = Field(description="the output as the spec declares it, run id left symbolic")
    uri: str = Field(description="where the producing run wrote it")
    objects: tuple[ObjectFacts, ...]


class CacheEntry(BaseModel):
    """What a successful, verified wave left for later runs with the same key."""

    model_config = FROZEN

    schema_name: str = Field(default=ENTRY_SCHEMA, alias="schema")
    key: str
    components: KeyComponents
    outputs: tuple[CachedOutput, ...]
    source_run: str
    wave_key: str
    job_id: str
    gpu_hours: float = Field(ge=0)
    created_at: datetime

    @model_validator(mode="after")
    def _has_outputs(self) -> CacheEntry:
        """An entry with no output, or an output with no object, caches nothing: never written."""
        if not self.outputs:
            raise ValueError("a cache entry needs the wave's declared outputs")
        empty = [output.declared for output in self.outputs if not output.objects]
        if empty:
            raise ValueError(f"declared output(s) with no object cannot be cached: {empty}")
        return self

    def expired(self, max_age: timedelta | None, now: datetime) -> bool:
        """True when the entry is older than the state's `max_age`."""
        return max_age is not None and now - self.created_at > max_age


class MismatchReason(StrEnum):
    """Why a cached object no longer stands for what the entry recorded."""

    MISSING = "missing"
    SIZE = "size changed"
    CHECKSUM = "content changed"
    VERSION = "version changed"


class Mismatch(BaseModel):
    """One object of an entry that storage no longer holds as recorded."""

    model_config = FROZEN

    uri: str
    reason: MismatchReason

    def text(self) -> str:
        """`<uri>: <reason>`, as a miss explains itself."""
        return f"{self.uri}: {self.reason.value}"


def object_uri(output: CachedOutput, facts: ObjectFacts) -> str:
    """The stored object's full URI (a prefix output's objects lie under it)."""
    if not facts.key:
        return output.uri
    return output.uri.rstrip("/") + "/" + facts.key.lstrip("/")


def mismatches(entry: CacheEntry, observed: Mapping[str, ObjectFacts | None]) -> list[Mismatch]:
    """Every recorded object that storage now reports differently (`observed` by full URI)."""
    found = []
    for output in entry.outputs:
        for recorded in output.objects:
            uri = object_uri(output, recorded)
            now = observed.get(uri)
            reason = _difference(recorded, now)
            if reason is not None:
                found.append(Mismatch(uri=uri, reason=reason))
    return found


def _difference(recorded: ObjectFacts, now: ObjectFacts | None) -> MismatchReason | None:
    if now is None:
        return MismatchReason.MISSING
    if now.size != recorded.size:
        return MismatchReason.SIZE
    if now.etag != recorded.etag:
        return MismatchReason.CHECKSUM
    if recorded.version_id and now.version_id != recorded.version_id:
        return MismatchReason.VERSION
    return None
