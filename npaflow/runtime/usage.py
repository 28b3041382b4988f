"""GPU-hours and node-hours per wave attempt, per state and per run, from the job timelines.

A task's hours are `(end_at - start_at) x num_nodes` node-hours and that times
its accelerator count per node in GPU-hours (CPU-only tasks have node-hours
only). A task still running is counted up to the latest observation. Attempts
that did not succeed are totalled separately as "spent on failed attempts".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel, Field, JsonValue

from npaflow.presets import STRICT
from npaflow.runtime.timestamps import epoch_seconds
from npaflow.spec.validate_contracts import profile_num_nodes
from npaflow.steps import PlanStep

#: GPU-hours (and node-hours) are printed with this many decimals everywhere: ledger views,
#: status, list, the pages, the Temporal UI, the cache and quota commands (one clock, one figure).
HOURS_DECIMALS = 4


def gpu_hours_text(hours: float) -> str:
    """Hours as every surface prints them (4 decimals: 0.0056 GPU-h is 20 GPU-seconds)."""
    return f"{hours:.{HOURS_DECIMALS}f}"


_COUNT = re.compile(r"^\s*([^:]+?)\s*(?::\s*(\d+(?:\.\d+)?))?\s*$")


class TimedTask(Protocol):
    """A task row of a job's timeline (`ledger.TaskRow`)."""

    @property
    def task_id(self) -> int: ...  # noqa: D102
    @property
    def start_at(self) -> str: ...  # noqa: D102
    @property
    def end_at(self) -> str: ...  # noqa: D102


class TaskShape(BaseModel):
    """What one task of a wave holds while it runs: nodes, and accelerators on each."""

    model_config = STRICT

    task_name: str
    state: str
    nodes: int = 1
    accelerator: str = ""  # e.g. "H100"; "" for CPU-only
    accelerators_per_node: float = 0


class Usage(BaseModel):
    """Hours spent; the failed_* part is what attempts that did not succeed spent."""

    model_config = STRICT

    gpu_hours: float = 0.0
    node_hours: float = 0.0
    failed_gpu_hours: float = 0.0
    failed_node_hours: float = 0.0

    def add(self, gpu_hours: float, node_hours: float, *, failed: bool) -> None:
        """Count one attempt's hours (also into failed_* when it did not succeed)."""
        self.gpu_hours += gpu_hours
        self.node_hours += node_hours
        if failed:
            self.failed_gpu_hours += gpu_hours
            self.failed_node_hours += node_hours

    def rounded(self) -> Usage:
        """Rounded for documents (hours to 1/10,000: a third of a second)."""
        return Usage(**{name: round(getattr(self, name), 4) + 0.0 for name in Usage.model_fields})  # no -0.0


class RunUsage(Usage):
    """The run's totals and each state's share."""

    by_state: dict[str, Usage] = Field(default_factory=dict)

    def rounded(self) -> RunUsage:
        """Rounded for documents."""
        return RunUsage(
            **Usage.rounded(self).model_dump(), by_state={k: v.rounded() for k, v in self.by_state.items()}
        )


def accelerator_count(value: JsonValue) -> tuple[str, float]:
    """`"H100:8"` or `{"H100": 8}` (or `"H100"`, one) as (type, count); ("", 0) when absent."""
    if isinstance(value, dict) and value:
        kind, count = next(iter(value.items()))
        return str(kind), _number(count)
    if isinstance(value, str) and value.strip():
        match = _COUNT.match(value)
        if match:
            return match.group(1), float(match.group(2)) if match.group(2) else 1.0
    return "", 0.0


def _number(value: JsonValue) -> float:
    try:
        return float(str(value))
    except ValueError:
        return 0.0


def task_shapes(steps: Iterable[PlanStep]) -> list[TaskShape]:
    """The shape of each task of a wave, from its steps' resolved resource profiles."""
    shapes = []
    for step in steps:
        kind, count = accelerator_count(step.resources_profile.get("accelerators"))
        try:
            nodes = profile_num_nodes(step.resources_profile)
        except ValueError:
            nodes = 1
        shapes.append(
            TaskShape(
                task_name=step.task_name,
                state=step.state,
                nodes=nodes,
                accelerator=kind,
                accelerators_per_node=count,
            )
        )
    return shapes


def task_hours(row: TimedTask, shape: TaskShape, now: str = "") -> tuple[float, float]:
    """(GPU-hours, node-hours) of one task: start to end, or to `now` while it runs."""
    start = epoch_seconds(row.start_at) if row.start_at else None
    end = epoch_seconds(row.end_at or now) if (row.end_at or now) else None
    if start is None or end is None or end <= start:
        return 0.0, 0.0
    node_hours = (end - start) / 3600 * shape.nodes
    return node_hours * shape.accelerators_per_node, node_hours


def attempt_hours(
    tasks: Iterable[TimedTask], shapes: list[TaskShape], now: str = ""
) -> dict[str, tuple[float, float]]:
    """Each state's (GPU-hours, node-hours) within one attempt.

    Rows match shapes by task id (member order), never by name: SkyPilot names
    a single-task job's task after the job.
    """
    hours: dict[str, tuple[float, float]] = {}
    for row in tasks:
        if not 0 <= row.task_id < len(shapes):
            continue
        shape = shapes[row.task_id]
        gpu, node = task_hours(row, shape, now)
        previous = hours.get(shape.state, (0.0, 0.0))
        hours[shape.state] = (previous[0] + gpu, previous[1] + node)
    return hours


def gpus_held(shapes: Iterable[TaskShape]) -> float:
    """Accelerators a wave holds while it runs (every node of every task): its GPU-hours per hour."""
    return sum(shape.nodes * shape.accelerators_per_node for shape in shapes)


def seconds_of_budget(budget: float, spent: float, gpus: float) -> float:
    """How long `gpus` may run before `spent` reaches `budget` GPU-hours (0 when already there)."""
    return max(0.0, (budget - spent) / gpus * 3600.0) if gpus > 0 else float("inf")


def usage_lines(usage: RunUsage) -> list[str]:
    """The run's GPU-hours (and node-hours), each state's share, and what failed attempts spent."""
    if not usage.node_hours:
        return []
    lines = [
        f"gpu_hours: {gpu_hours_text(usage.gpu_hours)} (node_hours {gpu_hours_text(usage.node_hours)}; "
        "spent on "
        f"failed attempts: {gpu_hours_text(usage.failed_gpu_hours)} GPU-h, "
        f"{gpu_hours_text(usage.failed_node_hours)} node-h)"
    ]
    for state, part in usage.by_state.items():
        failed = (
            f", failed attempts {gpu_hours_text(part.failed_gpu_hours)}" if part.failed_node_hours else ""
        )
        lines.append(
            f"  {state}: {gpu_hours_text(part.gpu_hours)} GPU-h, "
            f"{gpu_hours_text(part.node_hours)} node-h{failed}"
        )
    return lines
