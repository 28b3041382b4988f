"""What the CLI does with an error no command mapped itself: a path's is the user's, anything else a bug's."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.service import RPCError, RPCStatusCode

from npaflow.cli import SubParsers, run
from npaflow.cli.duplicate_runs import duplicate_of
from npaflow.cli.submit_handler import flag_problem
from npaflow.errors import UsageError
from npaflow.quota import QuotaClaim
from npaflow.runtime.request import RunRequest
from npaflow.temporal.client import describe_or_fail

pytestmark = pytest.mark.unit


def _failing_on(error: Exception) -> Callable[[SubParsers], None]:
    def register(commands: SubParsers) -> None:
        def handler(_: argparse.Namespace) -> int:
            raise error

        commands.add_parser("touchy").set_defaults(handler=handler)

    return register


def test_a_path_any_command_cannot_use_is_one_line_naming_it_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    denied = PermissionError(13, "Permission denied", "/srv/runs/report.html")
    assert run(["touchy"], extra=[_failing_on(denied)]) == 2
    assert capsys.readouterr().err == "npaflow: error: /srv/runs/report.html: Permission denied\n"


def test_an_answer_of_a_newer_worker_this_cli_cannot_read_is_one_line_naming_the_skew(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from npaflow.runtime.summary import WaveView

    with pytest.raises(ValidationError) as newer:
        WaveView.model_validate_json(
            '{"key": "001|serial|:a:-", "attempt": 1, "states": ["a"], "job_id": "", "job_name": "",'
            ' "status": "running", "grown_since": []}'
        )
    assert run(["touchy"], extra=[_failing_on(newer.value)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("npaflow: error: an answer could not be read as WaveView: grown_since: Extra")
    assert "use theirs (npaflow status RUN names the run's worker version)" in err
    assert err.count("\n") == 1


def test_an_os_error_with_no_path_is_not_blamed_on_the_user() -> None:
    with pytest.raises(ConnectionResetError):
        run(["touchy"], extra=[_failing_on(ConnectionResetError(104, "Connection reset by peer"))])


def test_a_stray_argument_is_reported_by_the_subcommand_it_was_given_to(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run(["quota", "status", "--bogus"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "npaflow quota status: error: unrecognized arguments: --bogus "
        "(hint: run 'npaflow quota status --help')"
    )


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What the command said on stderr (one line), having exited 2 before any server was asked."""

    with pytest.raises(SystemExit) as exit_:
        run([*argv, "--address", "127.0.0.1:1"])
    assert exit_.value.code == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1, said
    return said


@pytest.mark.parametrize(
    "argv", [["status", ""], ["logs", " "], ["schedule", "describe", ""], ["list", "--spec", ""]]
)
def test_an_empty_run_id_or_schedule_name_is_a_usage_error_before_any_server_is_asked(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert ": must not be empty (hint: run 'npaflow " in usage_error(argv, capsys)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["logs", "r1", "--tail", "-5"], "argument --tail: '-5' is not a whole number 0 or more"),
        (["replay-check", "--limit", "-1"], "argument --limit: '-1' is not a whole number 0 or more"),
        (["deployment", "promote", "b2", "--ramp", "nan"], "argument --ramp: 'nan' is not a percentage"),
        (["deployment", "promote", "b2", "--ramp", "150"], "argument --ramp: '150' is not a percentage"),
        (["plan-spec", "s.yaml", "--max-concurrency", "-1"], "'-1' is not a whole number 0 or more"),
    ],
)
def test_a_count_or_percentage_out_of_its_range_is_a_usage_error(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert says in usage_error(argv, capsys)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["submit", "s.yaml", "--priority", "0"], "argument --priority: invalid choice: 0 (choose from 1, 2"),
        (["quota", "set", "--pool", "p", "--gpus", "1"], "unrecognized arguments: --pool"),
        (["status"], "the following arguments are required: RUN_ID"),
    ],
)
def test_an_argument_argparse_refuses_is_one_line_with_the_fix_not_the_usage_block(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    said = usage_error(argv, capsys)
    assert says in said and "(hint: run 'npaflow " in said and "usage:" not in said


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["stauts", "r1"], "(hint: did you mean 'status'?)"),
        (["schedule", "craete"], "(hint: did you mean 'create'?)"),
        (["submit", "s.yaml", "--backend", "lcal"], "(hint: did you mean 'local'?)"),
        (["status", "r1", "--jsn"], "(hint: did you mean '--json'?)"),
        (["bogus"], "(hint: run 'npaflow --help')"),
    ],
)
def test_a_misspelt_command_choice_or_flag_is_answered_with_the_one_it_likely_meant(
    argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(argv, capsys).endswith(f"{hint}\n")


@pytest.mark.parametrize(
    ("accelerator", "says"),
    [
        ("H100:8", "carries a count: name the type only ('H100'); --gpus is the pool's size"),
        ("H 100", "is not an accelerator type name"),
    ],
)
def test_a_pool_accelerator_that_names_no_type_is_refused_before_any_server_is_asked(
    accelerator: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["quota", "set", "p1", "--gpus", "8", "--accelerator", accelerator, "--address", "127.0.0.1:1"]
    assert run(argv) == 2
    assert f"--accelerator: accelerator {accelerator!r} {says}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["dev", "--port", "99999"], "--port 99999: give a port between 1 and 65535"),
        (["dev", "--ui-port", "0"], "--ui-port 0: give a port between 1 and 65535"),
        (["ui", "--port", "-1"], "--port -1: give a port between 1 and 65535"),
    ],
)
def test_a_port_out_of_range_is_one_line_and_exit_2_before_anything_listens(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:

    assert run(argv) == 2
    assert f"npaflow: error: {says}\n" == capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["cache", "list", "--root", "s3://"],
        ["cache", "list", "--root", "relative/dir"],
        ["cache", "purge", "--root", "s3://Not_A_Bucket/x"],
        ["submit", "spec.yaml", "--ledger-root", "garbage://x"],
    ],
)
def test_a_root_that_is_neither_a_bucket_nor_an_absolute_path_is_a_usage_error_quoting_it(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert f"{argv[-1]!r} is not s3://BUCKET/PREFIX or an absolute path" in usage_error(argv, capsys)


@pytest.mark.parametrize("root", ["s3://bucket", "s3://my-bucket/team/runs", "/srv/runs", "file:///srv/runs"])
def test_a_bucket_or_an_absolute_path_is_a_root(root: str) -> None:
    from npaflow.ledger_paths import root_problem

    assert root_problem(root) == ""


def _options(parser: argparse.ArgumentParser, path: str = "npaflow") -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _options(sub, f"{path} {name}")
        else:
            found.append((path, action))
    return found


def test_no_option_left_out_is_refused_by_its_own_type() -> None:
    # argparse passes a string default through the option's type: a "must not be empty"
    # type with default "" would refuse every command that leaves the option out.
    from npaflow.cli import build_parser

    refused = []
    for path, action in _options(build_parser(every=True)):
        if action.type is None or not isinstance(action.default, str):
            continue
        try:
            action.type(action.default)  # type: ignore[operator]
        except argparse.ArgumentTypeError:
            refused.append(f"{path} {'/'.join(action.option_strings)} {action.default!r}")
    assert refused == []


@pytest.mark.parametrize(
    ("claim", "flag"),
    [({"pool": "x:y:z"}, "--quota-pool: "), ({"pool": "gpus", "team": "a b"}, "--team: ")],
    ids=["pool", "team"],
)
def test_a_malformed_quota_claim_is_named_by_the_flag_that_set_it(claim: dict[str, str], flag: str) -> None:
    with pytest.raises(ValidationError) as refused:
        QuotaClaim.model_validate(claim)
    assert flag_problem(refused.value).startswith(flag)


def test_a_jitter_not_shorter_than_the_interval_is_refused_before_any_server_is_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:

    spec = str(Path(__file__).parents[2] / "specs" / "examples" / "gate-loop.yaml")
    argv = [
        "schedule",
        "create",
        "nightly",
        spec,
        "--every",
        "1h",
        "--jitter",
        "2h",
        "--address",
        "127.0.0.1:1",
    ]
    assert run(argv) == 2
    assert "--jitter 2h is not shorter than --every 1h" in capsys.readouterr().err


class _Refusing:
    """A workflow handle whose describe the server refuses with `status`."""

    id = "r1"

    def __init__(self, status: RPCStatusCode) -> None:
        self.status = status

    async def describe(self) -> None:
        raise RPCError("request denied", self.status, b"")


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (RPCStatusCode.NOT_FOUND, "no run with id 'r1'"),
        (RPCStatusCode.PERMISSION_DENIED, "the Temporal server refused the credentials"),
        (RPCStatusCode.UNAVAILABLE, "cannot reach the Temporal server"),
        (RPCStatusCode.INTERNAL, "the Temporal server answered INTERNAL"),
    ],
)
def test_only_not_found_makes_a_run_missing(status: RPCStatusCode, says: str) -> None:
    with pytest.raises(UsageError) as refused:
        asyncio.run(describe_or_fail(_Refusing(status)))  # type: ignore[arg-type]
    assert says in str(refused.value)


def test_submit_starts_afresh_only_when_the_server_says_the_run_id_is_free() -> None:
    request = RunRequest(spec="x")
    assert asyncio.run(duplicate_of(_Refusing(RPCStatusCode.NOT_FOUND), request)) is None  # type: ignore[arg-type]
    for status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.INTERNAL):
        with pytest.raises(UsageError, match="Temporal server"):
            asyncio.run(duplicate_of(_Refusing(status), request))  # type: ignore[arg-type]


def test_a_cancel_reason_past_a_thousand_characters_is_refused_before_any_server_is_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["cancel", "run-1", "--reason", "x" * 1001, "--address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "npaflow: error: --reason: at most 1,000 characters (this one has 1,001); "
        "say why in a sentence and link to the rest\n"
    )


def test_a_team_given_twice_to_quota_set_is_refused_rather_than_the_last_weight_winning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    teams = ["--team", "a=1", "--team", "a=2"]
    argv = ["quota", "set", "gpus", "--gpus", "8", *teams, "--address", "127.0.0.1:1"]
    assert run(argv) == 2
    assert capsys.readouterr().err == (
        "npaflow: error: --team a is given twice: give each team once, with its weight\n"
    )


def test_an_option_whose_value_starts_with_a_dash_is_told_how_to_give_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        run(["schedule", "create", "nightly", "spec.yaml", "--every", "-5m"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.endswith(
        "error: argument --every: expected one argument "
        "(hint: give --every a value; one that starts with '-' is written --every=VALUE)\n"
    )


@pytest.mark.parametrize(
    ("prefix", "refused"), [("team/nightly", True), ("team/{{run.id}}", False), ("", False)]
)
def test_a_schedule_whose_runs_would_share_one_ledger_prefix_is_refused_before_any_server_is_asked(
    prefix: str, refused: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "nightly.yaml"
    config = f"config: {{prefix: '{prefix}'}}\n" if prefix else ""
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: nightly}\n"
        f"{config}states:\n  only: {{terminal: true, run: {{shell: 'true'}}}}\n"
    )
    argv = ["schedule", "create", "nightly", str(spec), "--every", "1d", "--address", "127.0.0.1:1"]
    assert run(argv) == 2
    said = capsys.readouterr().err
    assert ("is the same for every run of the schedule" in said) is refused
    assert refused or "cannot reach the Temporal server" in said
    assert not refused or "write 'prefix: team/nightly/{{run.id}}'" in said


@pytest.mark.parametrize(
    "address", ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "ftp://h/"]
)
def test_a_temporal_ui_link_that_is_not_http_is_refused_before_the_page_serves(
    address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["ui", "--temporal-ui", address, "--port", "18234", "--address", "127.0.0.1:1"]) == 2
    said = capsys.readouterr().err
    assert (
        said.count("\n") == 1 and "--temporal-ui" in said and "give the Temporal UI's http(s) address" in said
    )


@pytest.mark.parametrize("run_id", ["", "../x", "a b"])
def test_submit_refuses_a_run_id_it_cannot_use_before_it_connects_even_an_empty_one(
    run_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(Path(__file__).resolve().parents[2] / "specs" / "examples" / "gate-loop.yaml")
    unreachable = "127.0.0.1:1"  # nothing listens: a refusal must come before any connection
    assert run(["submit", spec, f"--run-id={run_id}", "--address", unreachable]) == 2
    assert capsys.readouterr().err == (
        f"npaflow: error: --run-id: run id {run_id!r}: 1-96 letters, digits, '.', '_' or '-', starting "
        "with a letter or digit (it becomes the workflow id, job names and ledger paths)\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["submit", "SPEC", "--quota-pool="],
        ["submit", "SPEC", "--team="],
        ["submit", "SPEC", "--image="],
        ["submit", "SPEC", "--task-queue="],
        ["submit", "SPEC", "--namespace="],
        ["submit", "SPEC", "--infra="],
        ["submit", "SPEC", "--cache-scope="],
        ["plan-spec", "SPEC", "--quota-pool="],
        ["status", "r1", "--address="],
        ["render", "SPEC", "--out="],
        ["report", "r1", "--out="],
        ["replay-check", "--histories="],
    ],
)
def test_an_empty_name_flag_is_refused_not_read_as_its_default(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(Path(__file__).resolve().parents[2] / "specs" / "examples" / "gate-loop.yaml")
    with pytest.raises(SystemExit) as exited:
        run([spec if arg == "SPEC" else arg for arg in argv])
    flag = argv[-1].rstrip("=")
    assert exited.value.code == 2
    assert f"error: argument {flag}: must not be empty" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["validate-spec", ""], ["plan-spec", ""], ["init", ""]])
def test_an_empty_path_argument_is_refused_not_read_as_here(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(argv)
    assert exited.value.code == 2
    assert "must not be empty" in capsys.readouterr().err


def test_an_error_quoting_what_the_user_typed_shows_its_control_characters_as_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def register(commands: SubParsers) -> None:
        def handler(_: argparse.Namespace) -> int:
            raise UsageError("no run with id 'x\x1b]0;PWNED\x07'")

        commands.add_parser("touchy").set_defaults(handler=handler)

    assert run(["touchy"], extra=[register]) == 2
    assert capsys.readouterr().err == "npaflow: error: no run with id 'x\\x1b]0;PWNED\\x07'\n"
    with pytest.raises(SystemExit):
        run(["status", "r1", "\x1b[2J"])
    assert "\x1b" not in capsys.readouterr().err


def test_resume_refuses_wait_with_json_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["resume", "r1", "--wait", "--json", "--address", "127.0.0.1:1"]) == 2
    assert "--wait with --json would print two documents" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("queue", "said"),
    [("npaflow ", "a space at either end names another queue"), ("q\x1b]0;T\x07", "a control character")],
)
def test_a_task_queue_typo_is_refused_before_connecting_naming_the_flag(
    queue: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["status", "r1", "--task-queue", queue, "--address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("npaflow: error: --task-queue ") and said in err and "\x1b" not in err


def test_a_task_queue_typo_in_the_environment_is_named_by_its_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPAFLOW_TASK_QUEUE", " npaflow")
    assert run(["list", "--address", "127.0.0.1:1"]) == 2
    assert "NPAFLOW_TASK_QUEUE ' npaflow': a space at either end" in capsys.readouterr().err
