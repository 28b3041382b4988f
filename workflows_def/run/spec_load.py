"""The run's first step: load its spec, and read it back in parts when it was packed.

A spec of ordinary width is the load's own result; a wide one comes back as the
place its packed parts are kept (npaflow/runtime/spec_parts.py), each part one
local activity and one payload under Temporal's warning.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import ApplicationError

from npaflow.errors import ErrorType
from npaflow.ids import RunId
from npaflow.runtime.contract import LOAD_SPEC, READ_LOAD_PART
from npaflow.runtime.loaded import LoadedSpec, LoadSpecInput
from npaflow.runtime.request import RunRequest
from npaflow.runtime.spec_parts import LoadPartInput, unpack
from workflows_def import patches
from workflows_def.activity_calls import SHORT_RETRY, call, call_local


async def load_run_spec(run_id: RunId, request: RunRequest) -> LoadedSpec:
    """The run's loaded spec (validated, with what its ledger holds), however it travelled."""
    load = call_local if patches.loads_locally() else call  # a local activity: no task of its own
    result = await load(
        LOAD_SPEC,
        LoadSpecInput(
            run_id=run_id,
            spec=request.spec,
            spec_uri=request.spec_uri,
            vars=request.vars,
            allow_new_vars=request.allow_new_vars,
            catalogs=request.catalogs,
            assume_decision=request.assume_decision,
            accepted_change=request.accepted_change,
        ),
        start_to_close_timeout=timedelta(minutes=2),
        retry_policy=SHORT_RETRY,
        summary=f"load spec {request.spec_uri or '(inline)'}",
    )
    parts = result.parts
    if parts is None:
        return result.whole()
    texts = [
        await load(
            READ_LOAD_PART,
            LoadPartInput(parts=parts, index=index),
            start_to_close_timeout=timedelta(minutes=1),
            retry_policy=SHORT_RETRY,
            summary=f"read spec part {index + 1} of {parts.count}",
        )
        for index in range(parts.count)
    ]
    try:
        return unpack(parts, texts)
    except ValueError as error:
        raise ApplicationError(str(error), type=ErrorType.SPEC.value, non_retryable=True) from None
