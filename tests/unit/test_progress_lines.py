"""Progress lines a person can follow: in the order things happened, state names first."""

from __future__ import annotations

import pytest

from npaflow.cli.logs_handler import _member_of_item, logs_text
from npaflow.cli.progress import change_lines, progress_lines
from npaflow.runtime.ledger import DecisionRecord, WaveAttemptRecord
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import RunStatusView, RunSummary, WaveView
from npaflow.runtime.vocabulary import RunPhase, WaveStatus
from npaflow.traversal.models import WaveKind
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit

T1, T2 = "2026-12-01T10:00:01Z", "2026-12-01T10:00:02Z"


def wave(seq: int, state: str, status: WaveStatus, *, started: str = T1, ended: str = "") -> WaveView:
    return WaveView(
        key=WaveKey.parse(f"{seq:03d}|serial|:{state}:-"),
        attempt=1,
        states=[state],
        job_id=f"w1-{seq}",
        job_name=state,
        status=status,
        sky_status=JobStatus.SUBMITTED if status is WaveStatus.RUNNING else JobStatus.SUCCEEDED,
        started_at=started,
        ended_at=ended,
    )


def view(
    *waves: WaveView, phase: RunPhase = RunPhase.RUNNING, decisions: int = 0, **extra: object
) -> RunStatusView:
    read = [DecisionRecord(state="gate", uri="file:///d.json", decision="promote_checkpoint", read_at=T1)]
    return RunStatusView(
        run_id="r", workflow="w", phase=phase, waves=list(waves), decisions=read[:decisions], **extra
    )


def texts(lines: list[str]) -> list[str]:
    return [line.split(" ", 1)[1] for line in lines]  # without the clock stamp


def test_a_wave_end_its_decision_and_the_next_launch_come_out_in_that_order() -> None:
    before = view(wave(1, "gate", WaveStatus.RUNNING))
    after = view(
        wave(1, "gate", WaveStatus.SUCCEEDED, ended=T1),
        wave(2, "publish", WaveStatus.RUNNING, started=T1),
        decisions=1,
    )
    assert texts(change_lines(before, after)) == [
        "gate attempt 1: succeeded job w1-1 (wave 001)",
        "decision promote_checkpoint from state gate <- file:///d.json",
        "publish attempt 1: running job w1-2 (wave 002)",
    ]


def test_a_decision_comes_right_after_its_states_wave_when_later_waves_ended_in_the_same_second() -> None:
    before = view(wave(1, "gate", WaveStatus.RUNNING))
    after = view(
        wave(1, "gate", WaveStatus.SUCCEEDED, ended=T1),
        wave(2, "publish", WaveStatus.SUCCEEDED, started=T1, ended=T1),
        decisions=1,
    )
    assert texts(change_lines(before, after)) == [
        "gate attempt 1: succeeded job w1-1 (wave 001)",
        "decision promote_checkpoint from state gate <- file:///d.json",
        "publish attempt 1: succeeded job w1-2 (wave 002)",
    ]


def test_each_loop_iterations_decision_follows_its_own_gate_wave() -> None:
    gates = [wave(seq, "gate", WaveStatus.SUCCEEDED, started=T1, ended=T1) for seq in (1, 3)]
    train = wave(2, "train", WaveStatus.SUCCEEDED, started=T1, ended=T1)
    read = [
        DecisionRecord(state="gate", uri=f"file:///{n}.json", decision=d, read_at=T1)
        for n, d in ((1, "loop_back"), (2, "promote_checkpoint"))
    ]
    after = RunStatusView(
        run_id="r", workflow="w", phase=RunPhase.RUNNING, waves=[gates[0], train, gates[1]], decisions=read
    )
    assert texts(change_lines(view(), after)) == [
        "gate attempt 1: succeeded job w1-1 (wave 001)",
        "decision loop_back from state gate <- file:///1.json",
        "train attempt 1: succeeded job w1-2 (wave 002)",
        "gate attempt 1: succeeded job w1-3 (wave 003)",
        "decision promote_checkpoint from state gate <- file:///2.json",
    ]


def test_a_decision_follows_the_attempt_that_succeeded_not_the_one_that_failed() -> None:
    failed = wave(1, "gate", WaveStatus.FAILED, ended=T1)
    retried = wave(1, "gate", WaveStatus.SUCCEEDED, ended=T1).model_copy(update={"attempt": 2})
    after = view(failed, retried, wave(2, "publish", WaveStatus.SUCCEEDED, ended=T1), decisions=1)
    assert texts(change_lines(view(), after)) == [
        "gate attempt 1: failed job w1-1 (wave 001)",
        "gate attempt 2: succeeded job w1-1 (wave 001)",
        "decision promote_checkpoint from state gate <- file:///d.json",
        "publish attempt 1: succeeded job w1-2 (wave 002)",
    ]


def test_the_run_ending_is_the_last_line_after_its_last_wave() -> None:
    before = view(wave(1, "only", WaveStatus.RUNNING))
    after = view(wave(1, "only", WaveStatus.SUCCEEDED, ended=T2), phase=RunPhase.SUCCEEDED)
    assert texts(change_lines(before, after)) == [
        "only attempt 1: succeeded job w1-1 (wave 001)",
        "run r: succeeded",
    ]


def test_the_first_view_starts_with_the_run_then_its_first_launch() -> None:
    assert texts(change_lines(None, view(wave(1, "only", WaveStatus.RUNNING)))) == [
        "run r: running",
        "only attempt 1: running job w1-1 (wave 001)",
    ]


def test_a_running_job_says_running_and_the_backends_word_once_it_says_more() -> None:
    pending = wave(1, "train", WaveStatus.RUNNING).model_copy(update={"sky_status": JobStatus.PENDING})
    assert texts(change_lines(view(wave(1, "train", WaveStatus.RUNNING)), view(pending))) == [
        "train attempt 1: running (PENDING) job w1-1 (wave 001)"
    ]


def test_a_requested_pause_is_shown_until_it_takes_effect() -> None:
    running = wave(1, "train", WaveStatus.RUNNING)
    requested = view(running, pause_requested=True)
    assert texts(change_lines(view(running), requested)) == [
        "run r: running (pause requested: no new launches once in-flight waves finish)"
    ]
    assert progress_lines(requested)[0].endswith(
        "running (pause requested: no new launches once in-flight waves finish)"
    )
    assert texts(change_lines(requested, view(running, phase=RunPhase.PAUSED, pause_requested=True))) == [
        "run r: paused"
    ]


def test_the_summary_labels_a_one_member_batch_as_a_batch_of_its_group_launched_serial() -> None:
    waves = [
        WaveAttemptRecord(
            key=WaveKey.parse("001|sweep|sweep:a:-,sweep:b:-"), states=["a", "b"], kind=WaveKind.PARALLEL
        ),
        WaveAttemptRecord(key=WaveKey.parse("002|sweep|sweep:c:-"), states=["c"], kind=WaveKind.SERIAL),
        WaveAttemptRecord(key=WaveKey.parse("003|serial|:pick:-"), states=["pick"], kind=WaveKind.SERIAL),
    ]
    lines = RunSummary(workflow="w", run_id="r", status="succeeded", wave_count=3, waves=waves).text_lines()
    labels = [line.split("[")[1].split("]")[0] for line in lines if "states=" in line]
    assert labels == ["parallel, batch of 2 in sweep", "serial, batch of 1 in sweep", "serial"]


def test_status_of_a_running_run_with_a_pending_pause_says_pausing_and_what_it_waits_for() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    payload = {
        "run_id": "r1",
        "phase": "running",
        "execution_status": "RUNNING",
        "pause_requested": True,
        "current_states": ["train"],
    }
    first = status_text(StatusReport.model_validate(payload)).splitlines()[0]
    assert first == "run r1: pausing (waits for train to finish; nothing new launches)"


def test_status_counts_a_fan_out_batchs_members_instead_of_repeating_their_template() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    current = ["shard", "shard", "shard", "merge"]
    payload = {"run_id": "r1", "phase": "running", "execution_status": "RUNNING", "current_states": current}
    assert "current: shard ×3, merge" in status_text(StatusReport.model_validate(payload)).splitlines()


def test_status_of_an_ended_run_has_no_current_states_and_no_so_far() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    usage = {"gpu_hours": 1.0, "node_hours": 1.0, "failed_gpu_hours": 0.0, "by_state": {}}
    payload = {"run_id": "r1", "phase": "succeeded", "execution_status": "COMPLETED", "usage": usage}
    text = status_text(StatusReport.model_validate(payload))
    assert "current:" not in text and "so far" not in text


def test_status_names_each_wave_by_state_and_iteration_not_by_its_internal_key() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    wave = {
        "key": "004|serial|inner_loop:score:2",
        "attempt": 1,
        "status": "running",
        "job_id": "w1-4",
        "worker_id": "w1",
        "sky_status": "RUNNING",
        "states": ["score"],
        "job_name": "r1-04-score",
    }
    payload = {"run_id": "r1", "phase": "running", "execution_status": "RUNNING", "waves": [wave]}
    lines = status_text(StatusReport.model_validate(payload)).splitlines()
    assert "  score #2 attempt 1: running, job w1-4 on worker w1" in lines  # RUNNING would say it twice
    assert "004|" not in status_text(StatusReport.model_validate(payload))


def test_status_numbers_the_passes_of_a_sequence_loops_child_whose_keys_carry_no_iteration() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    def wave(key: str, attempt: int, status: str) -> dict[str, object]:
        return {
            "key": key,
            "attempt": attempt,
            "status": status,
            "job_id": "",
            "job_name": "",
            "states": ["b"],
        }

    waves = [
        wave("001|serial|a:b:-", 1, "succeeded"),
        wave("002|serial|a:b:-", 1, "failed"),
        wave("002|serial|a:b:-", 2, "succeeded"),
        wave("003|serial|:c:-", 1, "running"),
    ]
    payload = {"run_id": "r1", "phase": "running", "execution_status": "RUNNING", "waves": waves}
    text = status_text(StatusReport.model_validate(payload))
    lines = [line.split(":")[0] for line in text.splitlines() if " attempt " in line]
    assert lines == ["  b #1 attempt 1", "  b #2 attempt 1", "  b #2 attempt 2", "  c attempt 1"]


def test_status_says_when_a_decision_matches_no_predicate_and_what_it_likely_meant() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    decisions = [
        {"state": "gate", "uri": "file:///d1.json", "decision": "promte"},
        {"state": "gate", "uri": "file:///d2.json", "decision": "reject"},
        {"state": "gate", "uri": "file:///d3.json", "decision": "promote_checkpoint"},
    ]
    payload = {"run_id": "r1", "phase": "running", "execution_status": "RUNNING", "decisions": decisions}
    lines = [
        line for line in status_text(StatusReport.model_validate(payload)).splitlines() if "decision:" in line
    ]
    assert lines == [
        "  decision: promte <- file:///d1.json (state gate) "
        "[matches neither promote_checkpoint nor loop_back; did you mean 'promote'?]",
        "  decision: reject <- file:///d2.json (state gate) "
        "[matches neither promote_checkpoint nor loop_back]",
        "  decision: promote_checkpoint <- file:///d3.json (state gate)",
    ]


def test_status_of_a_wave_still_launching_says_no_job_yet_rather_than_a_dash() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.runtime.summary import StatusReport

    wave = {"key": "001|serial|:train:-", "attempt": 1, "status": "running", "job_id": "", "job_name": ""}
    wave["states"] = ["train"]
    payload = {"run_id": "r1", "phase": "running", "execution_status": "RUNNING", "waves": [wave]}
    assert (
        "  train attempt 1: running, no job yet"
        in status_text(StatusReport.model_validate(payload)).splitlines()
    )


def test_a_wave_the_cache_served_names_its_source_not_a_missing_job() -> None:
    from npaflow.runtime.cache.tally import served_words
    from npaflow.runtime.ledger import CachedStep

    hit = CachedStep(state="prepare", key="k", hit=True, source_run="r1", source_job="7", gpu_hours_saved=0.5)
    miss = CachedStep(state="train", key="k2")
    assert served_words([hit], "") == "from the cache: run r1 job 7 (saved 0.5000 GPU-h)"
    assert served_words([hit, miss], "9") == "1 step from the cache (saved 0.5000 GPU-h)"
    assert served_words([miss], "") == ""


def fan_out_batch(items: list[str]) -> WaveView:
    members = ",".join(f"g:shard@{n:012x}:-" for n in range(len(items)))
    return wave(2, "shard", WaveStatus.RUNNING).model_copy(
        update={"key": WaveKey.parse(f"002|g|{members}"), "states": ["shard"] * len(items), "items": items}
    )


def test_a_fan_out_batch_is_followed_by_its_items_not_its_repeated_template() -> None:
    after = view(fan_out_batch(["shard-000", "shard-001", "shard-002"]))
    assert texts(change_lines(view(), after)) == [
        "shard ×3 [shard-000, shard-001, shard-002] attempt 1: running job w1-2 (wave 002, group g)"
    ]
    assert "  running shard ×3 [shard-000, shard-001, shard-002] attempt 1: job w1-2" in "\n".join(
        progress_lines(after, now=0)
    )


def test_logs_name_the_item_each_member_task_ran_and_select_one_member_by_its_item() -> None:
    batch = fan_out_batch(["a", "b"])
    text = logs_text("r", "", [(batch, "==> shard-000000000001-0 <==\nhello")])
    assert text.splitlines()[0].startswith("### wave 002 shard ×2 [a, b] attempt 1 job ")  # not its long key
    assert text.splitlines()[1:3] == ["# shard-000000000000: a", "# shard-000000000001: b"]
    assert _member_of_item([wave(1, "split", WaveStatus.SUCCEEDED), batch], "b") == (
        [batch],
        "shard-000000000001",
    )
    assert _member_of_item([batch], "c") == ([], "")


def test_a_change_line_shows_an_items_escape_sequence_and_never_sends_it() -> None:
    after = view(fan_out_batch(["\x1b]0;PWNED\x07evil", "ok\u202egnp"]))
    (line,) = texts(change_lines(view(), after))
    assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line
    assert "[\\x1b]0;PWNED\\x07evil, ok\\u202egnp]" in line


def test_logs_of_an_unknown_name_suggest_the_closest_state_or_item() -> None:
    from npaflow.cli.logs_handler import _items_hint

    assert _items_hint([fan_out_batch(["shard-000", "shard-001"])]) == (
        ", or a fan-out member's item (e.g. --state shard-000)"
    )
    assert _items_hint([wave(1, "split", WaveStatus.SUCCEEDED)]) == ""


def test_logs_select_a_member_by_its_task_name_or_item_key_and_head_only_that_member() -> None:
    batch = fan_out_batch(["a", "b"])
    assert _member_of_item([batch], "shard-000000000001") == ([batch], "shard-000000000001")
    assert _member_of_item([batch], "000000000000") == ([batch], "shard-000000000000")
    text = logs_text("r", "b", [(batch, "==> shard-000000000001-0 <==\nhello")])
    assert text.splitlines()[1:3] == ["# shard-000000000001: b", "==> shard-000000000001-0 <=="]


def test_logs_of_a_member_skip_the_retries_that_carried_it_and_a_retry_heads_only_what_it_ran() -> None:
    first = fan_out_batch(["a", "b"]).model_copy(update={"status": WaveStatus.FAILED})
    carried = {"attempt": 2, "job_id": "w1-3", "carried": ["000000000000"], "status": WaveStatus.RUNNING}
    retry = first.model_copy(update=carried)
    assert _member_of_item([first, retry], "a") == ([first], "shard-000000000000")
    assert _member_of_item([first, retry], "b") == ([first, retry], "shard-000000000001")
    text = logs_text("r", "", [(retry, "==> shard-000000000001-0 <==")])
    assert text.splitlines()[1:3] == ["# shard-000000000001: b", "==> shard-000000000001-0 <=="]
    assert texts(change_lines(view(first), view(retry))) == [
        "shard ×2 [a, b] attempt 2: running job w1-3 (wave 002, group g; a done before)"
    ]


def test_logs_show_an_items_escape_sequence_and_quote_it_for_the_shell_in_a_hint() -> None:
    from npaflow.cli.logs_handler import _items_hint

    batch = fan_out_batch(["\x1b[31mred", "a; touch x"])
    assert "# shard-000000000000: \\x1b[31mred" in logs_text("r", "", [(batch, "")])
    hint = _items_hint([fan_out_batch(["a; touch x"])])
    assert hint == ", or a fan-out member's item (e.g. --state 'a; touch x')"
