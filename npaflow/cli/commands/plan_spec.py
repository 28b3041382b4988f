"""`npaflow plan-spec`: preview the steps or waves a run would take, or draw the spec as a graph."""

from __future__ import annotations

import argparse
import json
import sys
from enum import StrEnum

from npaflow.catalog.models import ToolCatalog
from npaflow.cli.commands.render import wave_file_name
from npaflow.cli.image_flags import add_image_arguments, add_resolve_argument, image_binding
from npaflow.cli.options import add_cap_argument, add_spec_arguments
from npaflow.cli.spec_loading import check_assumption, load_spec_for, preview_plan, warn_decision_sources
from npaflow.durations import duration_text
from npaflow.gc_pause import gc_paused
from npaflow.images import ImageBinding
from npaflow.images import wave_images as images_of_wave
from npaflow.plan import DEFAULT_PLAN_RUN_ID, ExecutionPlan
from npaflow.runtime.gpu_demand import gpus_of, wave_accelerators
from npaflow.steps import PlanStep


class PlanFormat(StrEnum):
    """How `plan-spec` prints: the plan (text, json) or the spec as a graph (mermaid, dot, svg)."""

    TEXT = "text"
    JSON = "json"
    MERMAID = "mermaid"
    DOT = "dot"
    SVG = "svg"


def add(plan: argparse.ArgumentParser) -> None:
    """The arguments of `plan-spec`."""
    add_spec_arguments(plan)
    plan.add_argument("--run-id", default=DEFAULT_PLAN_RUN_ID, help="run id used for {{run.id}}")
    plan.add_argument(
        "--assume-decision", default="", help="decision assumed for every gate (promote | loop_back)"
    )
    plan.add_argument("--waves", action="store_true", help="fold steps into launch waves")
    plan.add_argument(
        "--format",
        choices=[f.value for f in PlanFormat],
        default=PlanFormat.TEXT.value,
        help="text or json: the plan under the assumption; mermaid, dot or svg: the spec as a graph "
        "(every state, branch, loop and group; no assumption needed; svg is laid out by npaflow, "
        "as on the run page and in report.html)",
    )
    add_cap_argument(plan)
    add_image_arguments(plan)
    add_resolve_argument(plan)
    plan.set_defaults(handler=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    """Plan the spec and print steps or waves, or draw the spec as a graph."""
    check_assumption(args.assume_decision)
    if args.format == PlanFormat.SVG:
        from npaflow.picture import spec_svg

        sys.stdout.write(spec_svg(load_spec_for(args)[0]) + "\n")
        return 0
    if args.format in (PlanFormat.MERMAID, PlanFormat.DOT):
        from npaflow.spec_graph import spec_graph, to_dot, to_mermaid

        spec, _ = load_spec_for(args)
        graph = spec_graph(spec)
        sys.stdout.write(to_mermaid(graph) if args.format == PlanFormat.MERMAID else to_dot(graph))
        return 0
    args.json = args.json or args.format == PlanFormat.JSON
    with gc_paused():
        spec, catalog = load_spec_for(args)
        if not args.assume_decision:
            warn_decision_sources(args, spec, catalog)
        plan = preview_plan(args, spec, catalog)
        launched = wave_images(plan, catalog, image_binding(args, spec, catalog)) if args.waves else {}
    if args.json:
        payload = plan.waves_to_dict() if args.waves else plan.to_dict()
        if launched:
            payload["images"] = {name: list(images) for name, images in launched.items()}
        if args.waves:
            demand = {wave_file_name(plan.run_id, w): gpus_of(wave_accelerators(w.steps)) for w in plan.waves}
            payload["gpu_demand"] = dict(demand.items())
            payload["peak_gpus"] = max(demand.values(), default=0)
        print(json.dumps(payload, indent=2, sort_keys=True))
    else:
        lines = (
            format_waves(plan, max(0, args.max_concurrency), launched) if args.waves else format_steps(plan)
        )
        print("\n".join(lines))
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


def format_steps(plan: ExecutionPlan) -> list[str]:
    """One line per step: index, state, iteration, placement, command."""
    lines = [
        f"workflow {plan.workflow} (assume_decision={plan.assume_decision or '-'}): {len(plan.steps)} steps"
    ]
    for index, step in enumerate(plan.steps):
        where = (
            f" [group {step.group}]"
            if step.group
            else (f" [in {step.loop_label}]" if step.loop_label else "")
        )
        iteration = f" #{step.iteration}" if step.iteration else ""
        command = " ".join(step.argv) if step.argv else step.shell
        lines.append(f"{index:02d}. {step.state}{iteration}{where}{_cached(step)}: {command}")
    return lines


def _cached(step: PlanStep) -> str:
    """` [cached v2, max_age 7d]` for a step the stage cache may serve."""
    if step.cache is None:
        return ""
    parts = [f"v{step.cache.version}"] if step.cache.version else []
    if step.cache.max_age_seconds:
        parts.append(f"max_age {duration_text(step.cache.max_age_seconds)}")
    return " [cached" + (f" {', '.join(parts)}" if parts else "") + "]"


def format_waves(
    plan: ExecutionPlan, cap: int = 0, launched: dict[str, list[str]] | None = None
) -> list[str]:
    """One line per occurrence: `NN. [kind] name: s1, s2[ maxConcurrency=K batches=B]`.

    K is the bound that applies: the spec's, or `--max-concurrency` where it is lower.
    With `launched`, each wave's images follow on their own lines.
    """
    lines = []
    for occurrence in plan.occurrences():
        text = f"{occurrence.index:02d}. [{occurrence.kind.value}] {occurrence.name}: " + ", ".join(
            step.task_name for step in occurrence.steps
        )
        if occurrence.group:
            declared = occurrence.max_concurrency
            bound = f"{cap} (spec {declared}, --max-concurrency)" if 0 < cap < declared else f"{declared}"
            text += f" maxConcurrency={bound} batches={len(occurrence.batches)}"
        text += " -> " + ", ".join(wave_file_name(plan.run_id, w) for w in occurrence.batches)
        gpus = [gpus_of(wave_accelerators(wave.steps)) for wave in occurrence.batches]
        if any(gpus):
            text += " gpus=" + ",".join(str(n) for n in gpus)
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
