"""Container images (DESIGN 22): checked first against their registries, pinned after.

Front door. `reference` parses Docker image references; `binding` is what a
run's input carries (overrides, and the digests preflight verified);
`selection` picks a step's image in the reference's order and pins it;
`checks` is what preflight says about each image; `plan_images` lists every
image a spec's plans launch. Pure: the registry is asked by the CLI
(`npaflow/cli/images/`), the run only reads the pins.
"""

from npaflow.images.binding import EVERY_TOOL, NO_IMAGE, ImageBinding, ImagePreflight
from npaflow.images.checks import ImageCheck, ImageStatus, PreflightReport
from npaflow.images.reference import (
    DIGEST,
    ImageReference,
    ImageReferenceError,
    image_problem,
    parse_image,
)
from npaflow.images.selection import LaunchImage, chosen_image, launch_image, wave_images

#: No overrides, no pins: images launch as the spec names them.
NO_BINDING = ImageBinding()

__all__ = [
    "DIGEST",
    "EVERY_TOOL",
    "NO_BINDING",
    "NO_IMAGE",
    "ImageBinding",
    "ImageCheck",
    "ImagePreflight",
    "ImageReference",
    "ImageReferenceError",
    "ImageStatus",
    "LaunchImage",
    "PreflightReport",
    "chosen_image",
    "image_problem",
    "launch_image",
    "parse_image",
    "wave_images",
]
