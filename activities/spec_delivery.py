"""How a loaded spec reaches the workflow: as the load's result, or packed beside the ledger in parts.

A load past one payload's budget is packed once (npaflow/runtime/spec_parts.py),
written under its digest beside the ledger, and read back part by part by
`read_load_part`. Its spec text is written to the ledger's `workflow.yaml` here,
so the first ledger export does not carry it as an activity input either.
"""

from __future__ import annotations

from temporalio import activity

from activities.context import ActivityContext
from activities.errors import mapped_errors
from npaflow.errors import SpecError, SpecIssue
from npaflow.runtime.contract import READ_LOAD_PART, spec_file_uri
from npaflow.runtime.ledger_layout import SPEC_PARTS_DIR, ledger_file_uri
from npaflow.runtime.loaded import LoadedSpec
from npaflow.runtime.spec_parts import (
    INLINE_LOAD_BYTES,
    MAX_LOADED_SPEC_BYTES,
    MAX_PACKED_CHARS,
    LoadPart,
    LoadPartInput,
    SpecLoad,
    SpecParts,
    pack,
    part_count,
    part_of,
)


def _too_big(source: str, what: str, size: int, limit: int) -> SpecError:
    return SpecError(
        [
            SpecIssue(
                file=source,
                message=f"the {what} is {size / 2**20:.1f} MiB; a run's spec must load to at most "
                f"{limit / 2**20:.1f} MiB (the workflow holds it, and its history keeps it once)",
                hint="split the workflow into smaller specs, or shorten repeated blocks "
                "(YAML aliases are expanded when the spec loads)",
            )
        ]
    )


class SpecDelivery:
    """Hands a loaded spec to the workflow within Temporal's payload limits."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    async def deliver(self, loaded: LoadedSpec, source: str) -> SpecLoad:
        """The load's result: the spec itself when it is small, else where its parts are kept.

        Raises:
            SpecError: the spec loads past what a run can hold.
        """
        text = loaded.model_dump_json()
        if len(text) <= INLINE_LOAD_BYTES:
            return SpecLoad(loaded=loaded)
        if len(text) > MAX_LOADED_SPEC_BYTES:
            raise _too_big(source, "loaded spec", len(text), MAX_LOADED_SPEC_BYTES)
        yaml_uri = spec_file_uri(loaded.ledger_uri)
        await self.context.storage.for_ledger(yaml_uri).write_text(
            yaml_uri, loaded.workflow_yaml, "application/yaml"
        )
        packed, digest = pack(loaded.model_copy(update={"workflow_yaml": ""}).model_dump_json())
        if len(packed) > MAX_PACKED_CHARS:
            raise _too_big(source, "packed spec", len(packed), MAX_PACKED_CHARS)
        uri = ledger_file_uri(loaded.ledger_uri, f"{SPEC_PARTS_DIR}/{digest}.txt")
        await self.context.storage.for_ledger(uri).write_text(uri, packed, "text/plain")
        return SpecLoad(
            parts=SpecParts(uri=uri, digest=digest, count=part_count(packed), loaded_bytes=len(text))
        )

    @activity.defn(name=READ_LOAD_PART.name)
    @mapped_errors
    async def read_load_part(self, request: LoadPartInput) -> LoadPart:
        """One part of a packed load (the workflow checks the whole against its digest)."""
        uri = request.parts.uri
        packed = await self.context.storage.for_ledger(uri).read_text(uri, max_bytes=MAX_PACKED_CHARS)
        return LoadPart(index=request.index, text=part_of(packed, request.index))
