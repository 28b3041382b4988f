"""The step as it would run, for its stage-cache key: the task the renderer builds, minus run identity.

It is rendered from the step's keyed twin (`PlanStep.keyed`: `{{run.id}}` resolved
as itself), and the launch token and the run's own environment (run id,
attempt, fence) are left out, so two runs of one spec key alike while a value
that merely contains a run id keys as that value; secrets are keyed by name only.
"""

from __future__ import annotations

import json

from pydantic import JsonValue

from npaflow.cache.key import StepIdentity
from npaflow.catalog.models import ToolCatalog
from npaflow.images import NO_BINDING, ImageBinding
from npaflow.render.wave import build_task
from npaflow.steps import PlanStep
from npaflow.waves import sanitize_task_name

#: Task fields that carry the launch's identity rather than the work.
_IDENTITY_FIELDS = ("_metadata", "envs")


def step_identity(
    step: PlanStep,
    catalog: ToolCatalog,
    *,
    infra: str,
    secret_names: tuple[str, ...],
    images: ImageBinding = NO_BINDING,
) -> StepIdentity:
    """The task of `step` (a keyed twin) as rendered for any run of this spec.

    Raises:
        RenderError: the step cannot be rendered (it could not launch either).
    """
    task = build_task(
        step,
        sanitize_task_name(step.task_name),
        catalog=catalog,
        envs={},
        token="",
        infra=infra,
        images=images,
    )
    kept = {key: value for key, value in task.items() if key not in _IDENTITY_FIELDS}
    document: dict[str, JsonValue] = json.loads(json.dumps(kept, sort_keys=True))
    return StepIdentity(task=document, secret_names=tuple(sorted(set(secret_names))))
