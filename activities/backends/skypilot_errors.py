"""What a SkyPilot SDK failure means: its exception class (and its causes') as an npaflow error.

Structured evidence only (skypilot ref §4, §9): the SDK exception's class name,
and the class SkyPilot writes at the front of a row's `failure_reason`; never a
guess from the message's words, except the one 404 the SDK raises untyped.
"""

from __future__ import annotations

import re

from activities.backends.base import RequestUnknownError
from npaflow.errors import (
    AccessDeniedError,
    CapacityError,
    ConfigurationError,
    ControllerError,
    InfraError,
    NpaflowError,
    TransportError,
)

#: SDK exception class names, by what they mean for a launch (sky/exceptions.py, 0.12.2 to 0.14.1).
CONFIGURATION_ERRORS = {
    "InvalidSkyPilotConfigError",
    "InvalidClusterNameError",
    "ValueError",
    "NotSupportedError",
    "ResourcesMismatchError",
    "NoCloudAccessError",
    "StorageSpecError",
    "StorageError",
    "InvalidTaskError",
    "KeyError",
    "APIVersionMismatchError",
    "TypeError",
}
ACCESS_ERRORS = {"ApiServerAuthenticationError", "PermissionDeniedError", "CloudUserIdentityError"}
CAPACITY_ERRORS = {
    "ResourcesUnavailableError",
    "ManagedJobReachedMaxRetriesError",
    "InsufficientCapacityError",
}
CONTROLLER_ERRORS = {"ClusterNotUpError", "RequestCancelled", "ManagedJobStatusError"}
TRANSPORT_ERRORS = {
    "ApiServerConnectionError",
    "ConnectionError",
    "ConnectTimeout",
    "ReadTimeout",
    "Timeout",
    "ClientConnectorError",
    "ServerDisconnectedError",
    "ClientOSError",
    "TimeoutError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "ClientPayloadError",
    "ServerTimeoutError",
}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_REASON_CLASS = re.compile(r"^\[?(?:[\w.]+\.)?(\w+)\]?[:\s]")


def clean(text: str | None) -> str:
    """Strip terminal colour codes SkyPilot leaves in messages."""
    return _ANSI.sub("", text or "").strip()


def classify_sdk_error(exc: BaseException, what: str) -> NpaflowError:
    """The npaflow error an SDK failure is, by the exception's class (and its causes')."""
    names = {type(e).__name__ for e in _chain(exc)}
    message = f"{what}: {type(exc).__name__}: {clean(str(exc))}"[:1000]
    if names & ACCESS_ERRORS:
        return AccessDeniedError(message)
    if names & TRANSPORT_ERRORS:
        return TransportError(message)
    if names & CAPACITY_ERRORS:
        return CapacityError(message)
    if names & CONTROLLER_ERRORS:
        return ControllerError(message)
    if names & CONFIGURATION_ERRORS:
        return ConfigurationError(message)
    if isinstance(exc, RuntimeError) and "Failed to get request" in str(exc) and " 404 " in str(exc):
        return RequestUnknownError(message)
    return InfraError(message)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def failure_reason_class(reason: str) -> str:
    """The exception class SkyPilot names at the start of a failure reason, if any."""
    match = _REASON_CLASS.match(clean(reason))
    return match.group(1) if match else ""
