"""Validate and plan a generated 2,000-state spec; prints timings and steps/second.

Budget (issue 2): validate + plan under 1 s on the 2-core reference machine.
Run: python bench/plan_bench.py [--states N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time

import yaml

from npaflow.catalog import load_builtin_catalog
from npaflow.plan import build_plan
from npaflow.spec import load_spec_from_str

BLOCK = 10  # states per generated block


def generate_spec(states: int) -> str:
    """A chain of blocks: a looped sequence, a 4-way group with params, two token-heavy leaves."""
    blocks = max(1, states // BLOCK)
    body: dict[str, dict] = {}
    for i in range(blocks):
        nxt = f"seq-{i + 1}" if i + 1 < blocks else None
        body[f"seq-{i}"] = {"sequence": [f"a-{i}", f"b-{i}"], "loop": {"max": "{{config.loops}}"},
                            "next": f"grp-{i}"}
        body[f"a-{i}"] = {"run": {"shell": "echo {{config.root}}/{{run.id}}/{{loop.seq-%d}}" % i},
                          "outputs": [{"uri": "s3://b/{{run.id}}/a-%d/{{loop.seq-%d}}.json" % (i, i)}]}
        body[f"b-{i}"] = {"run": {"argv": ["cat", "{{state.a-%d.uri}}" % i]}}
        members = [f"m{j}-{i}" for j in range(4)]
        body[f"grp-{i}"] = {"parallel": members, "maxConcurrency": "{{config.mc}}",
                            "next": f"l1-{i}"}
        for j, member in enumerate(members):
            body[member] = {"params": {"lr": f"{j}e-3", "out": "s3://b/{{run.id}}/%s" % member},
                            "run": {"shell": "train --lr {{config.lr}} --out {{config.out}}"},
                            "resources": "gpu"}
        body[f"l1-{i}"] = {"run": {"shell": "echo {{config.root|base64}}"}, "next": f"l2-{i}"}
        body[f"l2-{i}"] = {"run": {"shell": "echo done {{run.prefix}}"}}
        if nxt:
            body[f"l2-{i}"]["next"] = nxt
        else:
            body[f"l2-{i}"]["terminal"] = True
    doc = {"apiVersion": "npa.workflow/v0.0.1", "kind": "Workflow",
           "metadata": {"name": "bench"}, "config": {"root": "/data", "loops": 2, "mc": 2},
           "resources": {"gpu": {"cpus": 4, "accelerators": "H100:1"}}, "states": body}
    return yaml.safe_dump(doc, sort_keys=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--states", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    catalog = load_builtin_catalog()
    text = generate_spec(args.states)
    totals, validates, steps = [], [], 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        spec = load_spec_from_str(text, "bench.yaml", catalog=catalog)
        loaded = time.perf_counter()
        plan = build_plan(spec, catalog)
        done = time.perf_counter()
        validates.append(loaded - start)
        totals.append(done - start)
        steps = len(plan.steps)
    best, median = min(totals), statistics.median(totals)
    print(f"states: {len(spec.states)}  steps: {steps}  waves: {len(plan.occurrences())}")
    print(f"load+validate: median {statistics.median(validates):.3f}s")
    print(f"validate+plan: median {median:.3f}s  best {best:.3f}s  (budget 1.000s, "
          f"ratio {median / 1.0:.2f}x of budget)")
    print(f"steps/second: {steps / median:,.0f}")


if __name__ == "__main__":
    main()
