"""What preflight says about each image, and the report it prints (ok / not_found / forbidden / unavailable).

Fail closed: only `ok` with a digest lets a run start; an answer the registry
gave ambiguously is `unavailable`, never `ok`.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from npaflow.presets import FROZEN


class ImageStatus(StrEnum):
    """The four answers preflight gives for one image."""

    OK = "ok"  # the registry served its manifest; `digest` names it
    NOT_FOUND = "not_found"  # the registry says the repository or tag does not exist
    FORBIDDEN = "forbidden"  # the registry refused the credentials we have (or we have none)
    UNAVAILABLE = "unavailable"  # unreachable, or an answer that proves nothing: never ok


class ImageCheck(BaseModel):
    """One image's answer, the states that launch it and, for a problem, the command that fixes it."""

    model_config = FROZEN

    image: str
    status: ImageStatus
    digest: str = ""
    detail: str = ""
    fix: str = ""
    used_by: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """A verified digest, the only answer a run may start on."""
        return self.status is ImageStatus.OK and bool(self.digest)

    def line(self) -> str:
        """`ok <digest>  image (states)` or `not_found  image (states): detail; fix: ...`."""
        where = f" ({', '.join(self.used_by)})" if self.used_by else ""
        if self.ok:
            return f"ok {self.digest}  {self.image}{where}"
        text = f"{self.status.value}  {self.image}{where}: {self.detail}"
        return f"{text}; fix: {self.fix}" if self.fix else text


class PreflightReport(BaseModel):
    """Every image the plan would launch, checked."""

    model_config = FROZEN

    checks: tuple[ImageCheck, ...] = Field(default_factory=tuple)

    @property
    def problems(self) -> list[ImageCheck]:
        """Every image that is not verified, in the order checked."""
        return [check for check in self.checks if not check.ok]

    def pins(self) -> dict[str, str]:
        """Image as chosen -> verified digest, for the run's input."""
        return {check.image: check.digest for check in self.checks if check.ok}

    def text_lines(self) -> list[str]:
        """One line per image, problems after the verified ones, then a one-line verdict."""
        ordered = sorted(self.checks, key=lambda c: (not c.ok, c.image))
        lines = [check.line() for check in ordered]
        count = len(self.problems)
        if not self.checks:
            lines.append("no images: every step runs on SkyPilot's default image")
        elif count:
            lines.append(f"{count} of {len(self.checks)} images cannot be launched")
        else:
            lines.append(f"all {len(self.checks)} images verified")
        return lines
