"""Span attributes for activities when tracing is on (npaflow/temporal/tracing.py); nothing otherwise."""

from __future__ import annotations

try:
    from opentelemetry import trace
except ImportError:  # the otel extra is not installed: tracing is off
    trace = None  # type: ignore[assignment]


def tag_span(**attributes: str) -> None:
    """Add `npaflow.<name>` attributes to the current span (the SDK's RunActivity span)."""
    if trace is None:
        return
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({f"npaflow.{name}": value for name, value in attributes.items()})
