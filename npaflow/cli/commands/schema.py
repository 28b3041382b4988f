"""`npaflow schema`: the JSON Schema of npa.workflow/v0.0.1 specs, for editors."""

from __future__ import annotations

import argparse
import sys


def add(schema: argparse.ArgumentParser) -> None:
    """The arguments of `schema`."""
    schema.set_defaults(handler=run_schema)


def run_schema(_: argparse.Namespace) -> int:
    """Print the spec document's JSON Schema (the file committed under specs/)."""
    from npaflow.document.schema import workflow_json_schema_text

    sys.stdout.write(workflow_json_schema_text())
    return 0
