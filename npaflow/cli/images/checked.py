"""Checked first, pinned after (DESIGN 22): the binding a run starts with, or every problem at once."""

from __future__ import annotations

import sys

from npaflow.catalog.models import ToolCatalog
from npaflow.cli.image_overrides import overrides_from
from npaflow.cli.images.preflight import images_of, preflight, preflight_async
from npaflow.document.models import WorkflowSpec
from npaflow.errors import UsageError
from npaflow.images import ImageBinding, ImagePreflight, PreflightReport
from npaflow.options.spec import ImageFlags
from npaflow.runtime.request import BackendName


async def checked_binding(
    options: ImageFlags,
    spec: WorkflowSpec,
    catalog: ToolCatalog,
    *,
    backend: BackendName,
    started: ImageBinding | None = None,
) -> ImageBinding:
    """The run's image binding: the flags' overrides, and every image verified and pinned.

    `started` is a restarted run's binding: its overrides stay and its pins stay
    (each image it launched is checked by that digest), new images are pinned now.
    With --skip-image-preflight nothing is asked and the binding says so. On the local
    backend (which runs no images) an image not verified is a warning, unless
    --require-images.

    Raises:
        UsageError: any image is not verified (every problem listed; nothing starts).
    """
    binding = started if started is not None else overrides_from(options)
    if options.skip_image_preflight:
        return binding.model_copy(update={"preflight": ImagePreflight.SKIPPED})
    images = images_of(spec, catalog, binding)
    if not images:  # nothing to verify: no registry is asked, no digest cache is touched
        return binding.model_copy(update={"preflight": ImagePreflight.VERIFIED})
    report = await preflight_async(images, pins=binding.pins)
    if report.problems and backend is BackendName.LOCAL and not options.require_images:
        print(local_warning(report, spec.name), file=sys.stderr)
        pins = {**report.pins(), **binding.pins}
        return binding.model_copy(update={"pins": pins, "preflight": ImagePreflight.WARNED})
    if report.problems:
        raise UsageError(problems_text(report, spec.name))
    print(f"images: {len(images)} verified and pinned by digest", file=sys.stderr)
    pins = {**report.pins(), **binding.pins}
    return binding.model_copy(update={"pins": pins, "preflight": ImagePreflight.VERIFIED})


def local_warning(report: PreflightReport, workflow: str) -> str:
    """What the local backend says instead of refusing: which images are not verified, and how to check."""
    lines = [f"workflow {workflow}: warning: the local backend runs no images, so these were not required:"]
    lines += [f"  {line}" for line in report.text_lines()]
    lines.append(
        "before running on SkyPilot, check them with `npaflow plan-spec SPEC --resolve-images` "
        "(or pass --require-images to refuse here as SkyPilot runs do)"
    )
    return "\n".join(lines)


def problems_text(report: PreflightReport, workflow: str, *, starting: bool = True) -> str:
    """Every image with its answer (the verified ones first), then the way out."""
    lines = [f"workflow {workflow}: image preflight failed" + (", nothing was started" if starting else "")]
    lines += [f"  {line}" for line in report.text_lines()]
    lines.append("fix each image that is not ok, or pass --skip-image-preflight to launch tags unverified")
    return "\n".join(lines)


def resolved_binding(options: ImageFlags, spec: WorkflowSpec, catalog: ToolCatalog) -> ImageBinding:
    """For `render` / `plan-spec --resolve-images`: the digests a run would pin now.

    Raises:
        UsageError: any image is not verified.
    """
    binding = overrides_from(options)
    report = preflight(images_of(spec, catalog, binding))
    if report.problems:
        raise UsageError(problems_text(report, spec.name, starting=False))
    return binding.model_copy(update={"pins": report.pins(), "preflight": ImagePreflight.VERIFIED})
