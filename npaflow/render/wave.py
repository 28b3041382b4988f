"""Rendering one wave to SkyPilot 0.12 YAML (reference §8, skypilot ref §5–§6).

A one-step wave becomes a serial pipeline; a batch of two or more group
members becomes a JobGroup whose tasks all run and must all end. Pure: the
renderer never reads the environment and never sees a secret value.
"""

from __future__ import annotations

import hashlib
import shlex

from pydantic import BaseModel, JsonValue

from npaflow.catalog.models import ToolCatalog, ToolEntry
from npaflow.errors import RenderError
from npaflow.ids import RunId
from npaflow.images import NO_BINDING, ImageBinding, launch_image
from npaflow.presets import FROZEN
from npaflow.render.guard import assert_no_unresolved_placeholders
from npaflow.render.resources import kubernetes_config, normalize_resources
from npaflow.render.wave_yaml import dump_wave_yaml
from npaflow.runtime.environment import EnvVar
from npaflow.spec.validate_contracts import profile_num_nodes
from npaflow.steps import PlanStep
from npaflow.traversal.models import Wave, WaveKind
from npaflow.waves import job_name, sanitize_task_name

#: Key of the `_metadata` entry that lets a launch be matched exactly later.
LAUNCH_TOKEN_KEY = "npaflow_launch_token"


class RenderOptions(BaseModel):
    """Everything about one launch attempt that is not in the wave itself."""

    model_config = FROZEN

    run_id: RunId
    workflow: str
    attempt: int = 1
    project: str = "default"
    aws_endpoint_url: str = ""
    secret_env: tuple[str, ...] = ()
    infra: str = ""  # written into every task's resources.infra
    images: ImageBinding = NO_BINDING  # overrides and the digests preflight pinned


class RenderedWave(BaseModel):
    """A rendered wave attempt: the YAML plus the identities the launch needs."""

    model_config = FROZEN

    job_name: str
    execution: WaveKind
    task_names: tuple[str, ...]
    launch_token: str
    fence_sequence: int
    attempt: int
    secret_names: tuple[str, ...]
    yaml: str


def logical_launch_id(project: str, run_id: RunId, key: str, attempt: int, states: list[str]) -> str:
    """Return the deterministic id of one logical launch (reference §6.4.1)."""
    digest = hashlib.sha256(
        "\0".join([project, run_id, key, str(attempt), ",".join(states)]).encode("utf-8")
    ).hexdigest()
    return f"npa-launch-{digest[:32]}"


def _unique_task_names(steps: tuple[PlanStep, ...]) -> list[str]:
    names: list[str] = []
    for step in steps:
        base = sanitize_task_name(step.task_name)
        name, count = base, 1
        while name in names:
            count += 1
            name = f"{base}-{count}"
        names.append(name)
    return names


def build_run_script(step: PlanStep, entry: ToolEntry | None) -> str:
    """Return the task's `run`: the tool's preamble, then the quoted command.

    Raises:
        RenderError: the step resolved to no command.
    """
    if step.argv:
        command = " ".join(shlex.quote(part) for part in step.argv)
    elif step.shell.strip():
        command = f"bash -c {shlex.quote(step.shell)}"
    else:
        raise RenderError(
            f"state {step.state}: planned step '{step.state}' has no command to "
            "render; give it run.shell, run.argv or a toolRef whose argv is not empty"
        )
    preamble = entry.run_preamble.strip() if entry else ""
    return f"{preamble}\n{command}" if preamble else command


def build_task(
    step: PlanStep,
    name: str,
    *,
    catalog: ToolCatalog,
    envs: dict[str, str],
    token: str,
    infra: str = "",
    images: ImageBinding = NO_BINDING,
) -> dict[str, JsonValue]:
    """Return one SkyPilot task document for a step (reference §8.3 key order).

    The image is the one `images` selects, launched by the digest preflight pinned.

    Raises:
        RenderError: no command, or a bad num_nodes.
    """
    entry = catalog.get(step.tool_ref) if step.tool_ref else None
    resources = normalize_resources(step.resources_profile, infra)
    image = launch_image(step, catalog, images).launched
    if image:
        resources["image_id"] = f"docker:{image}"
    task: dict[str, JsonValue] = {
        "name": name,
        "resources": resources,
        "envs": {**envs, "NPA_WORKFLOW_STATE": name},
        "run": build_run_script(step, entry),
    }
    try:
        nodes = profile_num_nodes(step.resources_profile)
    except ValueError as exc:
        raise RenderError(f"state {step.state}: {exc}") from None
    if nodes > 1:
        task["num_nodes"] = nodes
    config = kubernetes_config(step.resources_profile)
    if config:
        task["config"] = config
    if entry and entry.setup.strip():
        task["setup"] = entry.setup
    task["_metadata"] = {LAUNCH_TOKEN_KEY: token}
    return task


def render_wave(
    wave: Wave, catalog: ToolCatalog, options: RenderOptions, *, execution: WaveKind | None = None
) -> RenderedWave:
    """Render one wave attempt to SkyPilot YAML.

    The execution mode follows the batch size unless forced: a forced JobGroup
    needs two or more tasks; a forced serial pipeline chains every step.

    Raises:
        RenderError: the wave cannot become valid SkyPilot YAML.
    """
    name = job_name(options.run_id, wave.sequence, wave.label, options.attempt)
    token = logical_launch_id(options.project, options.run_id, str(wave.key), options.attempt, wave.states)
    execution = execution or (WaveKind.PARALLEL if len(wave.steps) > 1 else WaveKind.SERIAL)
    if execution is WaveKind.PARALLEL and len(wave.steps) < 2:
        raise RenderError(
            f"a SkyPilot JobGroup needs at least two tasks; wave {wave.key} has "
            f"{len(wave.steps)} (render it as a serial pipeline)"
        )
    envs = {
        "NPA_WORKFLOW_NAME": options.workflow,
        "NPA_WORKFLOW_RUN_ID": options.run_id,
        "NPA_WORKFLOW_ATTEMPT_ID": token,
        "NPA_WORKFLOW_FENCE_SEQUENCE": str(wave.sequence),
        "NPA_WORKFLOW_FENCE_ATTEMPT": str(options.attempt),
    }
    if options.aws_endpoint_url:
        envs[EnvVar.AWS_ENDPOINT_URL.value] = options.aws_endpoint_url
    names = _unique_task_names(wave.steps)
    tasks = [
        build_task(
            step,
            task_name,
            catalog=catalog,
            envs=envs,
            token=token,
            infra=options.infra,
            images=options.images,
        )
        for step, task_name in zip(wave.steps, names, strict=True)
    ]
    text = dump_wave_yaml({"name": name, "execution": execution.value}, tasks)
    assert_no_unresolved_placeholders(text)
    return RenderedWave(
        job_name=name,
        execution=execution,
        task_names=tuple(names),
        launch_token=token,
        fence_sequence=wave.sequence,
        attempt=options.attempt,
        secret_names=tuple(sorted(set(options.secret_env))),
        yaml=text,
    )
