"""`npaflow replay-check`: replay recorded histories against this code before a rollout.

A history that this code cannot replay (nondeterminism) is a run that would
fail on its next workflow task if it moved to this build; `deployment promote`
runs the same check and refuses on any failure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from npaflow.document.text_file import read_document
from npaflow.errors import UsageError
from npaflow.runtime.contract import WORKFLOW_TYPE
from npaflow.temporal.data_converter import DATA_CONVERTER
from worker.input_count import InputCount
from worker.logging import replayed_drops_silenced
from workflows_def import WORKFLOWS

#: Largest exported history read (Temporal's own limit is 50 MiB of binary history).
MAX_HISTORY_BYTES = 256 * 2**20
#: The runs a replay check reads from the server by default: the newest runs of the run workflow.
DEFAULT_QUERY = f"WorkflowType = '{WORKFLOW_TYPE}'"


@dataclass
class ReplayReport:
    """How many histories replayed, and each one that did not, by run id."""

    replayed: int = 0
    failures: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """What `replay-check` prints."""
        text = [f"replayed {self.replayed} histories: {len(self.failures)} failed"]
        text += [f"  {run_id}: {message}" for run_id, message in sorted(self.failures.items())]
        return text


def _under_its_own_id(history: WorkflowHistory) -> WorkflowHistory:
    started = history.events[0].workflow_execution_started_event_attributes if history.events else None
    ran_as = started.workflow_id if started is not None else ""
    return dataclasses.replace(history, workflow_id=ran_as) if ran_as else history


def histories_in(directory: Path) -> list[WorkflowHistory]:
    """Exported JSON histories (`temporal workflow show --output json`), each under the id it ran as.

    A run's own id is part of what it does (its quota lease ids are made of it), so a
    history replays under the workflow id its first event names; the file's stem when
    that is missing.

    Raises:
        SpecError: a file is not a regular UTF-8 file within MAX_HISTORY_BYTES.
        UsageError: a file is not an exported history, or there is none.
    """
    histories = []
    for path in sorted(directory.glob("*.json")):
        text = read_document(path, "exported history", MAX_HISTORY_BYTES)
        try:
            history = WorkflowHistory.from_json(path.stem, text)
        except Exception as exc:  # noqa: BLE001 - JSON or protobuf parse errors alike: the file's fault
            raise UsageError(
                f"--histories {path}: not a history exported with 'temporal workflow show "
                f"--output json' ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
            ) from None
        histories.append(_under_its_own_id(history))
    if not histories:  # a check of nothing is no pass: a mistyped directory would go green
        raise UsageError(
            f"--histories {directory}: no exported histories (*.json) in it, so nothing would be "
            "checked; export one with 'temporal workflow show --workflow-id ID --output json > "
            f"{directory}/ID.json'"
        )
    return histories


async def histories_from(client: Client, query: str, limit: int) -> AsyncIterator[WorkflowHistory]:
    """The newest `limit` histories matching the visibility query."""
    async for execution in client.list_workflows(query, limit=limit):
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        yield await handle.fetch_history()


async def each(histories: Iterable[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    """Files and server histories through one async stream."""
    for history in histories:
        yield history


async def replay(histories: AsyncIterator[WorkflowHistory]) -> ReplayReport:
    """Replay each history on this code's workflows; collect the failures instead of raising."""
    from worker.main import workflow_runner  # the workers' own runner

    replayer = Replayer(
        workflows=WORKFLOWS,
        data_converter=DATA_CONVERTER,
        workflow_runner=workflow_runner(),
        interceptors=[InputCount()],
    )
    report = ReplayReport()
    with replayed_drops_silenced():
        async with replayer.workflow_replay_iterator(histories) as results:
            async for result in results:
                report.replayed += 1
                if result.replay_failure is not None:
                    report.failures[result.history.workflow_id] = str(result.replay_failure)[:500]
    return report
