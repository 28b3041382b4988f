"""A loaded spec too big for one payload travels in parts: packed once, read back part by part.

A run's loaded spec (the validated spec, its tools, and what its ledger already
holds) is the workflow's first activity result. A 1,000-member group loads to
about 1.2 MB and a 2,000-wave loop's continuation carries 2,000 prior waves:
each one payload past Temporal's 256 KiB warning and near its 2 MiB limit. A
load past `INLINE_LOAD_BYTES` is therefore packed (zlib, then base64 so it is
text), stored beside the ledger under its SHA-256, and read back by the
workflow in parts of at most `PART_CHARS`, each a payload well under the
warning. The history holds the spec once, compressed; the digest proves the
parts make up the load that was packed.
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from typing import Any

from pydantic import BaseModel, model_validator

from npaflow.presets import FROZEN
from npaflow.runtime.loaded import LoadedSpec
from npaflow.runtime.payload_limits import TEMPORAL_HISTORY_BYTES

#: A loaded spec up to this size is the load's own result (every spec of ordinary width).
INLINE_LOAD_BYTES = 192 * 1024
#: One part of a packed load: base64 text, so its JSON payload is this size plus quotes.
PART_CHARS = 192 * 1024
#: The largest loaded spec a run accepts: the workflow holds it in memory, parsed.
MAX_LOADED_SPEC_BYTES = 32 * 1024 * 1024
#: The largest packed load: a tenth of the history Temporal allows a run.
MAX_PACKED_CHARS = TEMPORAL_HISTORY_BYTES // 10


class SpecParts(BaseModel):
    """Where a packed load is kept and how to read it back."""

    model_config = FROZEN

    uri: str
    digest: str  # SHA-256 of the packed text
    count: int
    loaded_bytes: int  # the loaded spec's JSON, unpacked


class SpecLoad(BaseModel):
    """The load's result: the loaded spec itself, or the parts it was packed into."""

    model_config = FROZEN

    loaded: LoadedSpec | None = None
    parts: SpecParts | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_load(cls, data: Any) -> Any:
        """Histories from before parts recorded the loaded spec itself as the result."""
        if isinstance(data, dict) and "spec" in data:
            return {"loaded": data}
        return data

    @model_validator(mode="after")
    def _one_form(self) -> SpecLoad:
        if (self.loaded is None) == (self.parts is None):
            raise ValueError("a spec load is either the loaded spec or its parts, exactly one")
        return self

    def whole(self) -> LoadedSpec:
        """The loaded spec a load returned itself (one without parts).

        Raises:
            ValueError: the load came in parts.
        """
        if self.loaded is None:
            raise ValueError("this spec load came in parts")
        return self.loaded


class LoadPartInput(BaseModel):
    """One part of a packed load to read back."""

    model_config = FROZEN

    parts: SpecParts
    index: int


class LoadPart(BaseModel):
    """One part's text, with its place."""

    model_config = FROZEN

    index: int
    text: str


def pack(loaded_json: str) -> tuple[str, str]:
    """The packed text of a loaded spec's JSON, and its digest."""
    packed = base64.b64encode(zlib.compress(loaded_json.encode(), 6)).decode("ascii")
    return packed, hashlib.sha256(packed.encode()).hexdigest()


def part_count(packed: str) -> int:
    """How many parts a packed text is read back in."""
    return max(1, -(-len(packed) // PART_CHARS))


def part_of(packed: str, index: int) -> str:
    """The `index`-th part of a packed text."""
    return packed[index * PART_CHARS : (index + 1) * PART_CHARS]


def unpack(parts: SpecParts, texts: list[LoadPart]) -> LoadedSpec:
    """The loaded spec the parts make up.

    Raises:
        ValueError: the parts are not the ones packed (missing, reordered or changed).
    """
    ordered = sorted(texts, key=lambda part: part.index)
    if [part.index for part in ordered] != list(range(parts.count)):
        raise ValueError(f"the packed spec at {parts.uri} came back with parts missing")
    packed = "".join(part.text for part in ordered)
    if hashlib.sha256(packed.encode()).hexdigest() != parts.digest:
        raise ValueError(f"the packed spec at {parts.uri} changed since it was written")
    return LoadedSpec.model_validate_json(zlib.decompress(base64.b64decode(packed)))
