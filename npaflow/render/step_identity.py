"""The step as it would run, for its stage-cache key: the task the renderer builds, minus run identity.

The launch token, the run's own environment (run id, attempt, fence) and the
run id inside any text are left out or written back as `{{run.id}}`, so two
runs of one spec key alike; the secret environment is keyed by name only.
"""

from __future__ import annotations

import json

from pydantic import JsonValue

from npaflow.cache.key import StepIdentity, symbolic
from npaflow.catalog.models import ToolCatalog
from npaflow.images import NO_BINDING, ImageBinding
from npaflow.render.wave import build_task, sanitize_task_name
from npaflow.steps import PlanStep

#: Task fields that carry the launch's identity rather than the work.
_IDENTITY_FIELDS = ("_metadata", "envs")


def step_identity(
    step: PlanStep,
    catalog: ToolCatalog,
    *,
    run_id: str,
    infra: str,
    secret_names: tuple[str, ...],
    images: ImageBinding = NO_BINDING,
) -> StepIdentity:
    """The step's task as rendered for any run of this spec.

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
    text = symbolic(json.dumps(kept, sort_keys=True), run_id)
    document: dict[str, JsonValue] = json.loads(text)
    return StepIdentity(task=document, secret_names=tuple(sorted(set(secret_names))))
