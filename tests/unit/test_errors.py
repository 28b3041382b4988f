"""One home per error: each class carries its wire type, and class and wire type agree on retries."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from structlog.testing import capture_logs
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

import activities
import npaflow
import workflows_def
from activities.errors import mapped_errors, to_application_error
from npaflow.errors import ErrorType, InfraError, LaunchUnidentifiedError, NpaflowError, SpecError, SpecIssue
from npaflow.runtime.contract import error_failure_class
from npaflow.runtime.status import RetryBudget

pytestmark = pytest.mark.unit


def every_error_class() -> list[type[NpaflowError]]:
    """NpaflowError and every subclass defined anywhere in the three layers."""
    for package in (npaflow, activities, workflows_def):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if "fake" not in module.name:
                importlib.import_module(module.name)
    found, todo = [], [NpaflowError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: c.__qualname__)


CLASSES = every_error_class()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_every_error_class_travels_as_a_type_of_the_contract(cls: type[NpaflowError]) -> None:
    assert cls.wire_type in {t.value for t in ErrorType}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_only_infrastructure_errors_are_spent_from_the_infrastructure_budget(cls: type[NpaflowError]) -> None:
    budget = error_failure_class(cls.wire_type).budget()
    assert (budget is RetryBudget.INFRASTRUCTURE) == issubclass(cls, InfraError)


def bare(cls: type[NpaflowError]) -> NpaflowError:
    """An instance of `cls` without each class's own arguments."""
    error = cls.__new__(cls)
    Exception.__init__(error, "boom")
    error.recovery_exhausted = False  # type: ignore[attr-defined]  # read by TransportError
    error.worker_task_queue = "q"  # type: ignore[attr-defined]  # read by LaunchMovedError
    return error


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_an_activity_raises_each_error_as_its_wire_type(cls: type[NpaflowError]) -> None:
    converted = to_application_error(bare(cls))
    assert isinstance(converted, ApplicationError)
    assert converted.type == cls.wire_type
    assert converted.non_retryable == (
        not ErrorType(cls.wire_type).is_retryable() or cls.wire_type == "LaunchMoved"
    )


def test_a_launch_that_may_exist_is_never_relaunched_by_a_budget() -> None:
    assert not issubclass(LaunchUnidentifiedError, InfraError)
    assert error_failure_class(LaunchUnidentifiedError.wire_type).budget() is RetryBudget.NONE


USERS_OR_ROUTING = {"SpecError", "ConfigurationError", "AccessDeniedError", "PayloadError", "LaunchMoved"}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_what_the_spec_settings_or_job_caused_travels_benign_and_a_worker_fault_does_not(
    cls: type[NpaflowError],
) -> None:
    benign = to_application_error(bare(cls)).category is ApplicationErrorCategory.BENIGN
    assert benign == (cls.wire_type in USERS_OR_ROUTING)


def test_an_unclassified_exception_is_never_benign() -> None:
    assert to_application_error(KeyError("x")).category is ApplicationErrorCategory.UNSPECIFIED


async def test_a_spec_error_in_an_activity_is_logged_as_one_line_naming_it() -> None:
    @mapped_errors
    async def load() -> None:
        raise SpecError([SpecIssue(file="<inline spec>", line=1, column=1, message="missing 'kind'")])

    with capture_logs() as logs, pytest.raises(ApplicationError) as raised:
        await load()
    assert raised.value.category is ApplicationErrorCategory.BENIGN
    (line,) = logs
    assert line["event"] == "activity.refused" and line["log_level"] == "warning"
    assert "missing 'kind'" in line["error"] and line["error_type"] == "SpecError"
