"""Typos never change what runs silently: ignored keys warn, unknown --var keys are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from npaflow.cli import run
from npaflow.document.yaml_source import parse_yaml
from npaflow.spec.typos import terminal_warnings
from tests.helpers import EXAMPLES, SPECS, minimal_doc

pytestmark = pytest.mark.unit

TYPOS = str(SPECS / "typos" / "misspelt-top-level.yaml")
GATE = str(EXAMPLES / "gate-loop.yaml")


@pytest.mark.parametrize("command", ["validate-spec", "plan-spec"])
def test_a_misspelt_top_level_key_warns_with_the_key_it_probably_meant(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([command, TYPOS]) == 0
    err = capsys.readouterr().err
    assert (
        f"{TYPOS}:6:1: intial: unknown top-level key 'intial' is ignored (hint: did you mean 'initial'?"
        in err
    )
    assert "did you mean 'metadata'?" in err
    assert "x-team" not in err  # a deliberate extension


def test_a_var_key_nothing_reads_is_refused_with_the_key_it_probably_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["validate-spec", GATE, "--var", "treshold=80"]) == 2
    err = capsys.readouterr().err
    assert "--var treshold: the spec's config has no key 'treshold'" in err
    assert "did you mean 'promote_threshold'?" in err and "--allow-new-vars" in err
    assert "Traceback" not in err


def test_allow_new_vars_accepts_a_deliberate_new_config_key() -> None:
    assert run(["validate-spec", GATE, "--var", "team=vision", "--allow-new-vars"]) == 0


@pytest.mark.parametrize("key", ["promote_threshold", "decision_uri", "prefix"])
def test_a_var_for_a_declared_or_engine_key_is_accepted(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["validate-spec", GATE, "--var", f"{key}=70"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("key", ["next", "transitions"])
def test_a_terminal_states_next_or_transitions_is_warned_about_as_ignored(key: str) -> None:
    value: object = "work" if key == "next" else [{"when": "x", "next": "work"}]
    text = yaml.safe_dump(minimal_doc(done={"terminal": True, "run": {"shell": "true"}, key: value}))
    (warning,) = terminal_warnings(parse_yaml(text, "t.yaml"))
    assert warning.render().endswith(
        f"state done: {key}: is ignored: the state is terminal "
        f"(hint: drop 'terminal: true' to go on, or drop '{key}')"
    )


@pytest.mark.parametrize(
    ("token", "hint"),
    [
        ("{{conifg.threshold}}", "did you mean 'config'?"),
        ("{{params.threshold}}", "a state's params overlay its config: write '{{config.threshold}}'"),
        ("{{ env.HOME }}", "known scopes: config, loop, run, state"),
    ],
)
def test_a_token_of_a_scope_npaflow_does_not_resolve_is_warned_about_as_left_as_written(
    token: str, hint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = minimal_doc(done={"terminal": True, "run": {"shell": f"echo {token} {{{{config.threshold}}}}"}})
    doc["config"] = {"threshold": 3}
    spec = tmp_path / "tokens.yaml"
    spec.write_text(yaml.safe_dump(doc))
    assert run(["validate-spec", str(spec)]) == 0
    (warning,) = [line for line in capsys.readouterr().err.splitlines() if "left as written" in line]
    scope_key = token.strip("{} ")
    assert f"'{{{{{scope_key}}}}}' is left as written: npaflow resolves only config, run," in warning
    assert warning.endswith(f"(hint: {hint})")
