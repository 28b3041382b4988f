"""Which image a planned step launches, in the reference's order (spec-language §8.7).

An exact toolRef override, then the longest family-prefix override (at `.`
boundaries), then `--image`, then the state's profile `image` (a `tool://X`
image resolved the same way for X), then the tool's catalog image. The chosen
image is then replaced by the digest preflight pinned for it, if any.
"""

from __future__ import annotations

from pydantic import BaseModel

from npaflow.catalog.models import ToolCatalog
from npaflow.images.binding import ImageBinding, without_image
from npaflow.images.reference import ImageReferenceError, parse_image
from npaflow.presets import FROZEN
from npaflow.steps import PlanStep
from npaflow.traversal.models import Wave

TOOL_SCHEME = "tool://"


class LaunchImage(BaseModel):
    """One step's image: as chosen (usually a tag), its pinned digest, and what is launched."""

    model_config = FROZEN

    image: str = ""  # "" = SkyPilot's default image
    digest: str = ""

    @property
    def launched(self) -> str:
        """`repo@sha256:...` when pinned, else the image as chosen."""
        if not self.image or not self.digest:
            return self.image
        try:
            reference = parse_image(self.image)
        except ImageReferenceError:
            return self.image
        return reference.pinned(self.digest)


def chosen_image(step: PlanStep, catalog: ToolCatalog, binding: ImageBinding) -> str:
    """The image `step` launches before pinning ("" = none)."""
    override = binding.override_for(step.tool_ref)
    if override is not None:
        return without_image(override)
    profile = str(step.resources_profile.get("image") or "")
    if profile.startswith(TOOL_SCHEME):
        family = profile.removeprefix(TOOL_SCHEME)
        family_override = binding.override_for(family, every_tool=False)
        if family_override is not None:
            return without_image(family_override)
        entry = catalog.get(family)
        return entry.image if entry else ""
    if profile:
        return profile
    entry = catalog.get(step.tool_ref) if step.tool_ref else None
    return entry.image if entry else ""


def launch_image(step: PlanStep, catalog: ToolCatalog, binding: ImageBinding) -> LaunchImage:
    """The step's image and the digest it launches as (when preflight pinned one)."""
    image = chosen_image(step, catalog, binding)
    if not image:
        return LaunchImage()
    digest = binding.pinned(image)
    if not digest:
        try:
            digest = parse_image(image).digest  # written pinned in the spec
        except ImageReferenceError:
            digest = ""
    return LaunchImage(image=image, digest=digest)


def wave_images(wave: Wave, catalog: ToolCatalog, binding: ImageBinding) -> list[LaunchImage]:
    """Each member's image, in the wave's order: what its ledger record says was launched."""
    return [launch_image(step, catalog, binding) for step in wave.steps]
