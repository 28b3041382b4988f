"""The worker's `/metrics`: npaflow's metrics plus the Temporal SDK's, on one address.

The SDK's Prometheus exporter (its `temporal_*` worker metrics) listens on a
private loopback port; this endpoint serves npaflow's registry and appends the
SDK's text, so Prometheus scrapes one target per worker.
"""

from __future__ import annotations

import asyncio
import collections
import socket
import time
from collections.abc import Mapping

import aiohttp
import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from temporalio.client import Client
from temporalio.common import SearchAttributeKey
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from npaflow.errors import UsageError
from npaflow.integers import plain_int
from npaflow.quota import PoolStatus
from npaflow.runtime.contract import SearchAttribute
from npaflow.runtime.metrics import CATALOG, Kind, Metric
from npaflow.runtime.vocabulary import RunPhase
from worker.logging import core_logging

log = structlog.get_logger()

#: Launches and queue calls take from milliseconds to minutes.
SECONDS_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class PrometheusSink:
    """npaflow's metrics in a registry of their own (`npaflow.runtime.metrics.CATALOG`)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._metrics: dict[Metric, Counter | Gauge | Histogram] = {}
        self._gauge_labels: dict[Metric, set[tuple[str, ...]]] = {}
        for metric, definition in CATALOG.items():
            name, labels, text = metric.value, list(definition.labels), definition.help
            if definition.kind is Kind.COUNTER:
                self._metrics[metric] = Counter(name, text, labels, registry=self.registry)
            elif definition.kind is Kind.GAUGE:
                self._metrics[metric] = Gauge(name, text, labels, registry=self.registry)
            else:
                self._metrics[metric] = Histogram(
                    name, text, labels, registry=self.registry, buckets=SECONDS_BUCKETS
                )

    def add(self, metric: Metric, value: float, labels: Mapping[str, str]) -> None:
        """Counters and gauges add `value` (gauges may go down); durations are observed."""
        definition = CATALOG[metric]
        child = self._metrics[metric].labels(**{k: str(labels.get(k, "")) for k in definition.labels})
        if isinstance(child, Histogram):
            child.observe(value)
        elif isinstance(child, Gauge) or value > 0:
            child.inc(value)

    def set(self, metric: Metric, values: Mapping[tuple[str, ...], float]) -> None:
        """Set a gauge to these values by label values; label sets no longer listed read 0."""
        gauge = self._metrics[metric]
        assert isinstance(gauge, Gauge)
        for labels in self._gauge_labels.get(metric, set()) - set(values):
            gauge.labels(*labels).set(0)
        for labels, value in values.items():
            gauge.labels(*labels).set(value)
        self._gauge_labels[metric] = self._gauge_labels.get(metric, set()) | set(values)

    def text(self) -> bytes:
        """The registry in Prometheus text format."""
        return generate_latest(self.registry)


#: Open runs waiting for `resume`, as Temporal's visibility lists them.
SUSPENDED_QUERY = (
    f"{SearchAttribute.PHASE.value} = '{RunPhase.SUSPENDED.value}' AND ExecutionStatus = 'Running'"
)
#: How often a worker recounts suspended runs.
SUSPENDED_REFRESH_SECONDS = 15.0


async def count_suspended_runs(client: Client) -> dict[tuple[str, ...], float]:
    """Open suspended runs by spec name (cluster-wide: every worker reports the same)."""
    spec_key = SearchAttributeKey.for_keyword(SearchAttribute.WORKFLOW.value)
    counts: collections.Counter[tuple[str, ...]] = collections.Counter()
    async for run in client.list_workflows(SUSPENDED_QUERY):
        counts[(run.typed_search_attributes.get(spec_key) or "",)] += 1
    return dict(counts)


async def watch_suspended_runs(
    client: Client, sink: PrometheusSink, interval: float = SUSPENDED_REFRESH_SECONDS
) -> None:
    """Keep `npaflow_runs_suspended{spec}` current until cancelled (a failed listing keeps the last)."""
    while True:
        try:
            sink.set(Metric.RUNS_SUSPENDED, await count_suspended_runs(client))
        except Exception as exc:  # noqa: BLE001 - visibility may be briefly unavailable: try again
            log.warning("metrics.suspended_count_failed", error=str(exc)[:200])
        await asyncio.sleep(interval)


#: The pools' gauges, set together from their statuses.
QUOTA_GAUGES = (Metric.QUOTA_CAPACITY, Metric.QUOTA_IN_USE, Metric.QUOTA_WAITING, Metric.QUOTA_OLDEST_WAIT)


async def watch_quota_pools(
    client: Client, sink: PrometheusSink, interval: float = SUSPENDED_REFRESH_SECONDS
) -> None:
    """Keep the pools' gauges current until cancelled (cluster-wide: every worker reports the same)."""
    last: dict[str, PoolStatus] = {}
    while True:
        try:
            last = await pool_statuses(client, last)
            for metric, values in quota_gauges(list(last.values()), time.time()).items():
                sink.set(metric, values)
        except Exception as exc:  # noqa: BLE001 - visibility may be briefly unavailable
            log.warning("metrics.quota_pools_failed", error=str(exc)[:200])
        await asyncio.sleep(interval)


async def pool_statuses(client: Client, last: dict[str, PoolStatus]) -> dict[str, PoolStatus]:
    """Every pool's status; one that cannot answer keeps its last (its oldest wait grows) and is logged.

    One stuck pool (no worker on its queue, a failing workflow task) must not blank the
    others' gauges, nor vanish itself: a pool nobody can ask is when its waiters need an alert.
    """
    from npaflow.temporal.pools import every_pool_status

    statuses, unanswered = await every_pool_status(client)
    for pool, problem in unanswered.items():
        log.warning("metrics.quota_pool_unanswered", pool=pool, error=str(problem)[:300])
        if pool in last:
            statuses[pool] = last[pool]
    return statuses


def quota_gauges(statuses: list[PoolStatus], now: float) -> dict[Metric, dict[tuple[str, ...], float]]:
    """Each pool's capacity, GPUs in use and waiting by team, and its oldest wait."""
    gauges: dict[Metric, dict[tuple[str, ...], float]] = {metric: {} for metric in QUOTA_GAUGES}
    for status in statuses:
        gauges[Metric.QUOTA_CAPACITY][(status.pool,)] = status.config.gpus
        for team in status.teams:
            gauges[Metric.QUOTA_IN_USE][(status.pool, team.team)] = team.in_use
            gauges[Metric.QUOTA_WAITING][(status.pool, team.team)] = team.waiting
        oldest = min((lease.asked_at for lease in status.waiting), default=now)
        gauges[Metric.QUOTA_OLDEST_WAIT][(status.pool,)] = max(0.0, now - oldest)
    return gauges


def _free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def worker_runtime(metrics: PrometheusConfig | None = None) -> Runtime:
    """The worker's Temporal runtime: the SDK's metrics when asked, its core's log forwarded."""
    return Runtime(telemetry=TelemetryConfig(logging=core_logging(), metrics=metrics))


class MetricsEndpoint:
    """`GET /metrics` on `address`: npaflow's registry, then the SDK's exporter."""

    def __init__(self, address: str) -> None:
        host, _, digits = address.rpartition(":")
        port = plain_int(digits)
        if not host or port is None:
            raise UsageError(f"--metrics-address {address!r}: expected HOST:PORT, e.g. 0.0.0.0:9464")
        self.host, self.port = host.strip("[]"), port
        self.sdk_address = f"127.0.0.1:{_free_loopback_port()}"
        self.sink = PrometheusSink()
        self.runtime = worker_runtime(
            PrometheusConfig(
                bind_address=self.sdk_address, counters_total_suffix=True, durations_as_seconds=True
            )
        )
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        """Listen (the SDK exporter starts with the runtime).

        Raises:
            UsageError: the address cannot be bound.
        """
        try:
            self._server = await asyncio.start_server(self._serve, self.host, self.port)
        except OSError as exc:
            raise UsageError(f"metrics address {self.host}:{self.port}: {exc.strerror or exc}") from None
        log.info("metrics.listening", address=f"{self.host}:{self.port}")

    async def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def body(self) -> bytes:
        """What one scrape returns."""
        return self.sink.text() + await self._sdk_text()

    async def _sdk_text(self) -> bytes:
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session,
                session.get(f"http://{self.sdk_address}/metrics") as response,
            ):
                return await response.read()
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return f"# the Temporal SDK exporter did not answer: {type(exc).__name__}: {exc}\n".encode()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            path = request.split(b" ", 2)[1] if request.count(b" ") >= 2 else b""
            if path.split(b"?")[0] != b"/metrics":
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            else:
                body = await self.body()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
