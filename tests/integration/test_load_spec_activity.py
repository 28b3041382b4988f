"""`load_spec` refuses what Temporal could not carry, with a spec error (never retried)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.context import ActivityContext
from activities.runs import MAX_LOADED_SPEC_BYTES, RunActivities
from activities.storage import StorageRouter
from npaflow.errors import ErrorType
from npaflow.runtime.messages import LoadSpecInput
from tests.helpers import EXAMPLES
from tests.spec_factory import chain_spec

pytestmark = pytest.mark.integration

GATE_LOOP = (EXAMPLES / "gate-loop.yaml").read_text(encoding="utf-8")


@pytest.fixture
def runs(tmp_path: Path) -> RunActivities:
    return RunActivities(ActivityContext(home=tmp_path, storage=StorageRouter(), backends={}))


async def test_a_spec_that_loads_past_the_payload_limit_is_a_spec_error_naming_the_limit(
    runs: RunActivities, tmp_path: Path
) -> None:
    spec = tmp_path / "huge.yaml"
    spec.write_text(chain_spec(6_000))
    request = LoadSpecInput(run_id="rt-huge", spec_uri=spec.as_uri())
    with pytest.raises(ApplicationError, match="Temporal payloads are limited to 2 MB") as raised:
        await ActivityEnvironment().run(runs.load_spec, request)
    assert spec.as_uri() in raised.value.message
    assert raised.value.non_retryable and raised.value.type == ErrorType.SPEC.value


async def test_a_spec_under_the_payload_limit_loads(runs: RunActivities, tmp_path: Path) -> None:
    spec = tmp_path / "chain.yaml"
    spec.write_text(chain_spec(200))
    loaded = await ActivityEnvironment().run(
        runs.load_spec, LoadSpecInput(run_id="rt-chain", spec_uri=spec.as_uri())
    )
    assert len(loaded.spec.states) >= 200
    assert len(loaded.model_dump_json()) < MAX_LOADED_SPEC_BYTES


async def test_a_var_nothing_reads_is_refused_at_load_whatever_started_the_run(runs: RunActivities) -> None:
    """A raw `temporal workflow start` (or a schedule) gets the check `submit` makes."""
    request = LoadSpecInput(run_id="typo-1", spec=GATE_LOOP, vars={"treshold": "80"})
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(runs.load_spec, request)
    assert "treshold" in refused.value.message and "allow_new_vars" in refused.value.message
    assert refused.value.non_retryable and refused.value.type == ErrorType.SPEC.value


async def test_allow_new_vars_lets_a_deliberate_new_config_key_through_at_load(runs: RunActivities) -> None:
    request = LoadSpecInput(run_id="typo-2", spec=GATE_LOOP, vars={"brand_new": "1"}, allow_new_vars=True)
    loaded = await ActivityEnvironment().run(runs.load_spec, request)
    assert loaded.spec.config["brand_new"] == "1"
