"""`load_spec` refuses what Temporal could not carry, with a spec error (never retried)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities import spec_delivery
from activities.context import ActivityContext
from activities.runs import RunActivities
from activities.storage import StorageRouter
from npaflow.errors import ErrorType
from npaflow.runtime.contract import spec_file_uri
from npaflow.runtime.loaded import LoadSpecInput
from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_WARNING
from npaflow.runtime.spec_parts import INLINE_LOAD_BYTES, LoadPartInput, unpack
from tests.helpers import EXAMPLES
from tests.spec_factory import chain_spec

pytestmark = pytest.mark.integration

GATE_LOOP = (EXAMPLES / "gate-loop.yaml").read_text(encoding="utf-8")


@pytest.fixture
def runs(tmp_path: Path) -> RunActivities:
    return RunActivities(ActivityContext(home=tmp_path, storage=StorageRouter(), backends={}))


async def test_a_spec_that_loads_past_one_payload_comes_back_in_parts_that_make_up_the_load(
    runs: RunActivities, tmp_path: Path
) -> None:
    spec = tmp_path / "huge.yaml"
    spec.write_text(chain_spec(6_000))
    request = LoadSpecInput(run_id="rt-huge", spec_uri=spec.as_uri())
    result = await ActivityEnvironment().run(runs.load_spec, request)
    assert result.loaded is None and result.parts is not None
    assert result.parts.loaded_bytes > INLINE_LOAD_BYTES
    parts = [
        await ActivityEnvironment().run(
            runs.delivery.read_load_part, LoadPartInput(parts=result.parts, index=index)
        )
        for index in range(result.parts.count)
    ]
    assert all(len(part.model_dump_json()) < TEMPORAL_PAYLOAD_WARNING for part in parts)
    loaded = unpack(result.parts, list(reversed(parts)))
    assert len(loaded.spec.states) >= 6_000
    assert loaded.workflow_yaml == ""  # kept beside the ledger instead of crossing as a payload
    assert Path(spec_file_uri(loaded.ledger_uri).removeprefix("file://")).read_text() == spec.read_text()


async def test_parts_that_are_not_the_packed_ones_are_refused(runs: RunActivities, tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    spec.write_text(chain_spec(6_000))
    result = await ActivityEnvironment().run(
        runs.load_spec, LoadSpecInput(run_id="rt-huge-2", spec_uri=spec.as_uri())
    )
    assert result.parts is not None
    first = await ActivityEnvironment().run(
        runs.delivery.read_load_part, LoadPartInput(parts=result.parts, index=0)
    )
    changed = first.model_copy(update={"text": first.text[:-4] + "AAAA"})
    with pytest.raises(ValueError, match="changed since it was written"):
        unpack(result.parts.model_copy(update={"count": 1}), [changed])


async def test_a_spec_that_loads_past_what_a_run_can_hold_is_a_spec_error_naming_the_limit(
    runs: RunActivities, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spec_delivery, "MAX_LOADED_SPEC_BYTES", 2**20)
    spec = tmp_path / "huge.yaml"
    spec.write_text(chain_spec(6_000))
    request = LoadSpecInput(run_id="rt-huge", spec_uri=spec.as_uri())
    with pytest.raises(ApplicationError, match=r"must load to at most 1\.0 MiB") as raised:
        await ActivityEnvironment().run(runs.load_spec, request)
    assert spec.as_uri() in raised.value.message
    assert raised.value.non_retryable and raised.value.type == ErrorType.SPEC.value


async def test_a_spec_under_one_payload_is_the_loads_own_result(runs: RunActivities, tmp_path: Path) -> None:
    spec = tmp_path / "chain.yaml"
    spec.write_text(chain_spec(200))
    result = await ActivityEnvironment().run(
        runs.load_spec, LoadSpecInput(run_id="rt-chain", spec_uri=spec.as_uri())
    )
    assert result.parts is None
    assert len(result.whole().spec.states) >= 200
    assert len(result.model_dump_json()) < INLINE_LOAD_BYTES + 64


async def test_a_var_nothing_reads_is_refused_at_load_whatever_started_the_run(runs: RunActivities) -> None:
    """A raw `temporal workflow start` (or a schedule) gets the check `submit` makes."""
    request = LoadSpecInput(run_id="typo-1", spec=GATE_LOOP, vars={"treshold": "80"})
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(runs.load_spec, request)
    assert "treshold" in refused.value.message and "allow_new_vars" in refused.value.message
    assert refused.value.non_retryable and refused.value.type == ErrorType.SPEC.value


async def test_allow_new_vars_lets_a_deliberate_new_config_key_through_at_load(runs: RunActivities) -> None:
    request = LoadSpecInput(run_id="typo-2", spec=GATE_LOOP, vars={"brand_new": "1"}, allow_new_vars=True)
    loaded = (await ActivityEnvironment().run(runs.load_spec, request)).whole()
    assert loaded.spec.config["brand_new"] == "1"
