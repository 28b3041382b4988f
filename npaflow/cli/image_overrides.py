"""`--image` and `--image-override` as a binding: what every command that launches or previews reads.

Apart from the flags' parser (npaflow/cli/image_flags.py) and the registry checks
(npaflow/cli/images/), both of which use it; it loads the image models only when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from npaflow.document.problems import message_of
from npaflow.errors import UsageError

if TYPE_CHECKING:
    from npaflow.images import ImageBinding
    from npaflow.options.spec import ImageFlags


def overrides_from(options: ImageFlags) -> ImageBinding:
    """The flags' overrides as a binding (no pins yet).

    Raises:
        UsageError: an override is not TOOL_REF=IMAGE or names no valid image.
    """
    from pydantic import ValidationError

    from npaflow.images import EVERY_TOOL, ImageBinding

    overrides: dict[str, str] = {}
    for item in options.image_override or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(
                f"--image-override {item!r}: write TOOL_REF=IMAGE, e.g. train.sft=ghcr.io/team/sft:v3"
            )
        overrides[key.strip()] = value.strip()
    image = str(options.image or "").strip()
    try:
        return ImageBinding(image=image or overrides.pop(EVERY_TOOL, ""), overrides=overrides)
    except ValidationError as exc:
        raise UsageError(
            f"--image/--image-override: {message_of(exc.errors(include_url=False)[0])}"
        ) from None
