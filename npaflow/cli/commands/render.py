"""`npaflow render`: write one SkyPilot YAML file per wave, in plan order."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from npaflow.cli.image_flags import add_image_arguments, add_resolve_argument, image_binding
from npaflow.cli.options import add_cap_argument, add_items_argument, add_spec_arguments, nonempty
from npaflow.cli.output_files import write_files
from npaflow.cli.spec_loading import load_spec_for, preview_plan
from npaflow.gc_pause import gc_paused
from npaflow.ids import RunId
from npaflow.options.spec import PreviewOptions
from npaflow.plan import DEFAULT_PLAN_RUN_ID
from npaflow.render import RenderOptions, render_wave
from npaflow.traversal import Wave
from npaflow.waves import job_name


def add(render: argparse.ArgumentParser) -> None:
    """The arguments of `render`."""
    add_spec_arguments(render)
    render.add_argument(
        "--out", required=True, type=nonempty, metavar="DIR", help="directory for the YAML files"
    )
    render.add_argument("--run-id", default=DEFAULT_PLAN_RUN_ID, help="run id used for names")
    render.add_argument("--assume-decision", default="", help="decision assumed for every gate")
    add_cap_argument(render)
    add_items_argument(render)
    add_image_arguments(render)
    add_resolve_argument(render)
    render.set_defaults(handler=run_render)


def wave_file_name(run_id: RunId, wave: Wave) -> str:
    """Return `<NNN>-<job-name>.yaml` for a wave's first attempt."""
    return f"{wave.sequence:03d}-{job_name(run_id, wave.sequence, wave.label)}.yaml"


def run_render(args: argparse.Namespace) -> int:
    """Plan the spec, render every wave, write the files and list them."""
    flags = PreviewOptions.parsed(args)
    with gc_paused():
        spec, catalog = load_spec_for(flags)
        plan = preview_plan(flags, spec, catalog)
    options = RenderOptions(
        run_id=flags.run_id, workflow=spec.name, images=image_binding(flags, spec, catalog)
    )
    out = Path(flags.out or ".")
    files: dict[Path, str] = {}
    written: list[dict[str, str | list[str]]] = []
    for wave in plan.waves:
        rendered = render_wave(wave, catalog, options)
        path = out / wave_file_name(flags.run_id, wave)
        files[path] = rendered.yaml
        written.append(
            {
                "file": str(path),
                "job_name": rendered.job_name,
                "execution": rendered.execution.value,
                "tasks": list(rendered.task_names),
            }
        )
    write_files(files, f"--out {out}")
    if flags.as_json:
        print(json.dumps({"workflow": spec.name, "run_id": flags.run_id, "files": written}, indent=2))
    else:
        print("\n".join(str(item["file"]) for item in written))
    return 0
