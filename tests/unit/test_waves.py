"""Wave folding, batching, wave keys and job names (reference §5, §6.4.1)."""

from __future__ import annotations

import pytest

from npaflow.ids import RunId
from npaflow.waves import (
    WaveKey,
    WaveMember,
    counted_states,
    job_name,
    sanitize_job_name,
    split_into_batches,
)
from tests.helpers import load_fixture, plan_of

pytestmark = pytest.mark.unit


def test_wave_plan_groups_parallel_members() -> None:
    plan = plan_of("fanout-demo.yaml")
    waves = plan.occurrences()
    assert [w.kind.value for w in waves] == ["parallel", "serial"]
    assert (waves[0].group, len(waves[0].steps), waves[0].max_concurrency) == ("shards", 3, 2)
    assert [len(b.steps) for b in waves[0].batches] == [2, 1]
    assert plan.waves_to_dict()["parallel_waves"] == 1


def test_wave_plan_defaults_concurrency_to_group_size() -> None:
    spec = load_fixture("fanout-demo.yaml")
    shards = spec.states["shards"].model_copy(update={"max_concurrency": None})
    spec = spec.model_copy(update={"states": {**spec.states, "shards": shards}})
    from npaflow.plan import build_plan
    from tests.helpers import CATALOG

    wave = build_plan(spec, CATALOG).occurrences()[0]
    assert (wave.max_concurrency, [len(b.steps) for b in wave.batches]) == (3, [3])


def test_wave_plan_of_serial_spec_is_all_serial() -> None:
    waves = plan_of("serial-pipeline.yaml").occurrences()
    assert all(w.kind.value == "serial" and len(w.steps) == 1 for w in waves)
    assert [w.name for w in waves] == ["ingest", "clean", "label", "train", "evaluate", "report"]


def test_waves_json_has_exactly_the_reference_shape() -> None:
    payload = plan_of("fanout-demo.yaml").waves_to_dict()
    assert set(payload) == {"workflow", "run_id", "assume_decision", "wave_count", "parallel_waves", "waves"}
    assert set(payload["waves"][0]) == {
        "index",
        "kind",
        "group",
        "name",
        "max_concurrency",
        "batches",
        "steps",
    }
    assert set(payload["waves"][0]["steps"][0]) == {"state", "iteration", "tool_ref", "resources", "outputs"}
    assert payload["wave_count"] == 2


@pytest.mark.parametrize(("cap", "sizes"), [(0, [2, 1]), (1, [1, 1, 1]), (8, [2, 1])])
def test_max_concurrency_option_is_a_cap_not_an_override(cap: int, sizes: list[int]) -> None:
    wave = plan_of("fanout-demo.yaml", cap=cap).occurrences()[0]
    assert [len(b.steps) for b in wave.batches] == sizes


def test_batches_carry_reference_wave_keys() -> None:
    keys = [str(w.key) for w in plan_of("fanout-demo.yaml").waves]
    assert keys == [
        "001|shards|shards:shard-a:-,shards:shard-b:-",
        "002|shards|shards:shard-c:-",
        "003|serial|:join:-",
    ]


def test_loop_waves_count_every_iteration_in_the_sequence() -> None:
    plan = plan_of("gate-loop-ref.yaml", "loop_back")
    work_keys = [str(w.key) for w in plan.waves if w.steps[0].state == "work"]
    assert work_keys == ["001|serial|refine:work:-", "003|serial|refine:work:-", "005|serial|refine:work:-"]


def test_one_member_batches_are_serial_but_keep_the_group() -> None:
    last = plan_of("fanout-demo.yaml").waves[1]
    assert (last.kind.value, last.group, last.label) == ("serial", "shards", "shards")


def test_split_into_batches_keeps_order() -> None:
    assert split_into_batches([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    assert split_into_batches([1, 2, 3], 0) == [[1, 2, 3]]
    assert split_into_batches([1, 2, 3], 0, cap=2) == [[1, 2], [3]]


def test_wave_key_format() -> None:
    assert str(WaveKey(sequence=11, members=(WaveMember(state="fin"),))) == "011|serial|:fin:-"


def test_wave_keys_serialise_to_the_reference_string_and_parse_back() -> None:
    key = WaveKey(
        sequence=4,
        group="grp",
        members=(
            WaveMember(loop_label="grp", state="p3"),
            WaveMember(loop_label="o", state="g", iteration=2),
        ),
    )
    assert key.model_dump() == "004|grp|grp:p3:-,o:g:2"
    assert WaveKey.model_validate("004|grp|grp:p3:-,o:g:2") == key
    assert WaveKey.parse(str(key)).states == ["p3", "g"]


@pytest.mark.parametrize("text", ["²|serial|:a:-", "001|serial"])
def test_text_that_is_not_a_wave_key_is_refused_as_such(text: str) -> None:
    with pytest.raises(ValueError, match="not a wave key"):
        WaveKey.parse(text)


def test_a_member_iteration_in_other_digits_is_no_iteration() -> None:
    assert WaveMember.parse("refine:score:²").iteration is None


def test_job_names_are_sanitized_and_numbered() -> None:
    assert job_name("rt", 1, "a") == "rt-01-a"
    assert job_name("RT_Adopt.Failed", 1, "shards") == "rt_adopt-failed-01-shards"
    assert sanitize_job_name("---") == "npa-workflow"


def test_long_run_id_preserves_retry_attempt_suffix() -> None:
    name = job_name("paidf-" + "x" * 80, 7, "stage", attempt=3)
    assert len(name) <= 60
    assert name.endswith("-a3")


def test_waves_of_a_run_whose_id_fills_the_name_still_get_names_of_their_own() -> None:
    run = RunId("nightly-caption-and-score-pipeline-prod-2026-12-02T03:00:00Z")  # a schedule's run
    names = {job_name(run, sequence, "caption") for sequence in range(1, 51)}
    assert len(names) == 50 and all(len(name) <= 60 and name.startswith("nightly-caption") for name in names)
    assert job_name(run, 2, "caption", attempt=2) != job_name(run, 2, "caption")


def test_states_running_at_once_are_counted_in_first_seen_order() -> None:
    states = ["shard", "merge", "shard", "shard"]
    assert counted_states(states) == ["shard ×3", "merge"]
    assert counted_states(states, spaced=False) == ["shard×3", "merge"]  # one word in `list`'s table
    assert counted_states([]) == []
