"""What the Temporal server's refusals mean for the user: one line each, with the fix.

Imported only when a command met such an error (the CLI's fast paths never load temporalio).
"""

from __future__ import annotations

import re

from temporalio.service import RPCError, RPCStatusCode

_NAMESPACE = re.compile(r"[Nn]amespace (\S+) is not found")


def rpc_error_text(exc: RPCError) -> str:
    """The user's mistake behind a server error, and what to do about it."""
    message = exc.message.strip()
    namespace = _NAMESPACE.search(message)
    if namespace:
        name = namespace.group(1).strip("'\".")
        return (
            f"namespace '{name}' does not exist on this Temporal server: pass an existing one with "
            f"--namespace (temporal operator namespace list) or create it (temporal operator namespace "
            f"create {name})"
        )
    if exc.status is RPCStatusCode.INVALID_ARGUMENT:
        hint = ""
        if "schedule spec" in message.lower() or "cron" in message.lower():
            hint = " (--cron takes five fields, minute hour day-of-month month day-of-week: '0 2 * * *')"
        return f"the Temporal server refused the request: {message}{hint}"
    if exc.status is RPCStatusCode.UNAVAILABLE:
        return f"cannot reach the Temporal server ({message}): is it running? (npaflow dev starts one)"
    if exc.status in (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNAUTHENTICATED):
        return (
            f"the Temporal server refused the credentials ({message}): check TEMPORAL_API_KEY, the "
            "TLS settings or --profile"
        )
    return f"the Temporal server answered {exc.status.name}: {message}"


def is_namespace_missing(exc: RPCError) -> bool:
    """True when the error says the namespace itself does not exist (not the run)."""
    return bool(_NAMESPACE.search(exc.message))
