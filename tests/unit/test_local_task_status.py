"""A local job's task statuses on disk: guarded moves, and snapshots that never show half a move."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from activities.backends.local.task_status import (
    TaskStatus,
    TaskTransitionError,
    end_tasks,
    init_task,
    move_task,
    read_task,
    read_tasks,
)

PIPELINE = ["a", "b", "c"]


def started(job_dir: Path, *tasks: str) -> None:
    for name in tasks:
        move_task(job_dir, name, TaskStatus.STARTING)
        move_task(job_dir, name, TaskStatus.RUNNING)


def test_a_terminal_status_is_final_whoever_moves_second(tmp_path: Path) -> None:
    init_task(tmp_path, "a")
    started(tmp_path, "a")
    assert move_task(tmp_path, "a", TaskStatus.SUCCEEDED)
    assert not move_task(tmp_path, "a", TaskStatus.CANCELLED, "cancelled by request")
    assert read_task(tmp_path, "a").status is TaskStatus.SUCCEEDED


def test_a_move_the_table_does_not_allow_is_an_error(tmp_path: Path) -> None:
    init_task(tmp_path, "a")
    with pytest.raises(TaskTransitionError, match="PENDING -> SUCCEEDED"):
        move_task(tmp_path, "a", TaskStatus.SUCCEEDED)


def test_a_pipeline_failure_cancels_the_later_tasks_in_the_same_move(tmp_path: Path) -> None:
    for name in PIPELINE:
        init_task(tmp_path, name)
    started(tmp_path, "a")
    assert move_task(tmp_path, "a", TaskStatus.FAILED, "run exited non-zero", cancel_after=["b", "c"])
    records = read_tasks(tmp_path, PIPELINE)
    assert [r.status for r in records] == [TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.CANCELLED]
    assert records[1].failure_reason == "an earlier task failed"


def test_no_snapshot_shows_a_failed_task_beside_a_later_task_still_pending(tmp_path: Path) -> None:
    """A reader polling while the pipeline fails sees before or after the move, never between."""
    seen: list[list[TaskStatus]] = []

    def poll(job_dir: Path, done: threading.Event) -> None:
        while not done.is_set():
            seen.append([r.status for r in read_tasks(job_dir, PIPELINE)])

    for attempt in range(20):
        job_dir, done = tmp_path / str(attempt), threading.Event()
        for name in PIPELINE:
            init_task(job_dir, name)
        started(job_dir, "a")
        reader = threading.Thread(target=poll, args=(job_dir, done))
        reader.start()
        move_task(job_dir, "a", TaskStatus.FAILED, cancel_after=["b", "c"])
        done.set()
        reader.join()
    assert [s for s in seen if s[0] is TaskStatus.FAILED and TaskStatus.PENDING in s] == []


def test_a_cancel_ends_every_unfinished_task_and_leaves_finished_ones_as_they_ended(tmp_path: Path) -> None:
    for name in PIPELINE:
        init_task(tmp_path, name)
    started(tmp_path, "a", "b")
    move_task(tmp_path, "a", TaskStatus.SUCCEEDED)
    assert end_tasks(tmp_path, PIPELINE, TaskStatus.CANCELLED, "cancelled by request") == ["b", "c"]
    statuses = [r.status for r in read_tasks(tmp_path, PIPELINE)]
    assert statuses == [TaskStatus.SUCCEEDED, TaskStatus.CANCELLED, TaskStatus.CANCELLED]


def test_only_a_cancel_or_a_dead_controller_ends_tasks_from_outside(tmp_path: Path) -> None:
    init_task(tmp_path, "a")
    with pytest.raises(TaskTransitionError, match="not an ending"):
        end_tasks(tmp_path, ["a"], TaskStatus.SUCCEEDED, "")


def test_a_move_rewrites_the_task_file_in_place_without_freeing_an_inode(tmp_path: Path) -> None:
    """A replace by rename cost a temp file, a rename and a freed inode per move."""
    init_task(tmp_path, "a")
    status_file = tmp_path / "status" / "a.json"
    inode = status_file.stat().st_ino
    started(tmp_path, "a")
    move_task(tmp_path, "a", TaskStatus.FAILED, "run exited with code 3 on node 0 of 1")
    assert status_file.stat().st_ino == inode
    assert sorted(p.name for p in status_file.parent.iterdir()) == [".lock", "a.json"]


def test_a_record_shorter_than_the_one_before_reads_back_whole(tmp_path: Path) -> None:
    """Moves never truncate (a killed writer leaves one whole record): the rest is padding."""
    init_task(tmp_path, "a")
    status_file = tmp_path / "status" / "a.json"
    status_file.write_text(json.dumps(json.loads(status_file.read_text()), indent=8))  # a longer record
    move_task(tmp_path, "a", TaskStatus.STARTING)
    assert read_task(tmp_path, "a").status is TaskStatus.STARTING
    assert status_file.read_text().endswith(" ")


def test_every_move_changes_the_status_directorys_mtime_that_pollers_watch(tmp_path: Path) -> None:
    init_task(tmp_path, "a")
    status_dir = tmp_path / "status"
    os.utime(status_dir, ns=(0, 0))
    move_task(tmp_path, "a", TaskStatus.STARTING)
    assert status_dir.stat().st_mtime_ns != 0
