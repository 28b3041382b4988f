"""The `status` query answers in bounded pages that make up the whole view (issue 63)."""

from __future__ import annotations

import pytest

from npaflow.ids import RunId
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_WARNING
from npaflow.runtime.run_state import RunState
from npaflow.runtime.status_pages import fitted, merged_pages, status_view
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey, WaveMember

pytestmark = pytest.mark.unit

LONG = "-with-a-rather-long-descriptive-member-name"


def run_with(waves: int, members: int = 1) -> RunState:
    state = RunState(RunId("run-1"))
    for index in range(waves):
        names = [f"shard-{index:05d}-{member:03d}{LONG}" for member in range(members)]
        key = WaveKey(
            sequence=index,
            group="fan" if members > 1 else "",
            members=tuple(WaveMember(loop_label="fan", state=name) for name in names),
        )
        record = WaveAttemptRecord(key=key, states=names, status=WaveStatus.SUCCEEDED, job_id=f"j{index}")
        state.waves.replayed(record)
    return state


def pages_of(state: RunState) -> list:
    pages = [status_view(state)]
    while pages[-1].waves_start > 0:
        pages.append(status_view(state, before=pages[-1].waves_start))
    return pages


def test_a_long_runs_answer_stays_under_the_warning_and_says_where_its_waves_start() -> None:
    state = run_with(2000)
    view = status_view(state)
    assert len(view.model_dump_json()) < TEMPORAL_PAYLOAD_WARNING
    assert view.wave_count == 2000 and 0 < view.waves_start < 2000
    assert view.waves[-1].job_id == "j1999"
    assert len(view.waves) == 2000 - view.waves_start


def test_the_pages_of_a_wide_run_make_up_every_wave_in_order_each_under_the_warning() -> None:
    state = run_with(100, members=50)
    pages = pages_of(state)
    assert len(pages) > 1
    assert all(len(page.model_dump_json()) < TEMPORAL_PAYLOAD_WARNING for page in pages)
    whole = merged_pages(pages)
    assert [wave.job_id for wave in whole.waves] == [f"j{index}" for index in range(100)]
    assert whole.waves_start == 0 and whole.wave_count == 100


def test_a_short_run_answers_in_one_page() -> None:
    view = status_view(run_with(3))
    assert (view.waves_start, view.wave_count, len(view.waves)) == (0, 3, 3)


def test_a_batch_of_thousands_names_its_first_current_states_and_counts_the_rest() -> None:
    state = run_with(0)
    names = [f"m{index:05d}{LONG}" for index in range(5000)]
    state.states_entered(names)
    view = status_view(state)
    assert 0 < len(view.current_states) < 5000
    assert len(view.current_states) + view.current_states_omitted == 5000
    assert len(view.model_dump_json()) < TEMPORAL_PAYLOAD_WARNING


def test_an_answer_still_past_its_limit_keeps_its_newest_waves() -> None:
    view = status_view(run_with(40, members=50))
    smaller = fitted(view, limit=len(view.model_dump_json()) // 3)
    assert len(smaller.model_dump_json()) <= len(view.model_dump_json()) // 3
    assert smaller.waves[-1].job_id == "j39"
    assert smaller.waves_start == view.waves_start + len(view.waves) - len(smaller.waves)
