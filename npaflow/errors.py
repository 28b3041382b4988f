"""The npaflow error hierarchy: one class per way a failure is handled.

`SpecError` is a user error (exit 2, never retried); `PayloadError` is retried
under `retries`; `InfraError` under `max_infrastructure_recoveries`;
`ConfigurationError` is never retried.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SpecIssue(BaseModel):
    """One problem found in a spec, located as precisely as the YAML allows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = ""
    line: int = 0
    column: int = 0
    state: str = ""
    field: str = ""
    message: str
    hint: str = ""

    def render(self) -> str:
        """Format as `path:line:col: state X: field: message (hint: ...)`."""
        where = self.file or "<spec>"
        if self.line:
            where += f":{self.line}:{self.column}"
        parts = [where]
        if self.state:
            parts.append(f"state {self.state}")
        if self.field and not self.message.startswith(self.field):
            parts.append(self.field)
        text = ": ".join(parts) + ": " + self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class NpaflowError(Exception):
    """Base of every error npaflow raises on purpose."""


class SpecError(NpaflowError):
    """A spec (or its overrides) is invalid; carries every issue found."""

    def __init__(self, issues: list[SpecIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(issue.render() for issue in self.issues))


class UsageError(NpaflowError):
    """The command line itself is wrong (missing file, bad flag value)."""


class PayloadError(NpaflowError):
    """The user's job failed (FAILED, FAILED_SETUP, missing outputs)."""


class InfraError(NpaflowError):
    """Capacity, controller or transport failure outside the user's job."""


class LaunchUnidentifiedError(InfraError):
    """A launch returned no usable job id and no job carries its name: never relaunch blindly."""


class ConfigurationError(NpaflowError):
    """A launch can never succeed as configured (prechecks, invalid YAML)."""


class RenderError(ConfigurationError):
    """A wave cannot be rendered to SkyPilot YAML."""


class TokenError(NpaflowError):
    """A `{{scope.key}}` token cannot be resolved."""
