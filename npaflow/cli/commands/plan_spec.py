"""`npaflow plan-spec`: preview the steps or waves a run would take, or draw the spec as a graph."""

from __future__ import annotations

import argparse
import json
import sys
from enum import StrEnum

from npaflow.cli.image_flags import add_image_arguments, add_resolve_argument
from npaflow.cli.options import add_cap_argument, add_items_argument, add_spec_arguments, nonempty
from npaflow.cli.spec_loading import check_assumption, load_spec_for, preview_plan, warn_decision_sources
from npaflow.gc_pause import gc_paused
from npaflow.options.spec import PreviewOptions
from npaflow.plan import DEFAULT_PLAN_RUN_ID, ExecutionPlan
from npaflow.steps import cache_mark


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
    plan.add_argument(
        "--run-id", type=nonempty, default=DEFAULT_PLAN_RUN_ID, help="run id used for {{run.id}}"
    )
    plan.add_argument(
        "--assume-decision", default="", help="decision assumed for every gate (promote | loop_back)"
    )
    plan.add_argument("--waves", action="store_true", help="fold steps into launch waves")
    add_items_argument(plan)
    plan.add_argument(
        "--quota-pool",
        type=nonempty,
        default=argparse.SUPPRESS,  # unset: the options model's ""
        metavar="POOL",
        help="with --waves: name the GPU quota pool each wave that holds GPUs would wait on",
    )
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
    options = PreviewOptions.parsed(args)
    check_assumption(options.assume_decision)
    if options.format == PlanFormat.SVG:
        from npaflow.picture import spec_svg

        sys.stdout.write(spec_svg(load_spec_for(options)[0]) + "\n")
        return 0
    if options.format in (PlanFormat.MERMAID, PlanFormat.DOT):
        from npaflow.spec_graph import spec_graph, to_dot, to_mermaid

        spec, _ = load_spec_for(options)
        graph = spec_graph(spec)
        sys.stdout.write(to_mermaid(graph) if options.format == PlanFormat.MERMAID else to_dot(graph))
        return 0
    if options.format == PlanFormat.JSON:
        options = options.model_copy(update={"as_json": True})
    with gc_paused():
        spec, catalog = load_spec_for(options)
        if not options.assume_decision:
            warn_decision_sources(options, spec, catalog)
        plan = preview_plan(options, spec, catalog)
        if options.waves:  # waves name their files and images: those modules load only here
            from npaflow.cli.plan_waves import print_waves

            return print_waves(options, plan, spec, catalog)
    if options.as_json:
        print(json.dumps(plan.to_dict(), indent=2, sort_keys=True))
    else:
        print("\n".join(format_steps(plan)))
    return 0


def format_steps(plan: ExecutionPlan) -> list[str]:
    """One line per step: index, state, iteration, placement, command."""
    lines = [
        f"workflow {plan.workflow} (assume_decision={plan.assume_decision or '-'}): {len(plan.steps)} steps"
    ]
    fans = {wave.group: wave.fan_out for wave in plan.waves if wave.fan_out is not None}
    for index, step in enumerate(plan.steps):
        where = (
            f" [group {step.group}]"
            if step.group
            else (f" [in {step.loop_label}]" if step.loop_label else "")
        )
        if (fan := fans.get(step.group)) is not None:
            where += (
                f" [item {step.item}]"
                if step.item
                else f" × up to {fan.count:,} items from {fan.items_uri} (read at run time)"
            )
        iteration = f" #{step.iteration}" if step.iteration else ""
        command = " ".join(step.argv) if step.argv else step.shell
        lines.append(f"{index:02d}. {step.state}{iteration}{where}{cache_mark(step)}: {command}")
    return lines
