"""Every validation rule of reference §3, one test each, named after the rule."""

from __future__ import annotations

import pytest

from tests.helpers import issues_of, messages_of, minimal_doc

pytestmark = pytest.mark.unit


def group_doc(**group: object) -> dict:
    body = {"parallel": ["a", "b"], "next": "done", **group}
    return minimal_doc(grp=body, a={"run": {"shell": "echo a"}}, b={"run": {"shell": "echo b"}})


def test_rule_1_loop_must_be_a_mapping() -> None:
    assert "loop must be a mapping" in messages_of(
        minimal_doc(work={"run": {"shell": "x"}, "loop": 3, "next": "done"})
    )


def test_rule_2_transition_needs_goto() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "transitions": [{"when": "loop_back"}]})
    assert "transition needs goto" in messages_of(doc)


def test_rule_3_run_must_be_a_mapping() -> None:
    assert "run must be a mapping" in messages_of(minimal_doc(work={"run": "echo", "next": "done"}))


def test_rule_4_trigger_must_be_a_mapping() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "trigger": "soon", "next": "done"})
    assert "trigger must be a mapping" in messages_of(doc)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("pollSeconds", "zero", "trigger.pollSeconds must be an integer"),
        ("pollSeconds", "³", "trigger.pollSeconds must be an integer, got '³'"),
        ("maxPolls", -1, "trigger.maxPolls must be >= 0, got -1"),
        ("minObjects", 0, "trigger.minObjects must be >= 1, got 0"),
    ],
)
def test_rule_5_trigger_numbers_are_integers_above_their_floor(
    field: str, value: object, expected: str
) -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "next": "done", "trigger": {"uri": "s3://b/in/", field: value}}
    )
    assert expected in messages_of(doc)


def test_rule_6_params_must_be_a_mapping() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "params": ["a"], "next": "done"})
    assert "params must be a mapping" in messages_of(doc)


def test_rule_7_params_values_must_be_scalars() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "params": {"k": {"nested": 1}}, "next": "done"})
    assert "params.k must be a string, number or bool" in messages_of(doc)


@pytest.mark.parametrize(
    ("field", "value", "hint"),
    [
        ("resources", {"accelerators": "H100:1"}, "name a profile, e.g. resources: gpu"),
        ("next", ["done"], "name the one state that follows"),
        ("toolRef", {"name": "x"}, "name one catalog tool"),
        ("description", ["a", "b"], "write it as one string"),
    ],
)
def test_a_string_field_given_a_mapping_or_list_says_how_to_write_it(
    field: str, value: object, hint: str
) -> None:
    (issue,) = [i for i in issues_of(minimal_doc(work={"run": {"shell": "x"}, "next": "done", field: value}))]
    assert issue.message == f"{field} must be a string, got {type(value).__name__}"
    assert issue.hint.startswith(hint)


@pytest.mark.parametrize(
    ("fields", "message", "hint"),
    [
        ({"terminal": "yes"}, "terminal must be true or false, got 'yes'", "write terminal: true, unquoted"),
        ({"outputs": {"a": 1}}, "outputs must be a list of {uri, schema} mappings", "write outputs: [{uri: "),
        ({"loop": {"max": 0}}, "loop.max must be >= 1, got 0", "a loop runs its body at least once"),
        (
            {"loop": {"max": "{{config.nope}}"}},
            "config has no attribute 'nope'",
            "use an integer, or a",
        ),
        (
            {"trigger": {"uri": "s3://b/in/", "minObjects": 0}},
            "trigger.minObjects must be >= 1, got 0",
            "write trigger.minObjects: 1 or more",
        ),
        (
            {"trigger": {"uri": "s3://b/in/", "pollSeconds": "{{config.nope}}"}},
            "config has no attribute 'nope'",
            "use an integer, or a '{{config.key}}' whose key is in config",
        ),
        ({"params": {"a": None}}, "params.a must be a string, number or bool", "give params.a a value"),
        (
            {"params": {"a": [1]}},
            "params.a must be a string, number or bool",
            "flatten it: one scalar per key",
        ),
    ],
    ids=[
        "bool",
        "outputs",
        "loop-max",
        "loop-token",
        "trigger-floor",
        "trigger-token",
        "param-null",
        "param-list",
    ],
)
def test_a_field_of_the_wrong_shape_or_range_names_the_fix(fields: dict, message: str, hint: str) -> None:
    state = {"run": {"shell": "x"}, "next": "done", **fields}
    (issue,) = [i for i in issues_of(minimal_doc(work=state)) if i.message.startswith(message)]
    assert issue.hint.startswith(hint)


def test_rule_8_parallel_must_be_a_list() -> None:
    assert "parallel must be a list of state names" in messages_of(group_doc(parallel="a"))


def test_rule_9_parallel_members_must_be_strings() -> None:
    assert "parallel member must be a state name" in messages_of(group_doc(parallel=[1, 2]))


def test_rule_10_api_version_must_be_supported() -> None:
    doc = minimal_doc()
    doc["apiVersion"] = "npa.workflow/v9"
    assert "unsupported apiVersion 'npa.workflow/v9'" in messages_of(doc)


def test_rule_10_beta_api_version_is_accepted() -> None:
    doc = minimal_doc()
    doc["apiVersion"] = "npa.workflow/v0.0.1-beta"
    assert issues_of(doc) == []


def test_rule_11_kind_must_be_workflow() -> None:
    doc = minimal_doc()
    doc["kind"] = "Pipeline"
    assert "expected 'Workflow', got 'Pipeline'" in messages_of(doc)


def test_rule_12_initial_state_must_exist() -> None:
    doc = minimal_doc()
    doc["initial"] = "nowhere"
    assert "initial state 'nowhere' is not defined" in messages_of(doc)


def test_rule_13_loop_until_must_be_a_known_predicate() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "loop": {"max": 2, "until": "done"}, "next": "done"})
    assert "unknown loop.until 'done'" in messages_of(doc)


def test_rule_13_transition_when_must_be_a_known_predicate() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "transitions": [{"when": "ok", "goto": "done"}]})
    assert "unknown transition.when 'ok'" in messages_of(doc)


def test_rule_13_transition_goto_must_exist() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "transitions": [{"goto": "nope"}]})
    assert "transition goto unknown state 'nope'" in messages_of(doc)


def test_rule_13_needs_must_name_states() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "needs": ["ghost"], "next": "done"})
    assert "unknown needs 'ghost'" in messages_of(doc)


def test_rule_13_sequence_members_must_exist() -> None:
    doc = minimal_doc(seq={"sequence": ["work", "ghost"]})
    assert "unknown sequence 'ghost'" in messages_of(doc)


def test_rule_13_trigger_uri_is_required() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "trigger": {"pollSeconds": 1}, "next": "done"})
    assert "trigger.uri is required" in messages_of(doc)


def test_rule_13_trigger_requires_work_on_the_same_state() -> None:
    doc = minimal_doc(gate={"trigger": {"uri": "s3://b/in/"}, "next": "done"})
    assert "trigger requires run or toolRef" in messages_of(doc)


def test_rule_13_unknown_tool_ref_lists_close_matches_only() -> None:
    doc = minimal_doc(work={"toolRef": "workbench.token_factory.captoin", "next": "done"})
    text = messages_of(doc)
    assert "unknown toolRef 'workbench.token_factory.captoin'" in text
    assert "workbench.token_factory.caption" in text
    assert "npaflow.gang_probe" not in text


def test_rule_13_a_state_must_do_something() -> None:
    doc = minimal_doc(idle={"description": "nothing"})
    assert "must set run, toolRef, sequence, parallel, transitions, next, or terminal" in messages_of(doc)


def test_rule_13_empty_run_block_is_rejected() -> None:
    doc = minimal_doc(work={"run": {"shell": "  "}, "next": "done"})
    assert "empty run block" in messages_of(doc)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (0, "loop.max must be >= 1, got 0"),
        ("config.missing", "config has no attribute 'missing'"),
        ("{{ config.n }}", "cannot resolve loop max"),
        ("²", "cannot resolve loop max from '²'"),
        (True, "not bool"),
    ],
)
def test_rule_13_loop_max_must_resolve_to_a_positive_integer(raw: object, expected: str) -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": raw}})
    doc["config"] = {"n": 2}
    assert expected in messages_of(doc)


@pytest.mark.parametrize("value", ["many", "³"])
def test_rule_13_loop_max_from_a_non_integer_config_value_is_rejected(value: str) -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": "{{config.n}}"}})
    doc["config"] = {"n": value}
    assert "config.n must be an integer loop bound" in messages_of(doc)


def test_rule_14_resource_profile_must_be_a_mapping() -> None:
    doc = minimal_doc()
    doc["resources"] = {"gpu": "H100:8"}
    assert "resource profile 'gpu' must be a mapping" in messages_of(doc)


def test_rule_14_accelerator_count_must_be_positive() -> None:
    doc = minimal_doc()
    doc["resources"] = {"gpu": {"accelerators": "H100:0"}}
    assert "accelerator count must be >= 1, got 0" in messages_of(doc)


def test_rule_14_tokenized_accelerators_must_resolve_to_type_and_count() -> None:
    doc = minimal_doc()
    doc["config"] = {"gpu": "H100"}
    doc["resources"] = {"gpu": {"accelerators": "{{config.gpu}}"}}
    assert "resolved accelerators must use '<type>:<positive-count>'" in messages_of(doc)


def test_rule_14_accelerator_mapping_counts_must_be_positive_integers() -> None:
    doc = minimal_doc()
    doc["resources"] = {"gpu": {"accelerators": {"H100": True}}}
    assert "must be a positive integer" in messages_of(doc)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, "num_nodes must be an integer, not a bool"),
        ("two", "num_nodes must be an integer, got 'two'"),
        ("²", "num_nodes must be an integer, got '²'"),
        (0, "num_nodes must be >= 1"),
        (33, "num_nodes must be <= 32, got 33"),
        ("{{config.nodes_missing}}", "unknown config token: config.nodes_missing"),
    ],
)
def test_rule_14_num_nodes_must_be_an_integer_in_range(value: object, expected: str) -> None:
    doc = minimal_doc()
    doc["resources"] = {"gang": {"num_nodes": value}}
    assert expected in messages_of(doc)


def test_rule_15_unknown_resource_profile_on_an_executable_state() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "resources": "gpu", "next": "done"})
    assert "unknown resource profile 'gpu'" in messages_of(doc)


def test_rule_15_default_profile_may_be_absent() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "resources": "default", "next": "done"})
    assert issues_of(doc) == []


def test_rule_15_multi_node_mode_must_be_known() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "multiNodeMode": "gang", "next": "done"})
    assert "multiNodeMode must be 'sharded', got 'gang'" in messages_of(doc)


def test_rule_15_more_than_one_node_requires_sharded() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "resources": "gang", "next": "done"})
    doc["resources"] = {"gang": {"num_nodes": 2}}
    assert "requests num_nodes=2, but this executable is not declared sharded" in messages_of(doc)


def test_rule_15_sharded_states_may_use_several_nodes() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "resources": "gang", "multiNodeMode": "sharded", "next": "done"}
    )
    doc["resources"] = {"gang": {"num_nodes": 2}}
    assert issues_of(doc) == []


def test_rule_15_tool_refs_use_the_catalog_multi_node_mode() -> None:
    doc = minimal_doc(work={"toolRef": "test.sharded", "resources": "gang", "next": "done"})
    doc["resources"] = {"gang": {"num_nodes": 4}}
    assert issues_of(doc) == []


def test_rule_17_needs_must_be_acyclic() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "needs": ["done"], "next": "done"},
        done={"terminal": True, "run": {"shell": "x"}, "needs": ["work"]},
    )
    assert "cycle detected in needs among states" in messages_of(doc)


def test_rule_18_at_least_one_terminal_state() -> None:
    doc = minimal_doc(done={"run": {"shell": "x"}})
    assert "workflow must declare at least one terminal: true state" in messages_of(doc)


def test_rule_19_control_flow_must_be_bounded() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "next": "back"}, back={"run": {"shell": "x"}, "next": "work"}
    )
    assert "unbounded control-flow cycle detected: work -> back -> work" in messages_of(doc)


def test_rule_19_goto_to_an_enclosing_sequence_is_bounded() -> None:
    doc = minimal_doc(
        loop={"sequence": ["work", "gate"], "loop": {"max": 2}, "next": "done"},
        work={"run": {"shell": "x"}},
        gate={"run": {"shell": "x"}, "transitions": [{"when": "loop_back", "goto": "loop"}]},
    )
    doc["initial"] = "loop"
    assert issues_of(doc) == []


def test_rule_20_params_cannot_use_state_tokens() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "params": {"p": "{{state.done.uri}}"}, "next": "done"})
    assert "params.p: unknown state token" in messages_of(doc)


def test_rule_20_commands_may_reference_states_that_run_later() -> None:
    doc = minimal_doc(work={"run": {"shell": "cat {{state.done.uri}}"}, "next": "done"})
    assert issues_of(doc) == []


def test_rule_20_commands_with_unknown_config_tokens_fail() -> None:
    doc = minimal_doc(work={"run": {"shell": "echo {{config.nope}}"}, "next": "done"})
    assert "unknown config token: config.nope" in messages_of(doc)


def test_rule_20_trigger_uri_must_resolve_even_for_state_tokens() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "next": "done", "trigger": {"uri": "{{state.done.uri}}"}})
    assert "trigger.uri: unknown state token" in messages_of(doc)


def test_rule_20_loop_tokens_resolve_at_validation_for_every_loop() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "echo {{loop.seq}} {{loop.typo}}"}},
        seq={"sequence": ["work"], "loop": {"max": 2}, "next": "done"},
    )
    doc["initial"] = "seq"
    text = messages_of(doc)
    assert "unknown loop token: loop.typo" in text
    assert "loop.seq" not in text


def test_rule_20_orphan_states_are_still_validated() -> None:
    doc = minimal_doc(orphan={"run": {"shell": "echo {{config.nope}}"}, "terminal": True})
    assert "state orphan" in messages_of(doc)


def test_config_values_cannot_use_loop_tokens() -> None:
    doc = minimal_doc()
    doc["config"] = {"out": "s3://b/{{loop.x}}"}
    assert "config.out" in messages_of(doc)


def test_var_overrides_are_validated_again() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": "{{config.n}}"}})
    doc["config"] = {"n": 2}
    assert "loop.max must be >= 1, got 0" in messages_of(doc, overrides={"n": "0"})


def test_a_nul_character_anywhere_in_the_spec_is_refused_where_it_is() -> None:
    doc = minimal_doc(work={"run": {"shell": "echo \x00"}, "next": "done"})
    assert "state work: run.shell: contains a NUL character" in messages_of(doc)


def test_a_var_with_a_nul_character_is_refused_before_it_reaches_a_command() -> None:
    doc = minimal_doc(work={"run": {"shell": "ls {{config.root}}"}, "next": "done"})
    doc["config"] = {"root": "/data"}
    assert "var 'root' (--var or the run's vars) contains a NUL character" in messages_of(
        doc, overrides={"root": "/tmp/a\x00b"}
    )
