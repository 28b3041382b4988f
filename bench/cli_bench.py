"""Wall time of the pure CLI commands as a user runs them (a fresh process each time).

Budgets (issue 8): `npaflow validate-spec` of an example < 0.4 s; `validate-spec`
and `plan-spec` of a 10,830-state chain < 2 s; a 50,000-state chain returns a
plan. Prints min and median of --repeat runs and the ratio to each budget.
Run: python bench/cli_bench.py [--repeat 5] [--skip-50k]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.spec_factory import alias_bomb, chain_spec  # noqa: E402

NPAFLOW = str(Path(sys.executable).parent / "npaflow")


def timed(args: list[str], repeat: int) -> tuple[float, float, int]:
    """(min, median) wall seconds of `npaflow *args` and its exit code."""
    walls, code = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        code = subprocess.run(
            [NPAFLOW, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        ).returncode
        walls.append(time.perf_counter() - start)
    return min(walls), statistics.median(walls), code


def report(label: str, args: list[str], repeat: int, budget: float | None) -> None:
    best, median, code = timed(args, repeat)
    ratio = f"  min/budget {best / budget:.2f} (budget {budget:g} s)" if budget else ""
    print(f"{label:<42} min {best:6.3f} s  median {median:6.3f} s  exit {code}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-50k", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        chain = Path(scratch) / "chain-10830.yaml"
        chain.write_text(chain_spec(10_830))
        bomb = Path(scratch) / "bomb.yaml"
        bomb.write_text(alias_bomb())
        report("npaflow --help", ["--help"], args.repeat, None)
        report(
            "validate-spec gate-loop.yaml",
            ["validate-spec", "specs/examples/gate-loop.yaml"],
            args.repeat,
            0.4,
        )
        report("plan-spec gate-loop.yaml", ["plan-spec", "specs/examples/gate-loop.yaml"], args.repeat, None)
        report("validate-spec alias bomb (refused)", ["validate-spec", str(bomb)], args.repeat, 1.0)
        report("validate-spec 10,830-state chain", ["validate-spec", str(chain)], args.repeat, 2.0)
        report("plan-spec 10,830-state chain", ["plan-spec", str(chain)], args.repeat, 2.0)
        if not args.skip_50k:
            big = Path(scratch) / "chain-50000.yaml"
            big.write_text(chain_spec(50_000))
            report("plan-spec 50,000-state chain", ["plan-spec", str(big)], 1, None)


if __name__ == "__main__":
    main()
