"""Wall time of the pure CLI commands as a user runs them (a fresh process each time).

Start-up (issue 36): `npaflow --help`, `--version`, and `validate-spec` /
`plan-spec` of every example within 5x `python -c pass` of the same interpreter,
each run paired with a `python -c pass` just before it (so load hits both alike).
Budgets (issue 8): `validate-spec` and `plan-spec` of a 10,830-state chain < 2 s;
a 50,000-state chain returns a plan. Prints min and median of --repeat runs.
Run: python bench/cli_bench.py [--repeat 7] [--skip-50k]
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


def wall(command: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    code = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - start, code


def timed(args: list[str], repeat: int) -> tuple[float, float, int]:
    """(min, median) wall seconds of `npaflow *args` and its exit code."""
    walls, code = [], 0
    for _ in range(repeat):
        seconds, code = wall([NPAFLOW, *args])
        walls.append(seconds)
    return min(walls), statistics.median(walls), code


def report(label: str, args: list[str], repeat: int, budget: float | None) -> None:
    best, median, code = timed(args, repeat)
    ratio = f"  min/budget {best / budget:.2f} (budget {budget:g} s)" if budget else ""
    print(f"{label:<42} min {best:6.3f} s  median {median:6.3f} s  exit {code}{ratio}")


#: What any CLI that reads YAML into pydantic models pays before its own code: two
#: models, one document. Printed beside the commands as the floor under the 5x budget.
PYDANTIC_FLOOR = """
import yaml
from pydantic import BaseModel, ConfigDict
class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    after: list[str] = []
class Doc(BaseModel):
    step: Step
    count: int = 0
Doc.model_validate(yaml.load("step: {name: x}\\ncount: 3", Loader=yaml.CSafeLoader))
"""


def paired(label: str, args: list[str], repeat: int, command: list[str] | None = None) -> float:
    """Median of (npaflow run / the `python -c pass` just before it); prints both medians."""
    ratios, ours, floor = [], [], []
    for _ in range(repeat):
        bare, _ = wall([sys.executable, "-c", "pass"])
        seconds, code = wall(command or [NPAFLOW, *args])
        assert code == 0, (args, code)
        ratios.append(seconds / bare)
        ours.append(seconds)
        floor.append(bare)
    ratio = statistics.median(ratios)
    print(
        f"{label:<42} {statistics.median(ours):6.3f} s vs python -c pass {statistics.median(floor):6.3f} s"
        f"  ratio {ratio:4.1f}x (budget 5x)"
    )
    return ratio


def start_up(repeat: int) -> None:
    worst = max(
        paired("npaflow --help", ["--help"], repeat),
        paired("npaflow --version", ["--version"], repeat),
        *(
            paired(f"{command} {spec.name}", [command, str(spec.relative_to(ROOT))], repeat)
            for spec in sorted((ROOT / "specs" / "examples").glob("*.yaml"))
            for command in ("validate-spec", "plan-spec")
        ),
    )
    print(f"start-up: worst median ratio {worst:.1f}x python -c pass (budget 5x)")
    paired("floor: yaml + 2 pydantic models, no npaflow", [], repeat, [sys.executable, "-c", PYDANTIC_FLOOR])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-50k", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        chain = Path(scratch) / "chain-10830.yaml"
        chain.write_text(chain_spec(10_830))
        bomb = Path(scratch) / "bomb.yaml"
        bomb.write_text(alias_bomb())
        start_up(args.repeat)
        report("validate-spec alias bomb (refused)", ["validate-spec", str(bomb)], args.repeat, 1.0)
        report("validate-spec 10,830-state chain", ["validate-spec", str(chain)], args.repeat, 2.0)
        report("plan-spec 10,830-state chain", ["plan-spec", str(chain)], args.repeat, 2.0)
        if not args.skip_50k:
            big = Path(scratch) / "chain-50000.yaml"
            big.write_text(chain_spec(50_000))
            report("plan-spec 50,000-state chain", ["plan-spec", str(big)], 1, None)


if __name__ == "__main__":
    main()
