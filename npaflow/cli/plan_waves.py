"""`npaflow plan-spec --waves`: the launch waves a run would take, their files, images and GPU demand.

Apart from plan_spec.py because naming a wave's file and images needs the
render and image modules, which the step view never loads.
"""

from __future__ import annotations

import json

from npaflow.catalog.models import ToolCatalog
from npaflow.cli.commands.render import wave_file_name
from npaflow.cli.image_flags import image_binding
from npaflow.document.models import WorkflowSpec
from npaflow.images import ImageBinding
from npaflow.images import wave_images as images_of_wave
from npaflow.options.spec import PreviewOptions
from npaflow.plan import ExecutionPlan, Occurrence
from npaflow.runtime.gpu_demand import gpus_of, wave_accelerators
from npaflow.steps import cache_mark


def print_waves(
    options: PreviewOptions, plan: ExecutionPlan, spec: WorkflowSpec, catalog: ToolCatalog
) -> int:
    """Print the plan's waves (text or --json), with the images each launches once any is set."""
    launched = wave_images(plan, catalog, image_binding(options, spec, catalog))
    if options.as_json:
        payload = plan.waves_to_dict()
        if launched:
            payload["images"] = {name: list(images) for name, images in launched.items()}
        demand = {wave_file_name(plan.run_id, w): gpus_of(wave_accelerators(w.steps)) for w in plan.waves}
        payload["gpu_demand"] = dict(demand.items())
        payload["peak_gpus"] = max(demand.values(), default=0)
        if options.quota_pool:
            payload["quota_pool"] = options.quota_pool
        print(json.dumps(payload, indent=2, sort_keys=True))
    else:
        pool = options.quota_pool
        print("\n".join(format_waves(plan, max(0, options.max_concurrency), launched, pool)))
    return 0


def wave_images(plan: ExecutionPlan, catalog: ToolCatalog, binding: ImageBinding) -> dict[str, list[str]]:
    """Wave file name -> the image each member launches (`repo@sha256:...` once resolved); none: {}."""
    launched = {
        wave_file_name(plan.run_id, wave): [
            image.launched for image in images_of_wave(wave, catalog, binding)
        ]
        for wave in plan.waves
    }
    return launched if any(image for images in launched.values() for image in images) else {}


def _members_text(occurrence: Occurrence) -> str:
    """The occurrence's steps; a fan-out's as its template and where its items come from."""
    mark = occurrence.batches[0].fan_out
    if mark is None:
        return ", ".join(step.task_name + cache_mark(step) for step in occurrence.steps)
    template = occurrence.steps[0]
    if not mark.known:
        return (
            f"{template.state}{cache_mark(template)} × up to {mark.count:,} items from {mark.items_uri} "
            "(read at run time)"
        )
    return f"{template.state}{cache_mark(template)} × {mark.count} items from {mark.items_uri}"


def format_waves(
    plan: ExecutionPlan, cap: int = 0, launched: dict[str, list[str]] | None = None, pool: str = ""
) -> list[str]:
    """One line per occurrence: `NN. [kind] name: s1, s2[ maxConcurrency=K batches=B]`.

    K is the bound that applies: the spec's, or `--max-concurrency` where it is lower.
    With `launched`, each wave's images follow on their own lines; with `pool`, each wave
    that holds GPUs names the quota pool it would wait on.
    """
    lines = []
    for occurrence in plan.occurrences():
        text = f"{occurrence.index:02d}. [{occurrence.kind.value}] {occurrence.name}: " + _members_text(
            occurrence
        )
        if occurrence.group:
            declared = occurrence.max_concurrency
            bound = f"{cap} (spec {declared}, --max-concurrency)" if 0 < cap < declared else f"{declared}"
            text += f" maxConcurrency={bound} batches={len(occurrence.batches)}"
        text += " -> " + ", ".join(wave_file_name(plan.run_id, w) for w in occurrence.batches)
        gpus = [gpus_of(wave_accelerators(wave.steps)) for wave in occurrence.batches]
        if any(gpus):
            text += " gpus=" + ",".join(str(n) for n in gpus) + (f" quota={pool}" if pool else "")
        lines.append(text)
        for wave in occurrence.batches:
            images = sorted(
                {image for image in (launched or {}).get(wave_file_name(plan.run_id, wave), []) if image}
            )
            lines.extend(f"    image {image}" for image in images)
    peak = max((gpus_of(wave_accelerators(wave.steps)) for wave in plan.waves), default=0)
    if peak:
        lines.append(f"peak GPU demand: {peak} (the widest wave; waves run one after another)")
    return lines
