"""A wave's GPU demand, as a quota pool counts it: accelerators x nodes x members in the batch."""

from __future__ import annotations

import math
from collections.abc import Iterable

from npaflow.runtime.usage import task_shapes
from npaflow.steps import PlanStep


def wave_accelerators(steps: Iterable[PlanStep]) -> dict[str, int]:
    """Accelerator type -> how many a wave of these steps holds at once (CPU-only steps count none)."""
    demand: dict[str, int] = {}
    for shape in task_shapes(steps):
        if shape.accelerator and shape.accelerators_per_node:
            count = math.ceil(shape.accelerators_per_node) * shape.nodes
            demand[shape.accelerator] = demand.get(shape.accelerator, 0) + count
    return demand


def gpus_of(demand: dict[str, int], accelerator: str = "") -> int:
    """GPUs of `accelerator` ("" = every type) in a demand."""
    wanted = accelerator.lower()
    return sum(count for kind, count in demand.items() if not wanted or kind.lower() == wanted)
