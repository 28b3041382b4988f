"""Every image a spec's plans would launch, and which states launch each.

A run takes one path through its transitions and loops, chosen by decisions
preflight cannot know, so it plans every path the decisions can choose (each
assumption) and checks the union: an image on a branch not taken today is
still verified before anything starts.
"""

from __future__ import annotations

from npaflow.catalog.models import ToolCatalog
from npaflow.images.binding import ImageBinding
from npaflow.images.selection import chosen_image
from npaflow.plan import ExecutionPlan
from npaflow.steps import PlanStep


def plan_images(
    plans: list[ExecutionPlan], catalog: ToolCatalog, binding: ImageBinding
) -> dict[str, list[str]]:
    """Image as chosen -> the states that launch it (`state#iteration`), first seen first."""
    images: dict[str, list[str]] = {}
    for plan in plans:
        for step in plan.steps:
            image = chosen_image(step, catalog, binding)
            if image:
                where = images.setdefault(image, [])
                label = _label(step)
                if label not in where:
                    where.append(label)
    return images


def _label(step: PlanStep) -> str:
    return f"{step.state}#{step.iteration}" if step.iteration else step.state
