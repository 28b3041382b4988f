"""A workflow whose input does not validate fails at once, with the data converter's one-line text.

Without this the SDK fails the workflow *task* ("Failed decoding arguments") and
retries it forever: a raw `temporal workflow start` with a typo would sit stuck under
the id the CLI or a worker needs next. The long-lived coordinators (quota pools,
cache flights) keep Temporal's default, so a bug in them retries its task and a
fixed deploy resumes them with their state.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

#: `failure_exception_types` of every run and helper workflow.
MALFORMED_INPUT: Sequence[type[BaseException]] = (ValidationError,)
