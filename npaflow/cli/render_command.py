"""`npaflow render`: write one SkyPilot YAML file per wave batch, in plan order."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from npaflow.cli.options import add_spec_arguments, load_spec_for
from npaflow.plan import DEFAULT_PLAN_RUN_ID, build_plan
from npaflow.render import RenderOptions, render_wave
from npaflow.traversal import WaveBatch
from npaflow.waves import job_name


def register(commands: argparse._SubParsersAction) -> None:
    """Add the render subcommand to the CLI."""
    render = commands.add_parser("render", help="write the SkyPilot YAML of every wave batch")
    add_spec_arguments(render)
    render.add_argument("--out", required=True, metavar="DIR", help="directory for the YAML files")
    render.add_argument("--run-id", default=DEFAULT_PLAN_RUN_ID, help="run id used for names")
    render.add_argument("--assume-decision", default="", help="decision assumed for every gate")
    render.add_argument("--max-concurrency", type=int, default=0, metavar="N",
                        help="cap every group's batch size (0 = each group's own bound)")
    render.set_defaults(handler=run_render)


def batch_file_name(run_id: str, batch: WaveBatch) -> str:
    """Return `<NNN>-<job-name>.yaml` for a wave batch's first attempt."""
    return f"{batch.sequence:03d}-{job_name(run_id, batch.sequence, batch.label)}.yaml"


def run_render(args: argparse.Namespace) -> int:
    """Plan the spec, render every batch, write the files and list them."""
    spec, catalog = load_spec_for(args)
    plan = build_plan(spec, catalog, run_id=args.run_id, assume_decision=args.assume_decision,
                      cap=max(0, args.max_concurrency))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    options = RenderOptions(run_id=args.run_id, workflow=spec.name)
    written = []
    for batch in plan.batches:
        rendered = render_wave(batch, catalog, options)
        path = out / batch_file_name(args.run_id, batch)
        path.write_text(rendered.yaml, encoding="utf-8")
        written.append({"file": str(path), "job_name": rendered.job_name,
                        "execution": rendered.execution.value, "tasks": list(rendered.task_names)})
    if args.json:
        print(json.dumps({"workflow": spec.name, "run_id": args.run_id, "files": written}, indent=2))
    else:
        print("\n".join(item["file"] for item in written))
    return 0

