"""The contract: every shared name is defined once, and every activity is implemented and served."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from activities.backends.local import LocalBackend
from activities.context import ActivityContext
from npaflow.runtime import contract
from npaflow.runtime.contract import ACTIVITIES, SEARCH_ATTRIBUTE_TYPES, WORKER_QUEUE_ACTIVITIES, QueueKind
from npaflow.runtime.request import BackendName
from tests.helpers import ROOT
from worker.registry import activities_for, implementations

pytestmark = pytest.mark.unit

#: The contract: contract.py, and environment.py and ledger_layout.py whose names it re-exports.
CONTRACT_FILES = {
    Path("npaflow/runtime/contract.py"),
    Path("npaflow/runtime/environment.py"),
    Path("npaflow/runtime/ledger_layout.py"),
}
#: Literals that must appear in code only in the contract.
EXACT = {
    contract.WORKFLOW_TYPE,
    contract.LOGS_WORKFLOW_TYPE,
    contract.POLL_QUEUE_SUFFIX,
    *(ref.name for ref in ACTIVITIES),
    *(var.value for var in contract.EnvVar),
    *(attribute.value for attribute in contract.SearchAttribute),
}
#: Ledger file names, found inside any longer string (paths, URIs).
CONTAINED = {
    contract.RUNTIME_FILE,
    contract.MANIFEST_FILE,
    contract.STATUS_FILE,
    f"{contract.LEDGER_DIR}/",
    f"/{contract.SPEC_FILE}",
}


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are neither docstrings nor `__all__` entries."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            skipped.update(id(c) for c in ast.walk(node.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
    ]


def _source_files() -> list[Path]:
    roots = ("npaflow", "workflows_def", "activities", "worker")
    return sorted(
        p for root in roots for p in (ROOT / root).rglob("*.py") if p.relative_to(ROOT) not in CONTRACT_FILES
    )


def test_contract_literals_are_written_only_in_the_contract() -> None:
    stray = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in _source_files()
        for line, value in _code_strings(path)
        if value in EXACT or any(part in value for part in CONTAINED)
    ]
    assert stray == [], "use npaflow.runtime.contract instead:\n" + "\n".join(stray)


def test_every_activity_of_the_contract_is_implemented_under_its_name(tmp_path: Path) -> None:
    context = ActivityContext(home=tmp_path, backends={BackendName.LOCAL: LocalBackend(tmp_path, "w")})
    served = implementations(context)
    assert set(served) == {ref.name for ref in ACTIVITIES}
    for name, fn in served.items():
        assert fn.__temporal_activity_definition.name == name  # type: ignore[attr-defined]


def test_each_queue_serves_the_activities_the_contract_puts_there(tmp_path: Path) -> None:
    context = ActivityContext(home=tmp_path, backends={BackendName.LOCAL: LocalBackend(tmp_path, "w")})

    def names(queue: QueueKind) -> set[str]:
        return {fn.__temporal_activity_definition.name for fn in activities_for(context, queue)}  # type: ignore[attr-defined]

    assert names(QueueKind.POLL) == {"await_wave", "wait_trigger"}
    assert names(QueueKind.WORKER) == {ref.name for ref in WORKER_QUEUE_ACTIVITIES}
    assert names(QueueKind.MAIN) | names(QueueKind.POLL) == {ref.name for ref in ACTIVITIES}


def test_retry_meaning_of_error_types_is_declared_once() -> None:
    assert set(contract.NON_RETRYABLE_ERROR_TYPES) == {
        t.value for t in contract.ErrorType if not t.is_retryable()
    }
    assert "TransportError" not in contract.NON_RETRYABLE_ERROR_TYPES


def test_the_workflow_upserts_exactly_the_search_attributes_the_contract_registers() -> None:
    from temporalio.common import SearchAttributeIndexedValueType

    from workflows_def import SEARCH_ATTRIBUTE_KEYS

    upserted = {
        key.name: SearchAttributeIndexedValueType(key.indexed_value_type).name
        for key in SEARCH_ATTRIBUTE_KEYS
    }
    expected = {
        name: kind.upper().replace("LIST", "_LIST")  # KeywordList -> KEYWORD_LIST
        for name, kind in SEARCH_ATTRIBUTE_TYPES.items()
    }
    assert upserted == expected


def test_a_run_memo_reads_what_holds_its_type_and_ignores_the_rest() -> None:
    from npaflow.runtime.contract import RunMemo

    memo = RunMemo.read({"phase": "running", "vars": "not a mapping", "gpu_hours": "x", "other": 1})
    assert (memo.phase, memo.vars, memo.gpu_hours) == ("running", {}, None)


def test_the_memo_a_run_keeps_names_hours_only_once_both_are_known() -> None:
    from npaflow.runtime.contract import RunMemo

    assert RunMemo(phase="running", ledger_uri="u").kept() == {"phase": "running", "ledger_uri": "u"}
    ended = RunMemo(phase="succeeded", ledger_uri="u", gpu_hours=1.0, node_hours=2.0).kept()
    assert ended == {"phase": "succeeded", "ledger_uri": "u", "gpu_hours": 1.0, "node_hours": 2.0}
