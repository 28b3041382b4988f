"""Generated specs for bounded-input tests and benchmarks: long chains, bombs, deep nesting."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

RUN = "{{run.id}}"

BLOCK = 10  # states per generated block


def chain_spec(states: int) -> str:
    """A chain of blocks: a looped sequence, a 4-way group with params, two token-heavy leaves."""
    blocks = max(1, states // BLOCK)
    body: dict[str, dict] = {}
    for i in range(blocks):
        nxt = f"seq-{i + 1}" if i + 1 < blocks else None
        body[f"seq-{i}"] = {
            "sequence": [f"a-{i}", f"b-{i}"],
            "loop": {"max": "{{config.loops}}"},
            "next": f"grp-{i}",
        }
        body[f"a-{i}"] = {
            "run": {"shell": "echo {{config.root}}/{{run.id}}/{{loop.seq-" + str(i) + "}}"},
            "outputs": [{"uri": f"s3://b/{RUN}/a-{i}/" + "{{loop.seq-" + str(i) + "}}.json"}],
        }
        body[f"b-{i}"] = {"run": {"argv": ["cat", "{{state.a-" + str(i) + ".uri}}"]}}
        members = [f"m{j}-{i}" for j in range(4)]
        body[f"grp-{i}"] = {"parallel": members, "maxConcurrency": "{{config.mc}}", "next": f"l1-{i}"}
        for j, member in enumerate(members):
            body[member] = {
                "params": {"lr": f"{j}e-3", "out": "s3://b/{{run.id}}/" + member},
                "run": {"shell": "train --lr {{config.lr}} --out {{config.out}}"},
                "resources": "gpu",
            }
        body[f"l1-{i}"] = {"run": {"shell": "echo {{config.root|base64}}"}, "next": f"l2-{i}"}
        body[f"l2-{i}"] = {"run": {"shell": "echo done {{run.prefix}}"}}
        if nxt:
            body[f"l2-{i}"]["next"] = nxt
        else:
            body[f"l2-{i}"]["terminal"] = True
    doc = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": "bench"},
        "config": {"root": "/data", "loops": 2, "mc": 2},
        "resources": {"gpu": {"cpus": 4, "accelerators": "H100:1"}},
        "states": body,
    }
    return yaml.safe_dump(doc, sort_keys=False)


def alias_bomb(levels: int = 9, fanout: int = 9) -> str:
    """A few hundred bytes of nested aliases standing for fanout**levels values."""
    lines = [
        "apiVersion: npa.workflow/v0.0.1",
        "kind: Workflow",
        "metadata: {name: bomb}",
        "x-bomb:",
        "  l0: &l0 [" + ", ".join(["lol"] * fanout) + "]",
    ]
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fanout) + "]" for i in range(1, levels)]
    lines += ["states:", f"  a: {{terminal: true, run: {{shell: echo}}, x-bomb: *l{levels - 1}}}"]
    return "\n".join(lines) + "\n"


def deeply_nested(depth: int) -> str:
    """A valid spec whose `config` holds a value nested `depth` levels deep."""
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: deep}\n"
        f"config:\n  deep: {'[' * depth}1{']' * depth}\n"
        "states:\n  a: {terminal: true, run: {shell: echo}}\n"
    )


def wide_group(root: Path, members: int, batch: int = 50, *, outputs: bool = True) -> str:
    """`members` states with long names, a param and one output each, `batch` at a time (issue 63).

    Each member appends its line to its output, so a member launched twice shows as two lines;
    without `outputs` (a backend double that runs nothing) the members declare none.
    """
    names = [f"shard-{index:05d}-with-a-rather-long-descriptive-member-name" for index in range(members)]
    states: dict[str, object] = {
        "fan": {"parallel": names, "maxConcurrency": batch, "next": "done"},
        "done": {"run": {"shell": "true"}, "terminal": True},
    }
    for index, name in enumerate(names):
        states[name] = {
            "params": {"shard": index},
            "run": {"shell": f"echo {{{{config.shard}}}} >> {root}/{{{{run.id}}}}-{name}.txt"},
            **({"outputs": [{"uri": f"file://{root}/{{{{run.id}}}}-{name}.txt"}]} if outputs else {}),
        }
    document = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": "wide"},
        "config": {"shard": 0},
        "initial": "fan",
        "states": states,
    }
    return json.dumps(document)


def fan_out_group(root: Path, items: int, batch: int = 50) -> str:
    """`split` writes a list of `items` items; each member appends its row to a file of its own (issue 59).

    A member launched twice shows as two lines, as in `wide_group`.
    """
    listing = [{"id": f"item-{n:05d}", "rows": n} for n in range(items)]
    (root / "list.json").write_text(json.dumps(listing))
    return json.dumps(
        {
            "apiVersion": "npa.workflow/v0.0.1",
            "kind": "Workflow",
            "metadata": {"name": "wide-fan-out"},
            "initial": "split",
            "states": {
                "split": {
                    "run": {"shell": f"cp {root}/list.json {root}/{{{{run.id}}}}-items.json"},
                    "outputs": [{"uri": f"file://{root}/{{{{run.id}}}}-items.json", "schema": "items"}],
                    "next": "work",
                },
                "work": {
                    "parallel": ["member"],
                    "forEach": {"items": f"file://{root}/{{{{run.id}}}}-items.json", "as": "s", "max": items},
                    "maxConcurrency": batch,
                    "next": "done",
                },
                "member": {
                    "run": {"shell": f"echo {{{{s.rows}}}} >> {root}/{{{{run.id}}}}-{{{{s.id}}}}.txt"},
                    "outputs": [{"uri": f"file://{root}/{{{{run.id}}}}-{{{{s.id}}}}.txt", "schema": "row"}],
                },
                "done": {"terminal": True, "run": {"shell": "true"}},
            },
        }
    )


def long_loop(waves: int) -> str:
    """A loop of `waves` one-state waves, then a terminal state (issue 63)."""
    return json.dumps(
        {
            "apiVersion": "npa.workflow/v0.0.1",
            "kind": "Workflow",
            "metadata": {"name": "long"},
            "initial": "again",
            "states": {
                "again": {"sequence": ["tick"], "loop": {"max": waves}, "next": "done"},
                "tick": {"run": {"shell": "true"}},
                "done": {"run": {"shell": "true"}, "terminal": True},
            },
        }
    )


def gpu_spec(
    tmp_path: Path | None,
    name: str,
    *,
    seconds: float = 1.0,
    gpus: int = 8,
    states: int = 1,
    until: Path | None = None,
) -> str:
    """A chain of `states` states, each one 8-GPU task that sleeps (or waits for the file `until`)."""
    names = [f"s{i}" for i in range(states)]
    shell = f"while [ ! -e {until} ]; do sleep 0.1; done" if until else f"sleep {seconds}"
    doc = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": name},
        "resources": {"gpu": {"accelerators": f"H100:{gpus}"}},
        "initial": names[0],
        "states": {
            state: {
                "run": {"shell": shell},
                "resources": "gpu",
                **({"next": names[i + 1]} if i + 1 < len(names) else {"terminal": True}),
            }
            for i, state in enumerate(names)
        },
    }
    return json.dumps(doc)
