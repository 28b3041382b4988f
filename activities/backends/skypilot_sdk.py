"""SkyPilot's async Python SDK behind a small interface, so tests can fake exactly this edge.

Imported only by workers that offer the skypilot backend (importing `sky` costs
about 2 s). The endpoint must be set; a local API server is never auto-started:
every SDK call is preceded by a fresh health check, and SkyPilot's own check
(which would start a local server when the endpoint is local) then hits its
cache of that healthy answer instead.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

from activities.backends.skypilot_versions import SkyPilotVersions, read_versions, route_skypilot_logging
from npaflow.errors import UsageError
from npaflow.runtime.contract import EnvVar

if TYPE_CHECKING:
    from sky.schemas.api.responses import ManagedJobRecord


class SkyPilotApi(Protocol):
    """The SDK calls the skypilot backend makes, in the SDK's own types."""

    async def launch(self, yaml_text: str, name: str, secrets: Mapping[str, str]) -> str:
        """POST the launch; return the request id before the launch is awaited."""
        ...

    async def get(self, request_id: str) -> Any:
        """Wait for a request and return its value (raises the request's exception)."""
        ...

    async def queue(
        self, *, job_ids: list[int] | None, limit: int | None, fields: list[str]
    ) -> list[ManagedJobRecord]:
        """One `jobs.queue_v2` call across all users, newest job first."""
        ...

    async def cancel(self, job_ids: list[int]) -> None:
        """`jobs.cancel(job_ids=...)`: unknown and terminal jobs are skipped by SkyPilot."""
        ...

    async def live_jobs(self, *, fields: list[str]) -> list[ManagedJobRecord]:
        """One `jobs.queue_v2(skip_finished=True)` call across all users: every unfinished job."""
        ...

    async def logs(self, job_id: int, tail: int) -> str:
        """The last `tail` lines of a job's logs, without following."""
        ...

    async def versions(self) -> SkyPilotVersions:
        """This client's and the API server's versions (the server's health check, afresh)."""
        ...


P = ParamSpec("P")
T = TypeVar("T")


def whole_traces_kept(call: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Undo what SkyPilot leaves behind: `sys.tracebacklimit` at 0.

    Its `print_exception_no_traceback()` sets the limit to 0 and does not put it back
    when an error passes through it (an unreachable API server, say): after that every
    trace the worker formats (its log, the stack trace Temporal keeps of a failure)
    would be one line. The worker never wants a limit.
    """

    @functools.wraps(call)
    async def kept(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await call(*args, **kwargs)
        finally:
            if getattr(sys, "tracebacklimit", None) == 0:
                del sys.tracebacklimit

    return kept


class SkyPilotSdk:
    """The real SDK (skypilot 0.12.2 to 0.14): sync launch for its request id, async for the rest."""

    def __init__(self, endpoint: str) -> None:
        os.environ.setdefault("SKYPILOT_DISABLE_USAGE_COLLECTION", "1")
        # get_server_url is cached per process: the endpoint must be set before the first call.
        os.environ[EnvVar.SKYPILOT_ENDPOINT.value] = endpoint
        self.endpoint = endpoint
        try:
            from sky.client import sdk_async
            from sky.jobs.client import sdk as jobs_sdk
            from sky.jobs.client import sdk_async as jobs_async
            from sky.server import common as server_common
            from sky.utils import dag_utils
        except ImportError as exc:
            raise UsageError(
                f"the skypilot backend needs the SkyPilot client ({exc}); install it with: "
                "pip install 'npaflow[skypilot]' (or offer only --backend local)"
            ) from None

        self._sdk_async, self._jobs_sdk, self._jobs_async = sdk_async, jobs_sdk, jobs_async
        self._server, self._dag_utils = server_common, dag_utils
        # An earlier import may have asked for the URL already: forget what was cached then.
        server_common.get_server_url.cache_clear()
        server_common.is_api_server_local.cache_clear()
        self._health_lock = asyncio.Lock()
        route_skypilot_logging()

    @whole_traces_kept
    async def versions(self) -> SkyPilotVersions:
        """The health check afresh: this SDK's and the server's release and API version."""
        async with self._health_lock:
            return await asyncio.to_thread(read_versions, self.endpoint)

    async def _healthy(self) -> None:
        """Check health afresh (raises ApiServerConnectionError; never starts a server)."""
        async with self._health_lock:
            self._server.get_api_server_status_response.cache_clear()
            await asyncio.to_thread(self._server.check_server_healthy)

    @whole_traces_kept
    async def launch(self, yaml_text: str, name: str, secrets: Mapping[str, str]) -> str:
        """Load the rendered YAML with SkyPilot's loader, add secret values, POST jobs.launch."""
        dag = self._dag_utils.load_dag_from_yaml_str(yaml_text)
        for task in dag.tasks:
            wanted = {key: secrets[key] for key in secrets}
            if wanted:
                task.update_secrets(wanted)
        await self._healthy()
        request_id = await asyncio.to_thread(self._jobs_sdk.launch, dag, name=name)
        return str(request_id)

    @whole_traces_kept
    async def get(self, request_id: str) -> Any:
        """Wait for the request through the async SDK (never repr the result: handles can't).

        Raises:
            Exception: the request's own exception (unwrapped from the async SDK's
                RuntimeError for a failed request, skypilot#10026).
        """
        await self._healthy()
        try:
            return await self._sdk_async.get(request_id)
        except RuntimeError as exc:
            raise self._request_error(exc) from exc

    def _request_error(self, exc: RuntimeError) -> BaseException:
        """The exception a failed request carries in the 500 payload the async SDK returns as text."""
        text = str(exc)
        if "Failed to get request" not in text or " 500 " not in text or "{" not in text:
            return exc
        try:
            detail = json.loads(text[text.index("{") :])["detail"]
            from sky.server.requests import payloads
            from sky.server.requests import requests as requests_lib

            error = requests_lib.Request.decode(payloads.RequestPayload(**detail)).get_error()
        except (ValueError, KeyError, TypeError):
            return exc
        found = error.get("object") if error else None
        return found if isinstance(found, BaseException) else exc

    @whole_traces_kept
    async def queue(
        self, *, job_ids: list[int] | None, limit: int | None, fields: list[str]
    ) -> list[ManagedJobRecord]:
        """One queue_v2 call (all users: replicas may differ in identity), newest first."""
        await self._healthy()
        records, _total, _counts, _unfiltered = await self._jobs_async.queue_v2(
            refresh=False, all_users=True, job_ids=job_ids, limit=limit, fields=fields, stream_logs=None
        )
        return list(records)

    @whole_traces_kept
    async def live_jobs(self, *, fields: list[str]) -> list[ManagedJobRecord]:
        """Every unfinished managed job of all users (the reconciler's sweep)."""
        await self._healthy()
        records, _total, _counts, _unfiltered = await self._jobs_async.queue_v2(
            refresh=False, skip_finished=True, all_users=True, fields=fields, stream_logs=None
        )
        return list(records)

    @whole_traces_kept
    async def cancel(self, job_ids: list[int]) -> None:
        """Cancel exactly these ids."""
        await self._healthy()
        await self._jobs_async.cancel(job_ids=job_ids, stream_logs=None)

    @whole_traces_kept
    async def logs(self, job_id: int, tail: int) -> str:
        """Tail a job's logs into a string (the SDK streams; `follow=False` returns at the end)."""
        await self._healthy()
        buffer = io.StringIO()
        await asyncio.to_thread(
            self._jobs_sdk.tail_logs, job_id=job_id, follow=False, tail=tail, output_stream=buffer
        )
        return buffer.getvalue()
