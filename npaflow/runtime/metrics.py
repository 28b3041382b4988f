"""npaflow's metrics: one catalog of names and labels, and the sink the worker installs.

Workflow code records through workflows_def/metrics.py (skipped while a history
replays, so nothing counts twice), activities record directly. With no sink
installed (metrics off, tests, the CLI) recording does nothing. Labels are low
cardinality: spec, state, backend, outcome, failure class; never run or job ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class Kind(StrEnum):
    """How a metric aggregates."""

    COUNTER = "counter"
    GAUGE = "gauge"
    SECONDS = "seconds"  # a histogram of durations


class Metric(StrEnum):
    """Every metric npaflow exports (`docs/monitoring.md`)."""

    RUNS_STARTED = "npaflow_runs_started"
    RUNS_FINISHED = "npaflow_runs_finished"
    RUNS_SUSPENDED = "npaflow_runs_suspended"
    WAVES_LAUNCHED = "npaflow_waves_launched"
    WAVE_ATTEMPTS_FAILED = "npaflow_wave_attempts_failed"
    WAVE_RETRIES = "npaflow_wave_retries"
    JOBS_IN_FLIGHT = "npaflow_jobs_in_flight"
    LAUNCH_SECONDS = "npaflow_launch_seconds"
    QUEUE_CALL_SECONDS = "npaflow_queue_call_seconds"
    QUEUE_CALL_IDS = "npaflow_queue_call_ids"
    GPU_HOURS = "npaflow_gpu_hours"
    NODE_HOURS = "npaflow_node_hours"
    CANCELLATIONS = "npaflow_cancellations"
    DECISION_READS = "npaflow_decision_reads"
    JOBS_RECONCILED = "npaflow_jobs_reconciled"
    CACHE_LOOKUPS = "npaflow_cache_lookups"
    CACHE_GPU_HOURS_SAVED = "npaflow_cache_gpu_hours_saved"
    QUOTA_CAPACITY = "npaflow_quota_capacity_gpus"
    QUOTA_IN_USE = "npaflow_quota_in_use_gpus"
    QUOTA_WAITING = "npaflow_quota_waiting_gpus"
    QUOTA_OLDEST_WAIT = "npaflow_quota_oldest_wait_seconds"
    QUOTA_WAIT_SECONDS = "npaflow_quota_wait_seconds"


class CacheResult(StrEnum):
    """The `result` label of `npaflow_cache_lookups_total`."""

    HIT = "hit"  # a verified entry stood in for the step's job
    MISS = "miss"  # no usable entry: the step ran


class RunOutcome(StrEnum):
    """The `outcome` label of `npaflow_runs_finished_total`."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    CAPACITY = "capacity"  # failed for lack of capacity only: try again later


class BudgetLabel(StrEnum):
    """The `budget` label of `npaflow_wave_retries_total`: which retry budget paid."""

    PAYLOAD = "payload"  # `retries`
    INFRASTRUCTURE = "infrastructure"  # `max_infrastructure_recoveries`


@dataclass(frozen=True)
class MetricDef:
    """A metric (its Prometheus name without `_total`), kind, labels and help text."""

    metric: Metric
    kind: Kind
    labels: tuple[str, ...]
    help: str


CATALOG: dict[Metric, MetricDef] = {
    m.metric: m
    for m in (
        MetricDef(Metric.RUNS_STARTED, Kind.COUNTER, ("spec",), "Runs started (continue-as-new not counted)"),
        MetricDef(
            Metric.RUNS_FINISHED,
            Kind.COUNTER,
            ("spec", "outcome"),
            "Runs finished, by outcome: succeeded, failed, cancelled, capacity",
        ),
        MetricDef(Metric.RUNS_SUSPENDED, Kind.GAUGE, ("spec",), "Runs suspended now, waiting for resume"),
        MetricDef(Metric.WAVES_LAUNCHED, Kind.COUNTER, ("spec", "backend"), "Wave attempts launched"),
        MetricDef(
            Metric.WAVE_ATTEMPTS_FAILED, Kind.COUNTER, ("spec", "failure_class"), "Wave attempts that failed"
        ),
        MetricDef(
            Metric.WAVE_RETRIES,
            Kind.COUNTER,
            ("spec", "budget"),
            "Wave retries, by budget",
        ),
        MetricDef(Metric.JOBS_IN_FLIGHT, Kind.GAUGE, ("backend",), "Jobs this worker is watching now"),
        MetricDef(Metric.LAUNCH_SECONDS, Kind.SECONDS, ("backend",), "Seconds a launch activity took"),
        MetricDef(Metric.QUEUE_CALL_SECONDS, Kind.SECONDS, ("backend",), "Seconds one queue call took"),
        MetricDef(Metric.QUEUE_CALL_IDS, Kind.COUNTER, ("backend",), "Job ids asked for by queue calls"),
        MetricDef(Metric.GPU_HOURS, Kind.COUNTER, ("spec", "state"), "GPU-hours of finished wave attempts"),
        MetricDef(Metric.NODE_HOURS, Kind.COUNTER, ("spec", "state"), "Node-hours of finished wave attempts"),
        MetricDef(Metric.CANCELLATIONS, Kind.COUNTER, ("result",), "Job cancellations, by result"),
        MetricDef(Metric.DECISION_READS, Kind.COUNTER, ("source",), "Decisions the walk took, by source"),
        MetricDef(
            Metric.JOBS_RECONCILED,
            Kind.COUNTER,
            ("backend", "ending"),
            "Jobs cancelled because their run ended without its cleanup (terminate, timeout, a bug)",
        ),
        MetricDef(
            Metric.CACHE_LOOKUPS, Kind.COUNTER, ("spec", "result"), "Cached steps looked up, by hit or miss"
        ),
        MetricDef(
            Metric.CACHE_GPU_HOURS_SAVED,
            Kind.COUNTER,
            ("spec",),
            "GPU-hours the stage cache's hits did not spend (what their entries' jobs spent)",
        ),
        MetricDef(Metric.QUOTA_CAPACITY, Kind.GAUGE, ("pool",), "GPUs a quota pool holds"),
        MetricDef(Metric.QUOTA_IN_USE, Kind.GAUGE, ("pool", "team"), "GPUs granted now, by team"),
        MetricDef(Metric.QUOTA_WAITING, Kind.GAUGE, ("pool", "team"), "GPUs waves wait for now, by team"),
        MetricDef(
            Metric.QUOTA_OLDEST_WAIT, Kind.GAUGE, ("pool",), "Seconds the longest-waiting wave has waited"
        ),
        MetricDef(
            Metric.QUOTA_WAIT_SECONDS, Kind.SECONDS, ("pool", "team"), "Seconds a wave waited for its GPUs"
        ),
    )
}


class MetricsSink(Protocol):
    """Where recorded values go (the worker's Prometheus registry)."""

    def add(self, metric: Metric, value: float, labels: Mapping[str, str]) -> None:
        """Add to a counter or gauge, or observe a duration."""
        ...


class _Sinks:
    current: MetricsSink | None = None


def install(sink: MetricsSink | None) -> None:
    """Send every recording in this process to `sink` (None: recording does nothing)."""
    _Sinks.current = sink


def record(metric: Metric, value: float = 1.0, **labels: str) -> None:
    """Record one value; does nothing when no sink is installed."""
    sink = _Sinks.current
    if sink is not None:
        sink.add(metric, value, labels)
