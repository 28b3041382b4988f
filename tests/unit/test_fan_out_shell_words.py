"""An item value in a member's `shell:` command reaches bash as data, never as code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pydantic import JsonValue

from npaflow.document.models import RunBlock, State
from npaflow.fanout import ItemsError, member_state
from npaflow.fanout.shell_words import MARK, Quoting, mark_quotings

pytestmark = pytest.mark.unit

HOSTILE = [
    "a; touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    'it\'s "quoted" & $HOME \\ back',
    "two\nlines | touch pwned",
    "*",
    "",
    "-n",
]
#: Commands that print the item's value between brackets, one per place a token can stand.
PRINTERS = [
    "printf '[%s]' {{it.v}}",
    "printf '[%s]' \"{{it.v}}\"",
    "printf '[%s]' '{{it.v}}'",
    "printf '[%s]' prefix-{{it.v}}-suffix",
    'printf \'[%s]\' "$(printf %s "{{it.v}}")"',
    "x={{it.v}}; printf '[%s]' \"$x\"",
]


def shell_of(command: str, item: JsonValue, params: dict[str, str] | None = None) -> str:
    template = State(name="m", run=RunBlock(shell=command), params=params or {})
    member = member_state(template, "it", item, 3)
    assert member.run is not None
    return member.run.shell


def bash(command: str, cwd: str) -> str:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("printer", PRINTERS)
@pytest.mark.parametrize("value", HOSTILE)
def test_an_item_value_reaches_bash_exactly_wherever_its_token_stands(
    printer: str, value: str, tmp_path: Path
) -> None:
    out = bash(shell_of(printer, {"v": value}), str(tmp_path))
    expected = value if "prefix" not in printer else f"prefix-{value}-suffix"
    assert out == f"[{expected}]"
    assert not (tmp_path / "pwned").exists()


def test_a_param_carrying_an_item_value_into_the_shell_is_quoted_where_it_stands(tmp_path: Path) -> None:
    command = shell_of("printf '[%s]' {{config.name}}", {"v": "a; touch pwned"}, {"name": "{{it.v}}.txt"})
    assert bash(command, str(tmp_path)) == "[a; touch pwned.txt]"
    assert not (tmp_path / "pwned").exists()


def test_ids_paths_and_numbers_render_exactly_as_written() -> None:
    command = "python3 t.py {{it.id}} --rows {{config.rows}} `date` ${HOME}/{{it.id}}"
    item: JsonValue = {"id": "shard-007/part_1.json", "rows": 1000}
    assert shell_of(command, item, {"rows": "{{it.rows}}"}) == (
        "python3 t.py shard-007/part_1.json --rows {{config.rows}} `date` ${HOME}/shard-007/part_1.json"
    )


#: Where no quoting holds, and commands that parse a value a second time: each with what the refusal says.
UNQUOTABLE = [
    ("echo `cat {{it.v}}`", "bash would read as code"),
    ("echo ${X:-{{it.v}}}", "bash would read as code"),
    ("echo $(( {{it.v}} + 1 ))", "bash would read as code"),
    ("cat <<EOF\n{{it.v}}\nEOF", "bash would read as code"),
    ("echo ${{it.v}}", "bash would read as code"),
    ("(( x = {{it.v}} ))", "bash would read as code"),
    ("for (( i = {{it.v}}; i < 3; i++ )); do :; done", "bash would read as code"),
    ('sh -c "echo {{it.v}}"', "hands text to another parser"),
    ("eval echo {{it.v}}", "hands text to another parser"),
    ("timeout 5 bash -c 'echo {{it.v}}'", "hands text to another parser"),
    ("ssh gpu-1 echo {{it.v}}", "hands text to another parser"),
]


@pytest.mark.parametrize(("command", "says"), UNQUOTABLE)
def test_where_no_quoting_holds_only_inert_values_pass_and_others_fail_before_launch(
    command: str, says: str
) -> None:
    with pytest.raises(ItemsError, match=rf"item 3: \{{\{{it\.v\}}\}} holds 'a; b', .*{says}.*run\.argv"):
        shell_of(command, {"v": "a; b"})
    assert shell_of(command, {"v": "shard-1/part.json"}) == command.replace("{{it.v}}", "shard-1/part.json")


def test_a_param_that_names_another_param_takes_only_inert_item_values() -> None:
    params = {"base": "/data", "path": "{{config.base}}/{{it.v}}"}
    assert shell_of("ls {{config.path}}", {"v": "ok-1"}, params) == "ls {{config.path}}"
    with pytest.raises(ItemsError, match=r"params\.path carries into .* params\.path names another param"):
        shell_of("ls {{config.path}}", {"v": "a b"}, params)


def test_quotes_that_never_close_leave_every_token_opaque() -> None:
    assert mark_quotings(f'echo "{MARK} {MARK}') == [Quoting.OPAQUE, Quoting.OPAQUE]


def test_a_comment_hides_a_token_only_to_its_line_end() -> None:
    assert mark_quotings(f"echo a # {MARK}\necho {MARK}") == [Quoting.OPAQUE, Quoting.BARE]


def test_a_value_split_into_words_on_purpose_as_the_doc_shows_is_still_never_run(tmp_path: Path) -> None:
    command = shell_of("""printf '[%s]' $(printf '%s' "{{it.args}}")""", {"args": "--lr 0.1; touch pwned"})
    assert bash(command, str(tmp_path)) == "[--lr][0.1;][touch][pwned]"
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ("bash", "-c", "printf '[%s]' {{it.v}}"),
        ("/bin/sh", "-ec", "printf '[%s]' \"{{it.v}}\""),
        ("bash", "-o", "pipefail", "-c", "printf '[%s]' '{{it.v}}'"),
    ],
)
def test_a_script_argv_hands_to_a_shell_is_placed_like_run_shell(
    argv: tuple[str, ...], tmp_path: Path
) -> None:
    member = member_state(State(name="m", run=RunBlock(argv=argv)), "it", {"v": "a; touch pwned"}, 0)
    assert member.run is not None
    out = subprocess.run(member.run.argv, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out == "[a; touch pwned]"
    assert not (tmp_path / "pwned").exists()


def test_other_argv_elements_are_each_one_argument_as_written() -> None:
    member = member_state(
        State(name="m", run=RunBlock(argv=("python3", "-c", "{{it.v}}"))), "it", {"v": "a b"}, 0
    )
    assert member.run is not None and member.run.argv == ("python3", "-c", "a b")


@pytest.mark.parametrize("command", ["[[ {{it.v}} -eq 1 ]]", "declare -i n={{it.v}}", "let n={{it.v}}"])
def test_a_command_that_evaluates_arithmetic_takes_no_value_holding_a_substitution(command: str) -> None:
    with pytest.raises(ItemsError, match=r"evaluates arithmetic"):
        shell_of(command, {"v": "a[$(touch pwned)]"})
    assert shell_of(command, {"v": "a b"}) == command.replace("{{it.v}}", "'a b'")


def test_eval_ssh_or_su_as_mere_words_are_not_another_parser(tmp_path: Path) -> None:
    command = shell_of("printf '[%s]' eval.py --eval x/.ssh/k {{it.v}}", {"v": "a b"})
    assert bash(command, str(tmp_path)) == "[eval.py][--eval][x/.ssh/k][a b]"
