"""`npaflow preflight-images`: every image a spec would launch, resolved in its registry before a run."""

from __future__ import annotations

import argparse
import json

from npaflow.cli.image_flags import add_image_arguments
from npaflow.cli.options import add_spec_arguments


def add(parser: argparse.ArgumentParser) -> None:
    """The arguments of `preflight-images`."""
    add_spec_arguments(parser)
    add_image_arguments(parser)
    parser.set_defaults(handler=run_preflight_images)


def run_preflight_images(args: argparse.Namespace) -> int:
    """Check every image of every path through the spec; print each answer; exit 2 on any problem."""
    from npaflow.cli.image_overrides import overrides_from
    from npaflow.cli.images import images_of, preflight
    from npaflow.cli.spec_loading import load_spec_for
    from npaflow.options.spec import SpecOptions

    options = SpecOptions.parsed(args)
    spec, catalog = load_spec_for(options)
    report = preflight(images_of(spec, catalog, overrides_from(options)))
    if options.as_json:
        payload = {
            "workflow": spec.name,
            "ok": not report.problems,
            "images": [check.model_dump(mode="json") for check in report.checks],
        }
        print(json.dumps(payload, indent=2))
    else:
        print("\n".join(report.text_lines()))
    return 2 if report.problems else 0
