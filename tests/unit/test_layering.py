"""The layers import one way (STYLE rule 1): pure code never touches the world."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import EXAMPLES, ROOT

pytestmark = pytest.mark.unit

SIDE_EFFECT_MODULES = {
    "temporalio",
    "boto3",
    "botocore",
    "aioboto3",
    "subprocess",
    "random",
    "time",
    "os",
    "socket",
    "asyncio.subprocess",
    "workflows_def",
    "activities",
    "worker",
    "sky",
}
UPPER_LAYERS = {"workflows_def", "activities", "worker", "sky", "boto3", "botocore", "aioboto3"}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


#: npaflow's edges, not its pure core: the command line, and the Temporal client it shares with
#: the worker and the activities (npaflow/temporal/: it connects, reads files and the environment).
EDGES = {"cli", "temporal"}


def pure_modules() -> list[Path]:
    return [p for p in (ROOT / "npaflow").rglob("*.py") if not EDGES & set(p.relative_to(ROOT).parts)]


@pytest.mark.parametrize("path", pure_modules(), ids=_rel)
def test_pure_modules_import_no_side_effects(path: Path) -> None:
    bad = {
        name
        for name in imported_modules(path)
        if name.split(".")[0] in SIDE_EFFECT_MODULES or name in SIDE_EFFECT_MODULES
    }
    assert not bad, f"{path} imports {sorted(bad)}"


CLI = ROOT / "npaflow" / "cli"


def _module_level_imports(path: Path) -> set[str]:
    """What importing `path` imports at once (not what its functions import when called)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _path_of(module: str) -> Path | None:
    base = ROOT / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def cli_loaded_at_start() -> set[Path]:
    """The CLI modules loaded before a command's handler runs: the front door and the command's module."""
    seen: set[Path] = set()
    todo = [CLI / "__init__.py", *(CLI / "commands").glob("[!_]*.py")]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in _module_level_imports(path):
            found = _path_of(module) if module.startswith("npaflow.cli") else None
            if found is not None:
                todo.append(found)
    return seen


@pytest.mark.parametrize("path", sorted(CLI.rglob("*.py")), ids=_rel)
def test_the_cli_never_imports_upper_layers_and_talks_to_temporal_only_from_its_handlers(path: Path) -> None:
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert not roots & UPPER_LAYERS, f"{path.name} imports {sorted(roots & UPPER_LAYERS)}"
    if path in cli_loaded_at_start():
        assert "temporalio" not in roots, f"{_rel(path)} is loaded by every command yet imports temporalio"


def test_every_command_module_is_registered_and_loads_no_temporal_client() -> None:
    from npaflow.cli.commands import COMMANDS

    modules = {CLI / "commands" / f"{c.module.rsplit('.', 1)[-1]}.py" for c in COMMANDS}
    assert modules == set((CLI / "commands").glob("[!_]*.py"))
    assert all(hasattr(importlib.import_module(c.module), "add") for c in COMMANDS)


def test_help_imports_no_command_module() -> None:
    script = (
        "import sys, contextlib, io\n"
        "from npaflow import cli\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    cli.build_parser().parse_args(['--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('npaflow.cli.commands.')))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout


def test_spec_commands_load_no_temporal_aioboto3_activities_or_worker(tmp_path: Path) -> None:
    script = (
        "import sys, contextlib, io\n"
        "from npaflow import cli\n"
        "for argv in (['validate-spec', SPEC], ['plan-spec', SPEC, '--waves'],\n"
        "             ['render', SPEC, '--out', OUT]):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert cli.run(argv) == 0\n"
        "import json\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    spec = str(EXAMPLES / "gate-loop.yaml")
    result = subprocess.run(
        [sys.executable, "-c", f"SPEC={spec!r}\nOUT={str(tmp_path)!r}\n{script}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {name.split(".")[0] for name in json.loads(result.stdout)}
    assert not loaded & {"temporalio", "aioboto3", "botocore", "activities", "workflows_def", "sky"}


def _subpackage(path: Path) -> str:
    parts = path.relative_to(ROOT / "npaflow").parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def test_npaflow_subpackages_import_each_other_without_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for path in (ROOT / "npaflow").rglob("*.py"):
        source = _subpackage(path)
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] == "npaflow" and len(parts) > 1 and parts[1] != source:
                graph.setdefault(source, set()).add(parts[1])
    cycles = [(a, b) for a, targets in graph.items() for b in targets if _reaches(graph, b, a)]
    assert cycles == [], f"subpackage import cycles: {sorted(cycles)}"


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(graph.get(node, ()))
    return False


WORKFLOW_ALLOWED_ROOTS = {
    "npaflow",
    "temporalio",
    "pydantic",
    "workflows_def",
    "__future__",
    "asyncio",
    "dataclasses",
    "datetime",
    "typing",
    "collections",
    "enum",
}


@pytest.mark.parametrize("path", sorted((ROOT / "workflows_def").rglob("*.py")), ids=_rel)
def test_workflow_code_imports_only_pure_modules_and_the_sdk(path: Path) -> None:
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert roots <= WORKFLOW_ALLOWED_ROOTS, f"{path.name} imports {sorted(roots - WORKFLOW_ALLOWED_ROOTS)}"


@pytest.mark.parametrize("path", sorted((ROOT / "activities").rglob("*.py")), ids=_rel)
def test_activities_never_import_the_worker_or_workflows(path: Path) -> None:
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert not roots & {"worker", "workflows_def"}, path


#: What workflow and pure code must never call: it differs between a run and its replay.
NONDETERMINISTIC_METHODS = {"now", "utcnow", "today", "getenv"}
NONDETERMINISTIC_BUILTINS = {"open", "input"}


def nondeterministic_calls(path: Path) -> list[str]:
    """`datetime.now()`-like calls and builtin I/O in a module, as `line: name`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in NONDETERMINISTIC_METHODS:
            owner = function.value
            if isinstance(owner, ast.Name) and owner.id == "workflow":
                continue  # workflow.now(): the replayed clock
            found.append(f"{node.lineno}: {ast.unparse(function)}")
        elif isinstance(function, ast.Name) and function.id in NONDETERMINISTIC_BUILTINS:
            found.append(f"{node.lineno}: {function.id}")
    return found


@pytest.mark.parametrize("path", [*pure_modules(), *sorted((ROOT / "workflows_def").rglob("*.py"))], ids=_rel)
def test_workflow_and_pure_code_never_read_the_wall_clock_or_do_io(path: Path) -> None:
    # Workflows run unsandboxed (worker/main.py): this is what keeps them replayable.
    assert nondeterministic_calls(path) == [], f"{_rel(path)} calls {nondeterministic_calls(path)}"


def _outside_the_cli() -> list[Path]:
    layers = [ROOT / name for name in ("activities", "worker", "workflows_def")]
    pure = [p for p in pure_modules() if p != ROOT / "npaflow" / "__main__.py"]  # `python -m npaflow`
    return sorted([*(p for layer in layers for p in layer.rglob("*.py")), *pure])


@pytest.mark.parametrize("path", _outside_the_cli(), ids=_rel)
def test_no_worker_activity_workflow_or_pure_module_imports_the_cli(path: Path) -> None:
    assert not {n for n in imported_modules(path) if n == "npaflow.cli" or n.startswith("npaflow.cli.")}


@pytest.mark.parametrize(
    "path", [*_outside_the_cli(), *sorted((ROOT / "npaflow" / "temporal").rglob("*.py"))], ids=_rel
)
def test_argparse_stays_in_the_command_modules(path: Path) -> None:
    # A command parses its flags once into npaflow/options; what it calls takes the typed model.
    assert "argparse" not in imported_modules(path), f"{_rel(path)} imports argparse"


#: The CLI's parser modules: they build argparse's parsers (and the console script reads them).
PARSER_MODULES = {"__init__.py", "lazy_commands.py", "options.py", "image_flags.py"}


def _below_the_command_modules() -> list[Path]:
    cli = ROOT / "npaflow" / "cli"
    return sorted(
        path
        for path in cli.rglob("*.py")
        if "commands" not in path.relative_to(cli).parts and str(path.relative_to(cli)) not in PARSER_MODULES
    )


@pytest.mark.parametrize("path", _below_the_command_modules(), ids=_rel)
def test_below_the_command_modules_handlers_take_options_models_not_argparse(path: Path) -> None:
    # Each command module parses its Namespace once (npaflow/options/); its handler takes the model.
    assert "argparse" not in imported_modules(path), f"{_rel(path)} imports argparse"
