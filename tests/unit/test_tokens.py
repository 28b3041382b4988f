"""Token semantics of reference §2."""

from __future__ import annotations

import pytest

from npaflow.catalog import load_builtin_catalog
from npaflow.context import ConfigTokenError, build_run_context
from npaflow.errors import TokenError
from npaflow.tokens import TokenScope, UnknownStateTokenError, resolve_config_int, resolve_text
from tests.helpers import load_doc, minimal_doc

pytestmark = pytest.mark.unit


def scope(**config: object) -> TokenScope:
    return TokenScope(
        config=config,
        run={"id": "r1", "prefix": "wf/r1"},
        state_outputs={"gen": {"uri": "s3://b/gen/out.json", "output_1": "s3://b/gen/out.json"}},
        loop_iterations={"refine": 2},
    )


def test_config_run_state_and_loop_scopes_resolve() -> None:
    text = "{{config.a}} {{run.id}} {{run.prefix}} {{state.gen.uri}} {{loop.refine}}"
    assert resolve_text(text, scope(a="x")) == "x r1 wf/r1 s3://b/gen/out.json 2"


def test_whitespace_inside_braces_is_allowed() -> None:
    assert resolve_text("{{  config.a  }}", scope(a="x")) == "x"


def test_non_matching_text_passes_through_verbatim() -> None:
    text = "{{env.HOME}} {{foo}} {{config.a b}} ${HOME}"
    assert resolve_text(text, scope(a="x")) == text


def test_replacement_text_is_not_rescanned() -> None:
    assert resolve_text("{{config.a}}", scope(a="{{config.b}}", b="no")) == "{{config.b}}"


def test_values_render_with_python_str() -> None:
    assert (
        resolve_text("{{config.t}} {{config.n}} {{config.l}}", scope(t=True, n=3, l=[1, 2]))
        == "True 3 [1, 2]"
    )


def test_base64_transform_encodes_utf8() -> None:
    assert resolve_text("{{config.a|base64}}", scope(a="héllo")) == "aMOpbGxv"


def test_unknown_transform_is_an_error() -> None:
    with pytest.raises(TokenError, match="unsupported token transform: rot13"):
        resolve_text("{{config.a|rot13}}", scope(a="x"))


def test_dotted_config_keys_are_flat_lookups() -> None:
    assert resolve_text("{{config.a.b}}", scope(**{"a.b": "flat"})) == "flat"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{config.nope}}", "unknown config token: config.nope"),
        ("{{run.nope}}", "unknown run token: run.nope"),
        ("{{loop.nope}}", "unknown loop token: loop.nope"),
    ],
)
def test_missing_keys_raise_token_errors(text: str, message: str) -> None:
    with pytest.raises(TokenError, match=message):
        resolve_text(text, scope())


def test_missing_state_output_raises_the_state_specific_error() -> None:
    with pytest.raises(UnknownStateTokenError, match=r"unknown state token: state\.other\.uri"):
        resolve_text("{{state.other.uri}}", scope())


def test_config_chains_resolve_within_four_passes() -> None:
    doc = minimal_doc()
    doc["config"] = {"a": "{{config.b}}/a", "b": "{{config.c}}/b", "c": "{{run.id}}"}
    context = build_run_context(load_doc(doc), load_builtin_catalog(), "r9")
    assert context.config["a"] == "r9/b/a"


def test_config_prefix_replaces_the_run_prefix() -> None:
    doc = minimal_doc()
    doc["config"] = {"prefix": "runs/{{run.id}}"}
    context = build_run_context(load_doc(doc), load_builtin_catalog(), "r9")
    assert context.run["prefix"] == "runs/r9"


def test_run_prefix_defaults_to_name_and_run_id() -> None:
    context = build_run_context(load_doc(minimal_doc()), load_builtin_catalog(), "r9")
    assert context.run == {"id": "r9", "prefix": "t/r9"}


def test_top_level_run_defaults_are_tokens_but_id_is_forced() -> None:
    doc = minimal_doc()
    doc["run"] = {"id": "fake", "owner": "ml"}
    context = build_run_context(load_doc(doc), load_builtin_catalog(), "r9")
    assert context.run["id"] == "r9"
    assert context.run["owner"] == "ml"


def test_unknown_config_reference_inside_config_names_the_key() -> None:
    spec = load_doc(minimal_doc()).with_config({"x": "{{config.missing}}"})
    with pytest.raises(ConfigTokenError) as caught:
        build_run_context(spec, load_builtin_catalog(), "r")
    assert caught.value.key == "x"


@pytest.mark.parametrize(
    ("raw", "expected"), [(3, 3), ("4", 4), ("config.n", 5), ("{{config.n}}", 5), ("{{config.s}}", 6)]
)
def test_config_int_accepts_ints_digit_strings_and_exact_references(raw: object, expected: int) -> None:
    assert resolve_config_int(raw, {"n": 5, "s": "6"}) == expected


@pytest.mark.parametrize("raw", ["{{ config.n }}", "2.0", "-1", "{{config.n}}x"])
def test_config_int_rejects_everything_else(raw: str) -> None:
    with pytest.raises(TokenError):
        resolve_config_int(raw, {"n": 5})


def test_an_unknown_token_close_to_a_known_one_names_it() -> None:
    scope = TokenScope(config={"bucket": "b"}, run={"id": "r1", "prefix": "p"})
    with pytest.raises(TokenError, match=r"unknown run token: run.idd \(did you mean run.id\?\)"):
        resolve_text("{{run.idd}}", scope)
    with pytest.raises(TokenError, match=r"config.buckt \(did you mean config.bucket\?\)"):
        resolve_text("{{config.buckt}}", scope)
