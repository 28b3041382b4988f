"""Validate and plan a generated 2,000-state spec; prints timings and steps/second.

Budget (issue 2): validate + plan under 1 s on the 2-core reference machine.
Run: python bench/plan_bench.py [--states N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npaflow.catalog import load_builtin_catalog
from npaflow.plan import build_plan
from npaflow.spec import load_spec_from_str
from tests.spec_factory import chain_spec as generate_spec


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
    print(
        f"validate+plan: median {median:.3f}s  best {best:.3f}s  (budget 1.000s, "
        f"ratio {median / 1.0:.2f}x of budget)"
    )
    print(f"steps/second: {steps / median:,.0f}")


if __name__ == "__main__":
    main()
