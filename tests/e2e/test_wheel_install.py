"""The Dockerfile's install steps, run in fresh venvs: the wheel carries the catalog and examples.

Without a Docker engine, the build stage's COPY lines become copies into a scratch
source tree and its RUN lines run with a fresh venv standing in for the base
image's Python; the final stage's install RUN line runs as written with /dist
and /opt/npaflow mapped into a temporary directory. Then the installed
`npaflow` validates and plans every example from outside the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

EXAMPLES = sorted((ROOT / "specs/examples").glob("*.yaml"))


def dockerfile_stages() -> list[list[tuple[str, str]]]:
    """(instruction, argument) per stage, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, argument = line.partition(" ")
        if instruction == "FROM":
            stages.append([])
        stages[-1].append((instruction, argument))
    return stages


def copy_into(source: Path, target: Path, *, into_directory: bool) -> None:
    """Docker's COPY: a directory's contents to the target, a file to it (or into it, `dir/`)."""
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        return
    destination = target / source.name if into_directory else target
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, destination)


def clean_environ() -> dict[str, str]:
    """This environment without what would let the checkout's own modules leak in."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}


def run(command: str, cwd: Path, path: Path) -> None:
    environ = {**clean_environ(), "PATH": f"{path}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", "-ec", command], cwd=cwd, env=environ, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The image's venv, built by the Dockerfile's own steps; returns its bin directory."""
    scratch = tmp_path_factory.mktemp("image")
    base = scratch / "base-python"  # the base image's Python
    subprocess.run([sys.executable, "-m", "venv", str(base)], check=True)
    mapping = {
        "/dist": str(scratch / "dist"),
        "/opt/npaflow": str(scratch / "opt-npaflow"),
        "/src": str(scratch / "src"),
    }

    def mapped(text: str) -> str:
        for image_path, local in mapping.items():
            text = re.sub(rf"(?<![\w.]){re.escape(image_path)}(?=[/\s\"']|$)", local, text)
        return text

    build, final = dockerfile_stages()
    workdir = scratch
    for instruction, argument in build:
        if instruction == "WORKDIR":
            workdir = Path(mapped(argument))
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            *sources, target = argument.split()
            for source in sources:
                copy_into(ROOT / source, workdir / target, into_directory=target.endswith("/"))
        elif instruction == "RUN":
            run(mapped(argument), workdir, base / "bin")
    for instruction, argument in final:
        if instruction == "COPY" and argument.startswith("--from=wheel"):
            continue  # the wheel already sits in the mapped /dist
        if instruction == "COPY":
            source, target = argument.split()
            copy_into(ROOT / source, Path(mapped(target)), into_directory=False)
        elif instruction == "RUN" and "pip install" in argument:
            run(mapped(argument), scratch, base / "bin")
    return Path(mapping["/opt/npaflow"]) / "bin"


def test_the_wheel_ships_the_builtin_catalog_the_examples_and_the_schema(installed: Path) -> None:
    listing = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import npaflow, pathlib; root = pathlib.Path(npaflow.__file__).parent / 'specs';"
            "print('\\n'.join(sorted(str(p.relative_to(root)) for p in root.rglob('*.*'))))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
        env=clean_environ(),
    ).stdout.split()
    assert "catalog/builtin.yaml" in listing
    assert "npa.workflow.v0.0.1.schema.json" in listing
    assert {f"examples/{p.name}" for p in EXAMPLES} <= set(listing)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_the_installed_npaflow_validates_and_plans_every_example(
    installed: Path, example: Path, tmp_path: Path
) -> None:
    copy = tmp_path / example.name  # outside the checkout: only the wheel's files can be found
    copy.write_text(example.read_text())
    for command in ("validate-spec", "plan-spec"):
        result = subprocess.run(
            [str(installed / "npaflow"), command, str(copy)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_environ(),
        )
        assert result.returncode == 0, result.stderr


def test_the_installed_worker_imports_the_skypilot_sdk_it_was_built_with(installed: Path) -> None:
    result = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import sky, fastapi, activities.backends.skypilot_sdk;"
            "print(sky.__version__, fastapi.__version__)",
        ],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=300,
        env=clean_environ(),
    )
    assert result.returncode == 0, result.stderr
    pinned = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().split() if "==" in line)
    assert result.stdout.split() == [pinned["skypilot"], pinned["fastapi"]]


def test_the_installed_npaflow_init_writes_a_starter_and_the_examples_that_validate(
    installed: Path, tmp_path: Path
) -> None:
    def npaflow(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(installed / "npaflow"), *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=clean_environ(),
        )

    assert npaflow("init", "project").returncode == 0
    written = sorted(
        p.relative_to(tmp_path / "project").as_posix() for p in (tmp_path / "project").rglob("*.yaml")
    )
    assert written == sorted(["pipeline.yaml", *(f"examples/{p.name}" for p in EXAMPLES)])
    for spec in written:
        result = npaflow("validate-spec", f"project/{spec}")
        assert result.returncode == 0, result.stderr
