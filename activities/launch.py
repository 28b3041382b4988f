"""`launch_wave`: the launch transaction (DESIGN §3.4): at most one live job per wave attempt.

Render; recover what an earlier attempt started (its job id, else its launch
request id from the heartbeat or the ledger's launch receipt, else the exact job
name with a matching launch token); otherwise submit, record the request id
(heartbeat and receipt) before waiting on it, and resolve it to the job id.
Never cancel or relaunch by name alone.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog
from temporalio import activity

from activities.backends.base import Backend, JobMatch, LaunchRequest, RequestUnknownError
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.heartbeat import Heartbeater, heartbeating, resume_details
from activities.launch_receipts import LaunchReceipts
from activities.tracing import tag_span
from npaflow.errors import ConfigurationError, LaunchMovedError, NpaflowError, TransportError
from npaflow.render import RenderedWave, RenderOptions, render_wave
from npaflow.runtime.contract import LAUNCH_WAVE, worker_task_queue
from npaflow.runtime.messages import JobRef, LaunchResult, LaunchWaveInput
from npaflow.runtime.metrics import Metric, record
from npaflow.runtime.reconcile.models import JobOwner
from npaflow.runtime.vocabulary import HeartbeatPhase

log = structlog.get_logger(__name__)
T = TypeVar("T")


def credential_fingerprint(values: dict[str, str]) -> str:
    """Fingerprint secret values so the ledger can show a change without storing them."""
    material = "\0".join(f"{k}={v}" for k, v in sorted(values.items()))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


class LaunchActivities:
    """The launch activity, bound to the worker's backends."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=LAUNCH_WAVE.name)
    @mapped_errors
    async def launch_wave(self, request: LaunchWaveInput) -> LaunchResult:
        """Reconcile, then launch at most once; heartbeats carry the request and job ids."""
        tag_span(run_id=request.run_id, wave_key=str(request.wave.key), attempt=str(request.attempt))
        backend = self.context.backend(request.backend)
        rendered = render_wave(
            request.wave,
            request.catalog,
            RenderOptions(
                run_id=request.run_id,
                workflow=request.workflow,
                attempt=request.attempt,
                aws_endpoint_url=self.context.aws_endpoint_url,
                secret_env=tuple(request.secret_env),
                infra=request.infra,
                images=request.images,
            ),
        )
        details = resume_details(worker_id=self.context.worker_id)
        if backend.host_bound and details.worker_id and details.worker_id != self.context.worker_id:
            queue = worker_task_queue(self.context.task_queue, details.worker_id)
            raise LaunchMovedError(
                f"the launch of {rendered.job_name} began on worker "
                f"{details.worker_id}, whose host holds any job it made",
                queue,
            )
        # A host-bound launch beats at once: a retry must learn which host holds its job.
        own = details.model_copy(update={"worker_id": self.context.worker_id})
        async with heartbeating(own, quiet_start=not backend.host_bound) as hb:
            transaction = LaunchTransaction(self.context, backend, request, rendered, hb)
            started = time.monotonic()
            result = await transaction.run()
            record(Metric.LAUNCH_SECONDS, time.monotonic() - started, backend=request.backend.value)
            return result


class LaunchTransaction:
    """One launch attempt's reconciliation and launch, with notes for the ledger."""

    def __init__(
        self,
        context: ActivityContext,
        backend: Backend,
        request: LaunchWaveInput,
        rendered: RenderedWave,
        hb: Heartbeater,
    ) -> None:
        self.context = context
        self.backend = backend
        self.request = request
        self.rendered = rendered
        self.hb = hb
        self.notes: list[str] = []
        self.credentials: dict[str, str] = {}
        self.adopted = False  # the job was found, not launched by this attempt
        self.receipts = LaunchReceipts(context, request, rendered, self.notes)

    async def run(self) -> LaunchResult:
        """Recover an earlier launch of this attempt, else launch it."""
        job_id = await self._recover()
        request_id = self.hb.details.request_id
        if not job_id:
            job_id, request_id = await self._launch()
        adopted = self.adopted
        self.hb.update(job_id=job_id, phase=HeartbeatPhase.LAUNCHED)
        log.info(
            "wave.launched",
            wave_key=str(self.request.wave.key),
            attempt=self.request.attempt,
            job_id=job_id,
            job_name=self.rendered.job_name,
            adopted=adopted,
        )
        host_bound = self.backend.host_bound
        job = JobRef(
            backend=self.request.backend,
            job_id=job_id,
            job_name=self.rendered.job_name,
            worker_id=self.context.worker_id if host_bound else "",
            worker_task_queue=self.context.worker_queue if host_bound else "",
        )
        values = self.credentials
        return LaunchResult(
            job=job,
            launch_token=self.rendered.launch_token,
            request_id=request_id,
            adopted=adopted,
            reconciliation=self.notes,
            credential_names=sorted(values),
            credential_fingerprint=credential_fingerprint(values) if values else "",
        )

    async def _recovering(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        return await self.hb.recovering(what, call, deadline_seconds=self.request.transport_recovery_seconds)

    async def _recover(self) -> str:
        """The job an earlier attempt of this launch made, if any ("" when there is none)."""
        details = self.hb.details
        if details.job_id:
            self.notes.append(f"an earlier attempt of this launch already reported job {details.job_id}")
            self.adopted = True
            return details.job_id
        request_id = details.request_id or await self.receipts.request_id()
        if request_id:
            self.hb.update(request_id=request_id)
            try:
                job_id = await self._recovering(
                    "resolve the recorded launch request", lambda: self.backend.resolve(request_id)
                )
            except RequestUnknownError as exc:
                self.notes.append(f"recorded launch request {request_id} is unknown: {exc}")
                return await self._recovering("look up the job by name", self._adopt_by_name)
            self.notes.append(f"adopted job {job_id} from recorded launch request {request_id}")
            self.adopted = True
            return job_id
        started_before = details.phase.may_have_launched() or activity.info().attempt > 1
        if started_before or self.request.reconcile or self.backend.host_bound:
            return await self._recovering("look up the job by name", self._adopt_by_name)
        return ""

    async def _adopt_by_name(self) -> str:
        """Adopt the live job launched under this exact name with this token; cancel stuck ones."""
        name, token = self.rendered.job_name, self.rendered.launch_token
        matches = [m for m in await self.backend.find_jobs(name) if m.launch_token == token]
        for stuck in (m for m in matches if not m.can_progress):
            await self._cancel(stuck, f"cannot progress ({stuck.reason or stuck.status.value})")
        live = [m for m in matches if m.can_progress]  # newest first (Backend.find_jobs)
        if not live:
            return ""
        *extras, keep = live  # the oldest live job was launched first: keep it
        for extra in extras:
            await self._cancel(extra, f"a second live job of this attempt (kept {keep.job_id})")
        self.notes.append(f"adopted job {keep.job_id} already launched as {name}")
        self.adopted = True
        log.warning("wave.adopted", job_id=keep.job_id, job_name=name, duplicates=[e.job_id for e in extras])
        return keep.job_id

    async def _cancel(self, match: JobMatch, why: str) -> None:
        await self.backend.cancel(match.job_id)
        self.notes.append(f"cancelled job {match.job_id} launched as {self.rendered.job_name}: {why}")

    async def _launch(self) -> tuple[str, str]:
        """Submit once; after a failed submit, look the name up before any second submit."""
        self.credentials = self._secret_values()
        uncertain = False

        async def attempt() -> tuple[str, str]:
            nonlocal uncertain
            if uncertain:
                adopted = await self._adopt_by_name()
                if adopted:
                    return adopted, ""
            uncertain = True
            self.hb.update(phase=HeartbeatPhase.LAUNCHING)
            submission = await self.backend.submit(
                LaunchRequest(
                    job_name=self.rendered.job_name,
                    launch_token=self.rendered.launch_token,
                    yaml=self.rendered.yaml,
                    infra=self.request.infra,
                    secret_names=list(self.rendered.secret_names),
                    secret_values=self.credentials,
                    owner=self._owner(),
                )
            )
            self.hb.update(phase=HeartbeatPhase.SUBMITTED, request_id=submission.request_id)
            return submission.job_id, submission.request_id

        job_id, request_id = await self._recovering("launch", attempt)
        await self.receipts.write(request_id)  # also for a job known at once: a closed run's evidence
        if job_id:
            return job_id, request_id
        try:
            job_id = await self._recovering(
                "resolve the launch request", lambda: self.backend.resolve(request_id)
            )
        except TransportError:
            raise
        except NpaflowError:
            await self._cancel_leftovers()
            raise
        return job_id, request_id

    def _owner(self) -> JobOwner:
        """Who the job belongs to, stored with it: the reconciler finds its run by this."""
        return JobOwner(
            run_id=self.request.run_id,
            namespace=activity.info().workflow_namespace,
            task_queue=self.context.task_queue,
            ledger_uri=self.request.ledger_uri,
            workflow=self.request.workflow,
            wave_key=str(self.request.wave.key),
            attempt=self.request.attempt,
        )

    def _secret_values(self) -> dict[str, str]:
        names = self.rendered.secret_names
        values = {name: os.environ[name] for name in names if os.environ.get(name)}
        missing = [name for name in names if name not in values]
        if missing:
            raise ConfigurationError(
                f"required credential(s) unavailable in the worker "
                f"environment: {', '.join(missing)}; no job was launched"
            )
        return values

    async def _cancel_leftovers(self) -> None:
        """A failed launch request can leave a job that never runs: cancel it by id (best effort)."""
        try:
            for match in await self.backend.find_jobs(self.rendered.job_name):
                if match.launch_token == self.rendered.launch_token and not match.status.is_terminal():
                    await self._cancel(match, "left behind by a failed launch request")
        except NpaflowError as exc:
            log.warning("wave.leftovers_unchecked", job_name=self.rendered.job_name, error=str(exc))
