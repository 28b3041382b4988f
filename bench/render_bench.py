"""Render 1,000 waves to SkyPilot YAML; prints time per wave and the budget ratio.

Budget (issue 3): rendering 1,000 waves takes well under a second.
Run: python bench/render_bench.py [--waves N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from plan_bench import generate_spec

from npaflow.catalog import load_builtin_catalog
from npaflow.plan import build_plan
from npaflow.render import RenderOptions, render_wave
from npaflow.spec import load_spec_from_str


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--waves", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    catalog = load_builtin_catalog()
    spec = load_spec_from_str(generate_spec(args.waves * 2), "bench.yaml", catalog=catalog)
    batches = build_plan(spec, catalog, run_id="bench-run").waves[: args.waves]
    options = RenderOptions(run_id="bench-run", workflow=spec.name)
    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        size = sum(len(render_wave(batch, catalog, options).yaml) for batch in batches)
        timings.append(time.perf_counter() - start)
    median = statistics.median(timings)
    groups = sum(1 for b in batches if len(b.steps) > 1)
    print(f"waves rendered: {len(batches)} ({groups} JobGroups), {size / 1024:.0f} KiB of YAML")
    print(
        f"render time: median {median:.3f}s  best {min(timings):.3f}s  "
        f"({median / len(batches) * 1e6:.0f} us/wave; budget 1.000s, ratio {median:.2f}x)"
    )


if __name__ == "__main__":
    main()
