"""One home per error: each class carries its wire type, and class and wire type agree on retries."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from temporalio.exceptions import ApplicationError

import activities
import npaflow
import workflows_def
from activities.errors import to_application_error
from npaflow.errors import ErrorType, InfraError, LaunchUnidentifiedError, NpaflowError
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


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_an_activity_raises_each_error_as_its_wire_type(cls: type[NpaflowError]) -> None:
    error = cls.__new__(cls)  # without each class's own arguments
    Exception.__init__(error, "boom")
    error.recovery_exhausted = False  # type: ignore[attr-defined]  # read by TransportError
    error.worker_task_queue = "q"  # type: ignore[attr-defined]  # read by LaunchMovedError
    converted = to_application_error(error)
    assert isinstance(converted, ApplicationError)
    assert converted.type == cls.wire_type
    assert converted.non_retryable == (
        not ErrorType(cls.wire_type).is_retryable() or cls.wire_type == "LaunchMoved"
    )


def test_a_launch_that_may_exist_is_never_relaunched_by_a_budget() -> None:
    assert not issubclass(LaunchUnidentifiedError, InfraError)
    assert error_failure_class(LaunchUnidentifiedError.wire_type).budget() is RetryBudget.NONE
