"""`npaflow validate-spec` and `plan-spec`: outputs and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from npaflow.cli import run
from tests.helpers import EXAMPLES, SPECS

pytestmark = pytest.mark.unit

GATE = str(EXAMPLES / "gate-loop.yaml")


def test_validate_spec_exits_zero_for_a_valid_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["validate-spec", GATE]) == 0
    assert capsys.readouterr().out == f"{GATE}: valid (gate-loop, 7 states)\n"


def test_validate_spec_counts_a_single_state_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "one.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: one}\n"
        "states:\n  a:\n    run: {shell: x}\n    terminal: true\n"
    )
    assert run(["validate-spec", str(spec)]) == 0
    assert capsys.readouterr().out == f"{spec}: valid (one, 1 state)\n"


def test_validate_spec_exits_two_with_located_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nstates:\n  a:\n    run: {shell: x}\n    nxt: b\n"
    )
    assert run(["validate-spec", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:6:5: state a: nxt: unknown field 'nxt' (hint: did you mean 'next'?)" in err


def test_validate_spec_json_lists_errors_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nstates:\n  a: {run: {shell: x}}\n")
    assert run(["validate-spec", str(spec), "--json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["valid"] is False
    assert set(payload["errors"][0]) == {"file", "line", "column", "state", "field", "message", "hint"}


def test_var_overrides_are_merged_and_validated(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["validate-spec", GATE, "--var", "max_iterations=0"]) == 2
    assert "loop.max must be >= 1, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["plan-spec", "render"])
def test_a_negative_concurrency_cap_of_a_preview_is_a_usage_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        run([command, GATE, "--max-concurrency", "-1"])
    assert refused.value.code == 2
    assert "--max-concurrency: '-1' is not a whole number 0 or more" in capsys.readouterr().err


def test_malformed_var_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["validate-spec", GATE, "--var", "novalue"]) == 2
    assert "--var expects KEY=VALUE" in capsys.readouterr().err


def test_plan_spec_json_prints_the_early_exit_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan-spec", GATE, "--assume-decision", "promote_checkpoint", "--json"]) == 0
    steps = [s["state"] for s in json.loads(capsys.readouterr().out)["steps"]]
    assert steps == ["caption-batch", "score-batch", "quality-gate", "route", "publish"]


def test_plan_spec_json_prints_the_full_budget_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan-spec", GATE, "--assume-decision", "loop_back", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["steps"]) == 11


def test_plan_spec_waves_text_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan-spec", str(SPECS / "fanout-demo.yaml"), "--waves"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("00. [parallel] shards: shard-a, shard-b, shard-c maxConcurrency=2 batches=2")
    assert lines[1].startswith("01. [serial] join: join")


def test_plan_spec_waves_shows_the_concurrency_that_applies_under_a_cli_cap(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["plan-spec", str(SPECS / "fanout-demo.yaml"), "--waves", "--max-concurrency", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "maxConcurrency=1 (spec 2, --max-concurrency) batches=3" in first


def test_plan_spec_run_id_reaches_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan-spec", GATE, "--run-id", "r-42", "--json"]) == 0
    assert "/r-42/" in json.loads(capsys.readouterr().out)["steps"][0]["shell"]


def test_catalog_env_and_flag_add_catalogs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: s}\n"
        "states:\n  a: {toolRef: test.sharded, terminal: true}\n"
    )
    assert run(["validate-spec", str(spec)]) == 2
    monkeypatch.setenv("NPAFLOW_CATALOG", str(SPECS / "test-catalog.yaml"))
    assert run(["validate-spec", str(spec)]) == 0


def test_user_errors_exit_two_without_a_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "npaflow", "plan-spec", str(tmp_path / "no.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "workflow spec not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_flag_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "npaflow", "plan-spec", GATE, "--bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "unrecognized arguments: --bogus" in result.stderr


UNSOURCED = str(SPECS / "runtime/unsourced-router.yaml")


def test_validate_spec_accepts_a_router_with_no_decision_source_but_warns_submit_refuses_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["validate-spec", UNSOURCED]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "state route" in err and "`npaflow submit` refuses this spec" in err


def test_submit_refuses_a_router_with_no_decision_source_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["submit", UNSOURCED, "--address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "state route" in err and "no decision source" in err and "--assume-decision" in err


@pytest.mark.parametrize(
    "argv",
    [["plan-spec", GATE], ["submit", GATE, "--address", "127.0.0.1:1"]],
    ids=["plan-spec", "submit"],
)
def test_an_unknown_assume_decision_is_exit_2_with_a_did_you_mean(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([*argv, "--assume-decision", "promot"]) == 2
    assert "did you mean 'promote'" in capsys.readouterr().err


def test_render_to_an_out_that_cannot_be_a_directory_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "taken").write_text("a file")
    assert run(["render", GATE, "--out", str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"--out {tmp_path / 'taken'}: cannot write" in err and "File exists" in err


def test_render_writes_one_yaml_per_wave_and_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["render", GATE, "--out", str(tmp_path / "out")]) == 0
    listed = capsys.readouterr().out.split()
    assert listed and all(Path(p).parent == tmp_path / "out" and Path(p).read_text() for p in listed)


def test_plan_spec_waves_marks_the_steps_the_stage_cache_may_serve(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "cached.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: cmark}\ninitial: a\nstates:\n"
        "  a:\n    run: {shell: 'echo a > /tmp/x/{{run.id}}/a.txt'}\n"
        "    outputs: [{uri: 'file:///tmp/x/{{run.id}}/a.txt'}]\n"
        "    cache: {version: '2', max_age: 7d}\n    next: b\n"
        "  b:\n    run: {shell: 'true'}\n    terminal: true\n"
    )
    assert run(["plan-spec", str(spec), "--waves"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("00. [serial] a: a [cached v2, max_age 7d] -> ")
    assert lines[1].startswith("01. [serial] b: b -> ")


def test_plan_spec_waves_names_the_quota_pool_each_gpu_wave_would_wait_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = str(SPECS / "runtime" / "gpu-sweep.yaml")
    assert run(["plan-spec", spec, "--waves", "--quota-pool", "gpu16"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("gpus=4 quota=gpu16") and lines[1].endswith("gpus=2 quota=gpu16")
