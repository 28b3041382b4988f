"""What a run launches for images: the overrides it was started with and the digests preflight pinned.

The binding travels in the run's input (`RunRequest.images`), so every wave,
retry and resume of the run renders exactly the digest that was verified at
submit, whatever its tag points to later (DESIGN 22).
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, Field, model_validator

from npaflow.images.reference import DIGEST, image_problem
from npaflow.presets import FROZEN

#: `--image` / override values that mean "no image: SkyPilot's default" (reference §8.7).
NO_IMAGE = frozenset({"none", "default", "-"})
#: The override key that applies to every step (the same as `--image`).
EVERY_TOOL = "*"
_TOOL_REF = re.compile(r"^(?:\*|[A-Za-z0-9_][A-Za-z0-9_.-]*)\Z")
#: Most images one run may pin or override (a spec has far fewer; this bounds hostile input).
MAX_IMAGES = 1000


class ImagePreflight(StrEnum):
    """Whether the run's images were checked against their registries before it started."""

    VERIFIED = "verified"  # every image resolved; the run launches the pinned digests
    SKIPPED = "skipped"  # --skip-image-preflight: images launch as written (tags can move)
    NOT_RUN = "not_run"  # started without npaflow's check (a raw `temporal workflow start`)
    WARNED = "warned"  # local backend (it runs no images): unverified ones were a warning, not pinned


class ImageBinding(BaseModel):
    """Overrides (`--image`, `--image-override`) and pins (image as chosen -> `sha256:` digest)."""

    model_config = FROZEN

    image: str = ""  # the `*` override: every step's image ("none" = no image)
    overrides: dict[str, str] = Field(default_factory=dict)  # tool ref or family prefix -> image
    pins: dict[str, str] = Field(default_factory=dict)
    preflight: ImagePreflight = ImagePreflight.NOT_RUN

    @model_validator(mode="after")
    def _well_formed(self) -> ImageBinding:
        if len(self.overrides) + len(self.pins) > MAX_IMAGES:
            raise ValueError(f"images: at most {MAX_IMAGES} overrides and pins together")
        for value in (self.image, *self.overrides.values()):
            if value and value not in NO_IMAGE and (problem := image_problem(value)):
                raise ValueError(problem)
        for key in self.overrides:
            if not _TOOL_REF.match(key):
                raise ValueError(f"image override key {key!r} must be a toolRef, a family prefix or '*'")
        for image, digest in self.pins.items():
            if problem := image_problem(image):
                raise ValueError(problem)
            if not DIGEST.match(digest):
                raise ValueError(f"pin for {image!r}: {digest!r} is not 'sha256:' and 64 hex digits")
        return self

    def override_for(self, tool_ref: str, *, every_tool: bool = True) -> str | None:
        """The image an override names for `tool_ref`: exact, then the longest `.` prefix, then `*`."""
        if tool_ref:
            if tool_ref in self.overrides:
                return self.overrides[tool_ref]
            prefixes = [p for p in self.overrides if tool_ref.startswith(f"{p}.")]
            if prefixes:
                return self.overrides[max(prefixes, key=len)]
        return (self.image or self.overrides.get(EVERY_TOOL)) if every_tool else None

    def pinned(self, image: str) -> str:
        """The digest preflight verified for `image` ("" when it was not pinned)."""
        return self.pins.get(image, "")


def without_image(value: str) -> str:
    """Nothing for the words that mean "no image", else the value."""
    return "" if value in NO_IMAGE else value
