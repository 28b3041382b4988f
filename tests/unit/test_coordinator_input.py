"""A coordinator's carried state: refused at once on a first start, retried after a continue-as-new."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from npaflow.quota import PoolCarry, PoolConfig
from workflows_def.input_refusal import UnreadableCarriedState, carried_state


def test_no_carried_state_is_none() -> None:
    assert carried_state(None, PoolCarry, continued=False) is None


def test_carried_state_that_validates_is_the_model() -> None:
    carried = PoolCarry(config=PoolConfig(gpus=4), used={"a": 1.5})
    assert carried_state(carried.model_dump(mode="json"), PoolCarry, continued=True) == carried


def test_a_first_start_that_does_not_validate_fails_the_workflow_in_one_line() -> None:
    with pytest.raises(ApplicationError) as refused:
        carried_state({"config": {"gpus": "many"}}, PoolCarry, continued=False)
    assert refused.value.non_retryable
    assert refused.value.message.startswith("invalid PoolCarry: config.gpus: Input should be a valid integer")


def test_a_continued_state_that_does_not_validate_fails_only_the_task_so_a_fixed_deploy_resumes_it() -> None:
    with pytest.raises(UnreadableCarriedState) as unreadable:
        carried_state({"config": {"gpus": "many"}}, PoolCarry, continued=True)
    assert not isinstance(unreadable.value, ApplicationError)
    assert "config.gpus" in str(unreadable.value)
