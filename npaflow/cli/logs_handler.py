"""`npaflow logs`: the end of each job's logs, read by the run's backend on the job's own worker."""

from __future__ import annotations

import difflib
import shlex
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)

from npaflow.cli.ledger_waves import ledger_waves
from npaflow.cli.status_query import queried_status
from npaflow.errors import UsageError
from npaflow.options.runs import LogsOptions
from npaflow.printable import colours_kept, printable
from npaflow.runtime.contract import LOGS_WORKFLOW_TYPE, RunMemo
from npaflow.runtime.reads import JobLogsRequest, JobLogsResult, job_log_reads
from npaflow.runtime.request import BackendName
from npaflow.runtime.summary import WaveView
from npaflow.temporal.client import (
    connect_to,
    describe_or_fail,
    query_wait,
    started_request,
    task_queue_from,
)
from npaflow.temporal.helper_runs import require_worker, run_helper
from npaflow.waves import wave_text


async def read_logs(
    client: Client, run_id: str, state: str, tail: int, task_queue: str = ""
) -> list[tuple[WaveView, str]]:
    """Each launched wave of the run (of `state` when given) with the end of its job's logs.

    The logs are read on `task_queue` (default: the run's own).

    Raises:
        UsageError: no such run, no worker answers it, or it has no job of `state`.
    """
    handle = client.get_workflow_handle(run_id)
    description = await describe_or_fail(handle)
    task_queue = task_queue or description.task_queue or ""
    backend, launched = await _launched(client, handle, description, task_queue)
    waves = [w for w in launched if not state or state in w.states]
    task = state
    if state and not waves:
        waves, task = _member_of_item(launched, state)
    if state and not waves:
        known = sorted({name for w in launched for name in w.states})
        items = sorted({item for w in launched for item in w.items if item})
        close = difflib.get_close_matches(state, known + items, n=1)
        raise UsageError(
            f"run {run_id} has no job of state {_quoted(state)}"
            + (f" (did you mean {_quoted(close[0])}?)" if close else "")
            + f"; states with jobs: {', '.join(known) or 'none yet'}"
            + _items_hint(launched)
        )
    result = await run_helper(
        client,
        LOGS_WORKFLOW_TYPE,
        JobLogsRequest(jobs=job_log_reads(waves, backend, task, tail)),
        name=f"logs:{run_id}",
        task_queue=task_queue,
        result_type=JobLogsResult,
    )
    return [(wave, entry.text) for wave, entry in zip(waves, result.logs, strict=True)]


def _items_hint(launched: list[WaveView]) -> str:
    """How to name one fan-out member, when the run has any (its first item as the example)."""
    items = [item for wave in launched for item in wave.items if item]
    return f", or a fan-out member's item (e.g. --state {shlex.quote(items[0])})" if items else ""


def _quoted(name: str) -> str:
    """A name in single quotes, as a shell takes it back (`'a; b'`, `'it'"'"'s'`)."""
    quoted = shlex.quote(name)
    return quoted if quoted != name else f"'{name}'"


def _member_of_item(launched: list[WaveView], name: str) -> tuple[list[WaveView], str]:
    """The attempts that ran the fan-out member `name` names, and its task name.

    A member is named by its item (as status shows it), by its task name (as the logs
    head it: `tokenize-shard-3a48865a6b3a`) or by its item key alone.
    """
    for wave in reversed(launched):
        for names in _member_names(wave):
            if name in names:  # not the retries that carried it: their jobs did not run it
                ran = [w for w in launched if w.key == wave.key and names[1] not in w.carried]
                return ran, names[0]
    return [], ""


def _member_names(wave: WaveView) -> list[tuple[str, str, str]]:
    """Each fan-out member of a batch by the names it answers to: task name, item key, item label."""
    return [
        (f"{member.state}-{member.item}", member.item, label)
        for member, label in zip(wave.key.members, wave.items, strict=False)
        if member.item
    ]


async def _launched(
    client: Client,
    handle: WorkflowHandle[Any, Any],
    description: WorkflowExecutionDescription,
    task_queue: str,
) -> tuple[BackendName, list[WaveView]]:
    """The run's backend and every attempt that launched a job.

    An ended run whose ledger is complete is read from the ledger: its query needs a
    worker of the version the run was pinned to, which a later deploy may have retired.
    A running run (or one whose ledger is behind) answers its status query.
    """
    run_queue = description.task_queue or ""
    ended = description.status is not WorkflowExecutionStatus.RUNNING
    memo = RunMemo.read(await description.memo())
    if ended and memo.ledger_uri and not memo.ledger_behind:
        return await _from_ledger(client, handle, memo.ledger_uri, task_queue)
    seconds, served = await query_wait(client, run_queue, 30)
    try:
        view = await queried_status(handle, seconds)
    except Exception as exc:  # noqa: BLE001 - queries need a worker: say so
        if ended and memo.ledger_uri:
            return await _from_ledger(client, handle, memo.ledger_uri, task_queue)
        nobody = f"no worker polls task queue '{run_queue}'" if not served else "no worker answered"
        raise UsageError(
            f"run {handle.id}: {nobody} ({type(exc).__name__}); logs are "
            "read by workers (start one with 'npaflow worker')"
        ) from None
    return view.backend, [w for w in view.waves if w.job_id]


async def _from_ledger(
    client: Client, handle: WorkflowHandle[Any, Any], ledger_uri: str, task_queue: str
) -> tuple[BackendName, list[WaveView]]:
    await require_worker(client, task_queue, "logs are read by workers")
    backend = (await started_request(client, handle)).backend
    failing = f"run {handle.id}: its ledger could not be read"
    waves, _ = await ledger_waves(client, handle.id, ledger_uri, task_queue, failing=failing)
    return backend, [wave for wave in waves if wave.job_id]


def logs_text(run_id: str, state: str, logs: list[tuple[WaveView, str]]) -> str:
    """The logs as `npaflow logs` prints them, one block per job."""
    if not logs:
        return f"run {run_id} has no launched jobs" + (f" for state {state}" if state else "")
    return "\n".join(
        f"### {_wave_name(wave)} attempt {wave.attempt} job {wave.job_id} ({wave.status.value})\n"
        + _members_by_item(wave, state)
        + (text or "(no logs)")
        for wave, text in logs
    )


def _wave_name(wave: WaveView) -> str:
    """A plain wave by its key; a fan-out batch by its members' items (its key lists every member)."""
    if not wave.items:
        return str(wave.key)
    return f"wave {wave.key.sequence:03d} {printable(wave_text(wave.states, wave.items))}"


def _members_by_item(wave: WaveView, chosen: str = "") -> str:
    """A fan-out batch's task names with the item each ran (`# tokenize-shard-3a48865a6b3a: shard-001`).

    When `chosen` names one member (its item, task name or item key), only that one.
    """
    rows = [names for names in _member_names(wave) if names[1] not in wave.carried]  # those it ran
    picked = [names for names in rows if chosen and chosen in names] or rows
    return "".join(f"# {task}: {printable(label)}\n" for task, _, label in picked)


async def logs(options: LogsOptions) -> int:
    """Print the end of each job's logs, read by the run's backend on the job's own worker.

    Colours stay; any other escape sequence a job printed is shown, not obeyed (unless --raw).
    """
    client = await connect_to(options)
    found = await read_logs(
        client, options.run_id, options.state, options.tail, task_queue_from(options.task_queue)
    )
    text = logs_text(options.run_id, options.state, found)
    print(text if options.raw else colours_kept(text))
    return 0
