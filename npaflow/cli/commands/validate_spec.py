"""`npaflow validate-spec`: check a spec offline; exit 2 when invalid."""

from __future__ import annotations

import argparse
import json

from npaflow.cli.options import add_spec_arguments
from npaflow.cli.spec_loading import load_spec_for, warn_decision_sources
from npaflow.gc_pause import gc_paused
from npaflow.options.spec import SpecOptions


def add(validate: argparse.ArgumentParser) -> None:
    """The arguments of `validate-spec`."""
    add_spec_arguments(validate)
    validate.set_defaults(handler=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    """Validate and report; errors propagate to the CLI's single handler."""
    options = SpecOptions.parsed(args)
    with gc_paused():
        spec, catalog = load_spec_for(options)
    warn_decision_sources(options, spec, catalog)
    if options.as_json:
        print(json.dumps({"valid": True, "workflow": spec.name, "states": len(spec.states)}))
    else:
        count = len(spec.states)
        print(f"{options.spec}: valid ({spec.name}, {count} state{'' if count == 1 else 's'})")
    return 0
