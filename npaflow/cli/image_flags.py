"""The image flags (`--image`, `--image-override`, `--skip-image-preflight`, `--resolve-images`).

Loaded with every command's parser, so it stays light: the registry is asked
by `npaflow/cli/images/`, imported only when a command checks images.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from npaflow.cli.image_overrides import overrides_from
from npaflow.cli.options import nonempty

if TYPE_CHECKING:  # the models load only when a command checks images, not with every parser
    from npaflow.catalog.models import ToolCatalog
    from npaflow.document.models import WorkflowSpec
    from npaflow.images import ImageBinding
    from npaflow.options.spec import ImageFlags


def add_image_arguments(parser: argparse.ArgumentParser) -> None:
    """`--image` and `--image-override`: which image a step launches, over the spec's."""
    parser.add_argument(
        "--image",
        type=nonempty,
        default=argparse.SUPPRESS,  # unset: the options model's "" (the spec's images)
        metavar="IMAGE",
        help="launch every step on IMAGE (none, default or - = SkyPilot's default image); "
        "--image-override beats it",
    )
    parser.add_argument(
        "--image-override",
        action="append",
        default=[],
        metavar="TOOL_REF=IMAGE",
        help="launch steps of this toolRef on IMAGE (repeatable): an exact toolRef beats the longest "
        "family prefix at '.' boundaries (train= covers train.sft), which beats --image",
    )


def add_preflight_argument(parser: argparse.ArgumentParser) -> None:
    """`--skip-image-preflight`: start without checking the registries (recorded in the run)."""
    parser.add_argument(
        "--skip-image-preflight",
        action="store_true",
        help="start without resolving images in their registries: tags launch as they are then, "
        "unverified and unpinned (recorded in the run's input and ledger)",
    )
    parser.add_argument(
        "--require-images",
        action="store_true",
        help="on the local backend too, refuse to start while an image is not verified (the local "
        "backend runs no images, so by default that is a warning)",
    )


def add_resolve_argument(parser: argparse.ArgumentParser) -> None:
    """`--resolve-images`: ask the registries and show the digests a run would launch."""
    parser.add_argument(
        "--resolve-images",
        action="store_true",
        help="resolve every image in its registry and show the digest it would launch "
        "(exit 2 when one cannot be verified)",
    )


def image_binding(options: ImageFlags, spec: WorkflowSpec, catalog: ToolCatalog) -> ImageBinding:
    """`render` / `plan-spec`: the flags' overrides, and with --resolve-images the digests a run pins now.

    Raises:
        UsageError: a bad override, or with --resolve-images an image that cannot be verified.
    """
    if not options.resolve_images:
        return overrides_from(options)
    from npaflow.cli.images import resolved_binding

    return resolved_binding(options, spec, catalog)
