"""npaflow's data converter: pydantic payloads, and a refused workflow input said in one line.

A workflow input that does not validate (a raw `temporal workflow start` with a
typo) fails the run with pydantic's ValidationError; its default text spans lines
and links to pydantic's site. The worker converts it to the failure Temporal keeps,
so `npaflow status`, the UI and `temporal workflow describe` all show this line.
"""

from __future__ import annotations

import dataclasses

from pydantic import ValidationError
from temporalio.api.failure.v1 import Failure
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverter, PayloadConverter
from temporalio.exceptions import ApplicationError

from npaflow.document.problems import refusal_text


class _FailureConverter(DefaultFailureConverter):
    """Temporal's default, except that a ValidationError keeps its type with a one-line message."""

    def to_failure(
        self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure
    ) -> None:
        if isinstance(exception, ValidationError):
            error = ApplicationError(
                refusal_text(exception), type=type(exception).__name__, non_retryable=True
            )
            error.__traceback__ = exception.__traceback__
            exception = error
        super().to_failure(exception, payload_converter, failure)


DATA_CONVERTER: DataConverter = dataclasses.replace(
    pydantic_data_converter, failure_converter_class=_FailureConverter
)
