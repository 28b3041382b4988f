"""A run's result keeps under Temporal's payload limits however many records it has."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from npaflow.runtime.payload_limits import (
    PAYLOAD_CEILING,
    TEMPORAL_PAYLOAD_WARNING,
    TEMPORAL_SEARCH_ATTRIBUTE_BYTES,
    history_past_share,
    keywords_within,
    newest_within,
    past_the_ceiling,
)

pytestmark = pytest.mark.unit


class Record(BaseModel):
    name: str


def test_the_newest_records_that_fit_are_kept_in_order_and_the_rest_counted() -> None:
    records = [Record(name=f"shard-{index:04d}" * 20) for index in range(1000)]
    kept, omitted = newest_within(records, 64 * 1024)
    assert kept == records[-len(kept) :] and omitted == 1000 - len(kept)
    assert 0 < sum(len(r.model_dump_json()) for r in kept) <= 64 * 1024 < TEMPORAL_PAYLOAD_WARNING


def test_records_within_the_budget_are_all_kept() -> None:
    records = [Record(name="a"), Record(name="b")]
    assert newest_within(records, 1024) == (records, 0)


def test_a_wide_batchs_current_states_fit_a_search_attribute_and_say_how_many_more() -> None:
    names = [f"shard-{index:04d}-with-a-rather-long-descriptive-member-name" for index in range(50)]
    shown = keywords_within(names)
    assert len(json.dumps(shown)) < TEMPORAL_SEARCH_ATTRIBUTE_BYTES
    assert shown[:-1] == names[: len(shown) - 1] and shown[-1] == f"+{50 - len(shown) + 1} more"
    assert keywords_within(["a", "b"]) == ["a", "b"]


def test_a_payload_past_the_ceiling_is_named_with_its_size_and_the_limit() -> None:
    assert past_the_ceiling("the input of launch_wave", PAYLOAD_CEILING) == ""
    problem = past_the_ceiling("the input of launch_wave", 3 * 1024 * 1024)
    assert problem.startswith("the input of launch_wave is 3.00 MiB, past Temporal's 2 MiB payload limit")
    assert "at most 1.94 MiB" in problem


def test_a_history_past_a_fifth_of_temporals_limits_continues_as_new() -> None:
    assert not history_past_share(10_000, 9 * 1024 * 1024)
    assert history_past_share(10_240, 1024)  # a fifth of 51,200 events
    assert history_past_share(100, 10 * 1024 * 1024)  # a fifth of 50 MiB


def test_a_summary_still_past_the_warning_keeps_its_counts_and_leaves_its_records_to_the_ledger() -> None:
    from npaflow.ids import RunId
    from npaflow.runtime.ledger import WaveAttemptRecord
    from npaflow.runtime.result import fitted_summary
    from npaflow.runtime.summary import RunSummary
    from npaflow.runtime.vocabulary import RunPhase
    from npaflow.waves import WaveKey

    waves = [WaveAttemptRecord(key=WaveKey(sequence=i), states=["s"]) for i in range(3)]
    summary = RunSummary(
        workflow="w",
        run_id=RunId("r"),
        status=RunPhase.FAILED,
        wave_count=3,
        waves=waves,
        error="x" * 300_000,
    )
    fitted = fitted_summary(summary)
    assert len(fitted.model_dump_json()) < TEMPORAL_PAYLOAD_WARNING
    assert (fitted.waves, fitted.waves_omitted, fitted.wave_count) == ([], 3, 3)
    assert fitted.error == "x" * 4096
