"""What the Temporal server's refusals mean for the user: one line each, with the fix.

Imported only when a command met such an error (the CLI's fast paths never load temporalio).
"""

from __future__ import annotations

import re

from pydantic import ValidationError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from npaflow import __version__
from npaflow.errors import ErrorType

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
        return f"the Temporal server refused the request: {message}{_schedule_hint(message.lower())}"
    if exc.status is RPCStatusCode.UNAVAILABLE:
        return f"cannot reach the Temporal server ({message}): is it running? (npaflow dev starts one)"
    if exc.status in (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNAUTHENTICATED):
        return (
            f"the Temporal server refused the credentials ({message}): check TEMPORAL_API_KEY, the "
            "TLS settings or --profile"
        )
    return f"the Temporal server answered {exc.status.name}: {message}"


def _schedule_hint(message: str) -> str:
    """How to write what a schedule spec refusal is about ("" for any other refusal)."""
    if "schedule" not in message:
        return ""
    if "cron" in message:
        return (
            " (--cron takes five fields, minute hour day-of-month month day-of-week, each within "
            "its range: minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-6; e.g. '0 2 * * *')"
        )
    if "interval" in message:
        return " (--every takes a duration such as 30m, 24h or 7d)"
    return ""


def is_namespace_missing(exc: RPCError) -> bool:
    """True when the error says the namespace itself does not exist (not the run)."""
    return bool(_NAMESPACE.search(exc.message))


#: The `ApplicationError.type` values npaflow's own errors carry.
_OWN_ERROR_TYPES = frozenset(kind.value for kind in ErrorType)


def innermost_message(error: BaseException) -> str:
    """The message of the error that started it (the activity's own), without the wrappers' words.

    That is the deepest npaflow error in the chain: below it lie only the library's
    own words it was raised from (botocore's "Unable to locate credentials" under
    "no usable S3 credentials … (set AWS_ACCESS_KEY_ID …)"), which lack the fix.
    """
    chain = [error]
    while (cause := chain[-1].__cause__ or getattr(chain[-1], "cause", None)) is not None:
        chain.append(cause)
    ours = [e for e in chain if isinstance(e, ApplicationError) and e.type in _OWN_ERROR_TYPES]
    chosen = ours[-1] if ours else chain[-1]
    return str(getattr(chosen, "message", "") or chosen).removeprefix("ConfigurationError: ")


def unreadable_answer_text(exc: ValidationError) -> str:
    """An answer (a query's, a helper's, a ledger's) in a shape this npaflow does not read.

    Its usual cause is a version skew: workers (or the run's pinned build) of another npaflow
    than this CLI answered with fields this one does not know, or without ones it needs.
    """
    problems = exc.errors()
    first = problems[0] if problems else {"loc": (), "msg": str(exc)}
    where = ".".join(str(part) for part in first["loc"]) or exc.title
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return (
        f"an answer could not be read as {exc.title}: {where}: {first['msg']}{more}; when the "
        f"workers run another npaflow than this one ({__version__}), use theirs (npaflow status RUN "
        "names the run's worker version)"
    )
