"""docker-compose.yml and the Dockerfile, checked without a Docker engine.

The compose file validates against the Compose specification's JSON Schema
(tests/fixtures/compose-spec.schema.json, from docker-compose 1.29.2's wheel),
every image is pinned, and the workers' environment is exactly what the code
reads and enough for the configuration it selects.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tomllib
from typing import Any
from urllib.parse import urlparse

import jsonschema
import pytest
import yaml

from npaflow.runtime.contract import SEARCH_ATTRIBUTE_TYPES, EnvVar
from npaflow.runtime.metrics import Metric
from tests.helpers import ROOT, require_tool
from worker.config import WorkerConfig

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]

#: Variables the workers' libraries read, not npaflow itself: botocore's credentials and region.
LIBRARY_VARIABLES = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"}
#: Services running the npaflow image as a worker.
WORKERS = sorted(
    name for name, service in SERVICES.items() if service.get("build") and "entrypoint" not in service
)


def schema_validator() -> jsonschema.protocols.Validator:
    schema = json.loads((ROOT / "tests/fixtures/compose-spec.schema.json").read_text())
    return jsonschema.Draft201909Validator(schema)


def pinned(image: str) -> bool:
    """A digest, or a tag carrying a version number (never latest, never bare)."""
    if "@sha256:" in image:
        return True
    name, _, tag = image.rpartition(":")
    return bool(name) and "/" not in tag and tag != "latest" and bool(re.search(r"\d", tag))


def test_the_compose_file_validates_against_the_compose_specification() -> None:
    errors = [f"{e.json_path}: {e.message}" for e in schema_validator().iter_errors(COMPOSE)]
    assert errors == []


def test_the_schema_check_catches_a_misspelled_service_key() -> None:
    broken = copy.deepcopy(COMPOSE)
    broken["services"]["worker-1"]["enviroment"] = {"X": "1"}
    assert any("enviroment" in e.message for e in schema_validator().iter_errors(broken))


def test_every_image_is_pinned() -> None:
    images = [service["image"] for service in SERVICES.values()]
    images += re.findall(r"^FROM\s+(\S+)", DOCKERFILE, flags=re.MULTILINE)
    assert [image for image in images if not pinned(image)] == []
    assert not pinned("minio/minio:latest") and not pinned("postgres") and pinned("postgres:16.4")


def test_the_worker_image_is_built_from_this_checkout_with_this_version() -> None:
    built = {name: service["image"] for name, service in SERVICES.items() if service.get("build")}
    assert set(built.values()) == {f"npaflow-worker:{VERSION}"}


def test_there_are_two_worker_replicas_with_their_own_identity_and_home() -> None:
    assert len(WORKERS) == 2
    ids = {SERVICES[name]["environment"]["NPAFLOW_WORKER_ID"] for name in WORKERS}
    homes = {tuple(SERVICES[name]["volumes"]) for name in WORKERS}
    assert len(ids) == 2 and len(homes) == 2


@pytest.mark.parametrize("name", WORKERS)
def test_every_variable_a_worker_is_given_is_one_npaflow_or_its_libraries_read(name: str) -> None:
    known = {variable.value for variable in EnvVar} | LIBRARY_VARIABLES
    assert sorted(set(SERVICES[name]["environment"]) - known) == []


@pytest.mark.parametrize("name", WORKERS)
def test_a_worker_gets_everything_its_configuration_requires(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    environment = SERVICES[name]["environment"]
    for variable in EnvVar:
        monkeypatch.delenv(variable.value, raising=False)
    for key, value in environment.items():
        monkeypatch.setenv(key, str(value))
    config = WorkerConfig.from_env()
    config.check()  # e.g. skypilot backend => endpoint set
    assert {b.value for b in config.backends} == {"local", "skypilot"}
    assert urlparse(config.skypilot_endpoint).hostname == "skypilot"
    assert urlparse(config.skypilot_endpoint).port == int(SERVICES["skypilot"]["ports"][0].rsplit(":", 1)[1])
    assert config.ledger_root.startswith("s3://")
    assert urlparse(config.aws_endpoint_url).hostname in SERVICES
    assert environment["TEMPORAL_ADDRESS"].split(":")[0] in SERVICES
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= set(environment)
    assert environment["AWS_ACCESS_KEY_ID"] == SERVICES["minio"]["environment"]["MINIO_ROOT_USER"]


def test_the_examples_file_artifacts_are_on_a_volume_every_worker_mounts() -> None:
    root = yaml.safe_load((ROOT / "specs/examples/gate-loop.yaml").read_text())["config"]["root"]
    mounts = [
        {v.split(":")[0] for v in SERVICES[name]["volumes"] if v.split(":")[1] == root} for name in WORKERS
    ]
    assert len(mounts) == 2 and mounts[0] == mounts[1] and len(mounts[0]) == 1


def test_the_ledger_bucket_the_workers_use_is_the_one_the_setup_step_creates() -> None:
    bucket = urlparse(SERVICES[WORKERS[0]]["environment"]["NPAFLOW_LEDGER_ROOT"]).netloc
    assert f"mc mb --ignore-existing ledger/{bucket}\n" in SERVICES["minio-bucket"]["command"][0]


def test_the_namespace_step_registers_exactly_the_search_attributes_the_workflow_upserts() -> None:
    script = SERVICES["temporal-namespace"]["command"][0]
    listed = dict(item.split(":") for item in re.search(r"for attribute in ([^;]+);", script)[1].split())
    assert listed == SEARCH_ATTRIBUTE_TYPES


def test_the_image_runs_npaflow_worker_as_a_non_root_user_with_a_healthcheck() -> None:
    final = DOCKERFILE.split("\nFROM ")[-1]
    assert re.search(r"^USER (?!root)\w+", final, flags=re.MULTILINE)
    assert 'CMD ["npaflow", "worker", "--health-check"]' in final
    assert 'ENTRYPOINT ["npaflow"]' in final and 'CMD ["worker"]' in final
    assert "--constraint /dist/constraints.txt" in final and "[skypilot]" in final


def test_every_image_the_stack_pulls_is_one_the_deploy_guide_cites_as_published() -> None:
    guide = (ROOT / "docs/deploy.md").read_text()
    pulled = {service["image"] for service in SERVICES.values() if "build" not in service}
    assert pulled and [image for image in sorted(pulled) if f"`{image}`" not in guide] == []
    assert not any(image.startswith(("minio/", "docker.io/minio/")) for image in pulled)  # removed upstream


def test_the_shipped_alert_rules_are_valid_prometheus_rules() -> None:
    promtool = require_tool("promtool", package="prometheus")
    result = subprocess.run(
        [promtool, "check", "rules", str(ROOT / "docs/monitoring/alerts.yml")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_alerts_fire_as_their_promtool_unit_tests_expect() -> None:
    promtool = require_tool("promtool", package="prometheus")
    result = subprocess.run(
        [promtool, "test", "rules", str(ROOT / "docs/monitoring/alerts.test.yml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_stacks_prometheus_config_is_valid_and_scrapes_every_worker_where_it_serves_metrics() -> None:
    promtool = require_tool("promtool", package="prometheus")
    config = ROOT / "deploy/prometheus.yml"
    result = subprocess.run([promtool, "check", "config", str(config)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    (job,) = yaml.safe_load(config.read_text())["scrape_configs"]
    targets = sorted(t for group in job["static_configs"] for t in group["targets"])
    ports = {SERVICES[w]["environment"]["NPAFLOW_METRICS_ADDRESS"].rpartition(":")[2] for w in WORKERS}
    assert targets == sorted(f"{w}:{port}" for w in WORKERS for port in ports)
    mounts = SERVICES["prometheus"]["volumes"]
    assert "./docs/monitoring/alerts.yml:/etc/prometheus/rules/npaflow.yml:ro" in mounts


def test_the_stacks_alertmanager_config_is_valid() -> None:
    amtool = require_tool("amtool", package="prometheus-alertmanager")
    result = subprocess.run(
        [amtool, "check-config", str(ROOT / "deploy/alertmanager.yml")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_metric_an_alert_uses_is_one_npaflow_exports() -> None:
    rules = yaml.safe_load((ROOT / "docs/monitoring/alerts.yml").read_text())
    exported = {m.value for m in Metric}
    used = {
        name.removesuffix("_total").removesuffix("_bucket")
        for group in rules["groups"]
        for rule in group["rules"]
        for name in re.findall(r"npaflow_[a-z_]+", rule["expr"])
    }
    assert used and used <= exported
