"""`npaflow init [DIR]`: a commented starter spec, the shipped examples and the JSON Schema."""

from __future__ import annotations

import argparse
from pathlib import Path

from npaflow.cli.options import nonempty
from npaflow.cli.output_files import write_files
from npaflow.errors import UsageError
from npaflow.shipped import EXAMPLES_DIR, STARTER_SPEC

STARTER_NAME = "pipeline.yaml"


def add(init: argparse.ArgumentParser) -> None:
    """The arguments of `init`."""
    init.add_argument("dir", metavar="DIR", nargs="?", type=nonempty, default=".", help="where to write them")
    init.add_argument("--force", action="store_true", help="overwrite files that are already there")
    init.set_defaults(handler=run_init)


def planned_files(directory: Path) -> dict[Path, str]:
    """Each file init writes, with its text (examples keep their schema comment: ../ is DIR)."""
    from npaflow.document.schema import SCHEMA_FILE, workflow_json_schema_text

    files = {directory / STARTER_NAME: STARTER_SPEC.read_text(encoding="utf-8")}
    files[directory / SCHEMA_FILE] = workflow_json_schema_text()
    for example in sorted(EXAMPLES_DIR.glob("*.yaml")):
        files[directory / "examples" / example.name] = example.read_text(encoding="utf-8")
    return files


def run_init(args: argparse.Namespace) -> int:
    """Write the files; refuse (exit 2, nothing written) to overwrite any without --force."""
    directory = Path(args.dir)
    files = planned_files(directory)
    present = [str(path) for path in files if path.exists()]
    if present and not args.force:
        raise UsageError(
            f"{len(present)} file(s) already exist: {', '.join(present[:3])}"
            + (" ..." if len(present) > 3 else "")
            + " (hint: choose an empty DIR, or pass --force to overwrite them)"
        )
    write_files(files, f"DIR {directory}")
    starter = directory / STARTER_NAME
    print(f"wrote {starter}, {len(files) - 2} examples under {directory / 'examples'}, and the JSON Schema")
    print(f"next: npaflow validate-spec {starter}")
    print(f"      npaflow dev &   then   npaflow submit {starter} --wait")
    return 0
