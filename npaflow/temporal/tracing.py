"""OpenTelemetry tracing (extra `npaflow[otel]`): `submit` -> workflow -> activities as one trace.

Off unless the standard variables ask for it (`OTEL_TRACES_EXPORTER`, or an OTLP
endpoint in `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`;
`OTEL_SDK_DISABLED=true` wins). Then the CLI and the worker connect with the
Temporal SDK's `TracingInterceptor`, whose spans carry the workflow id (= run id);
activities add `npaflow.wave_key`. Spans go to the OTLP/HTTP exporter (it reads
`OTEL_EXPORTER_OTLP_*` itself), or to stdout with `OTEL_TRACES_EXPORTER=console`;
`OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name the process.
"""

from __future__ import annotations

import os
from typing import Any

from npaflow.errors import UsageError

_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def tracing_requested() -> bool:
    """True when the OTEL_* variables ask for traces."""
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter) or any(os.environ.get(name) for name in _ENDPOINTS)


_INTERCEPTORS: dict[str, list[Any]] = {}
_PROVIDERS: list[Any] = []


def tracing_interceptors(service: str) -> list[Any]:
    """The SDK's tracing interceptor, with a tracer provider set up from the OTEL_* variables (once).

    Raises:
        UsageError: tracing is requested but the otel extra is not installed, or the exporter
            is not one npaflow sets up.
    """
    if not tracing_requested():
        return []
    if service in _INTERCEPTORS:
        return _INTERCEPTORS[service]
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
        from temporalio.contrib.opentelemetry import TracingInterceptor
    except ImportError:
        raise UsageError(
            "tracing is configured (OTEL_* variables) but OpenTelemetry is not installed: "
            "pip install 'npaflow[otel]' (or unset OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_ENDPOINT)"
        ) from None
    exporter_name = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    exporter: SpanExporter
    if exporter_name == "console":
        exporter = ConsoleSpanExporter()
    elif exporter_name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    else:
        raise UsageError(
            f"OTEL_TRACES_EXPORTER={exporter_name!r}: npaflow sets up 'otlp' (HTTP) or 'console'"
        )
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    if not _PROVIDERS:
        trace.set_tracer_provider(provider)
    _PROVIDERS.append(provider)
    _INTERCEPTORS[service] = [TracingInterceptor(provider.get_tracer("npaflow"))]
    return _INTERCEPTORS[service]


def flush_traces() -> None:
    """Send the spans still buffered (the CLI exits hard, skipping OpenTelemetry's own exit hook)."""
    for provider in _PROVIDERS:
        provider.force_flush(timeout_millis=5000)
