"""A worker refuses, at start, the settings that would make every run fail or misname it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from npaflow.errors import UsageError
from npaflow.runtime.environment import unknown_variables
from worker.config import WorkerConfig, warn_unknown_variables

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NPAFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NPAFLOW_WORKER_ID", "w-1")
    for name in ("NPAFLOW_LEDGER_ROOT", "NPAFLOW_PAGE_URL", "NPAFLOW_QUOTA_POOL", "NPAFLOW_LOG_FORMAT"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("NPAFLOW_LEDGER_ROOT", "garbage://x", "give s3://BUCKET/PREFIX or an absolute file:///dir"),
        ("NPAFLOW_LEDGER_ROOT", "relative/runs", "give s3://BUCKET/PREFIX or an absolute file:///dir"),
        ("NPAFLOW_WORKER_ID", "a b/c", "it names a task queue and every local job"),
        ("NPAFLOW_PAGE_URL", "javascript:alert(1)", "give an http(s) URL"),
        ("NPAFLOW_QUOTA_POOL", "A B", "must be 1-63 lowercase letters"),
        ("NPAFLOW_LOG_FORMAT", "xml", "give json or console"),
    ],
)
def test_a_setting_no_run_could_use_is_refused_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(UsageError, match=variable) as refused:
        WorkerConfig.from_env().check()
    assert says in str(refused.value)


@pytest.mark.parametrize(
    "root", ["s3://team-runs/npaflow", "s3://team-runs", "file:///srv/runs", "/srv/runs"]
)
def test_a_ledger_root_on_s3_or_an_absolute_directory_is_accepted(
    monkeypatch: pytest.MonkeyPatch, root: str
) -> None:
    monkeypatch.setenv("NPAFLOW_LEDGER_ROOT", root)
    WorkerConfig.from_env().check()


def test_a_home_that_is_a_file_is_refused_before_anything_is_written_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NPAFLOW_HOME", "/dev/null")
    monkeypatch.delenv("NPAFLOW_WORKER_ID")
    with pytest.raises(UsageError, match="NPAFLOW_HOME='/dev/null' is not a directory"):
        WorkerConfig.from_env()


def test_a_misspelt_npaflow_variable_is_named_at_start_with_the_one_it_meant() -> None:
    environ = {"NPAFLOW_TASKQUEUE": "gpu", "NPAFLOW_TASK_QUEUE": "cpu", "NPAFLOWISH": "x", "PATH": "/bin"}
    with capture_logs() as logs:
        warn_unknown_variables(environ)
    assert logs == [
        {
            "event": "worker.unknown_variable",
            "log_level": "warning",
            "variable": "NPAFLOW_TASKQUEUE",
            "hint": "npaflow does not read it; did you mean 'NPAFLOW_TASK_QUEUE'?",
        }
    ]


def test_every_npaflow_variable_the_code_reads_counts_as_known() -> None:
    root = Path(__file__).resolve().parents[2]
    named = {
        name
        for package in ("npaflow", "worker", "activities", "workflows_def")
        for path in (root / package).rglob("*.py")
        for name in re.findall(r"\bNPAFLOW_[A-Z_]+\b", path.read_text(encoding="utf-8"))
    }
    assert named and unknown_variables(dict.fromkeys(named, "")) == []
