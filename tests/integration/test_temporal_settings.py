"""Temporal connection by Temporal's convention: TOML profiles, TEMPORAL_* variables, flags, TLS."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.service import TLSConfig
from temporalio.testing import WorkflowEnvironment

from npaflow.errors import UsageError
from npaflow.temporal.client import connect
from npaflow.temporal.target import TemporalTarget, temporal_target
from tests.helpers import NPAFLOW, ROOT
from tests.tls_proxy import Certificates, TlsProxy, make_certificates

pytestmark = pytest.mark.integration


@pytest.fixture
def no_temporal_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("TEMPORAL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.config/temporalio/temporal.toml of the host


def write_profiles(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_the_named_profile_of_the_config_file_is_used(
    no_temporal_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = write_profiles(
        tmp_path / "temporal.toml",
        '[profile.default]\naddress = "a:1"\n\n'
        '[profile.team]\naddress = "team.example:7233"\nnamespace = "team"\n',
    )
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(config))
    assert temporal_target().address == "a:1"
    monkeypatch.setenv("TEMPORAL_PROFILE", "team")
    target = temporal_target()
    assert (target.address, target.namespace, target.secured) == ("team.example:7233", "team", False)
    assert "profile team" in target.source


def test_environment_overrides_the_profile_and_flags_override_both(
    no_temporal_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = write_profiles(
        tmp_path / "temporal.toml", '[profile.default]\naddress = "file:1"\nnamespace = "from-file"\n'
    )
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(config))
    monkeypatch.setenv("TEMPORAL_ADDRESS", "env:2")
    assert (temporal_target().address, temporal_target().namespace) == ("env:2", "from-file")
    target = temporal_target(address="flag:3", namespace="flagged")
    assert (target.address, target.namespace) == ("flag:3", "flagged")


def test_an_api_key_implies_tls(no_temporal_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "ns.acct.tmprl.cloud:7233")
    monkeypatch.setenv("TEMPORAL_API_KEY", "secret-key")
    target = temporal_target()
    assert target.api_key == "secret-key" and target.secured


def test_without_any_settings_the_local_dev_server_is_the_default(no_temporal_env: None) -> None:
    target = temporal_target()
    assert (target.address, target.namespace, target.secured) == ("127.0.0.1:7233", "default", False)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"TEMPORAL_CONFIG_FILE": "/nonexistent/temporal.toml"}, "TEMPORAL_CONFIG_FILE=/nonexistent"),
        ({"TEMPORAL_PROFILE": "nope", "TEMPORAL_CONFIG_FILE": "{config}"}, "Profile 'nope' not found"),
        (
            {
                "TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/client.pem",
                "TEMPORAL_TLS_CLIENT_KEY_PATH": "/nonexistent/client.key",
            },
            "cannot read /nonexistent/client.pem",
        ),
    ],
    ids=["missing-file", "unknown-profile", "missing-certificate"],
)
def test_bad_settings_are_one_usage_error_naming_the_fix(
    no_temporal_env: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    setup: dict[str, str],
    message: str,
) -> None:
    config = write_profiles(tmp_path / "temporal.toml", '[profile.default]\naddress = "a:1"\n')
    for name, value in setup.items():
        monkeypatch.setenv(name, value.format(config=config))
    with pytest.raises(UsageError, match="hint") as error:
        temporal_target()
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1:99999", "port 99999 is not in 1-65535"),
        ("notahost", "expected HOST:PORT"),
        ("127.0.0.1:x", "expected HOST:PORT"),
    ],
)
def test_an_address_that_is_not_host_and_port_is_one_usage_error_naming_where_it_came_from(
    no_temporal_env: None, monkeypatch: pytest.MonkeyPatch, address: str, problem: str
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", address)
    with pytest.raises(UsageError) as error:
        temporal_target()
    assert str(error.value) == (
        f"Temporal address {address!r} (from TEMPORAL_ADDRESS): {problem}, e.g. 127.0.0.1:7233"
    )


@pytest.fixture
async def mtls(env: WorkflowEnvironment, tmp_path: Path) -> AsyncIterator[tuple[TlsProxy, Certificates]]:
    certificates = make_certificates(tmp_path / "tls")
    proxy = TlsProxy(env.client.service_client.config.target_host, certificates, require_client_cert=True)
    await proxy.start()
    yield proxy, certificates
    await proxy.stop()


def mtls_profile(path: Path, proxy: TlsProxy, certificates: Certificates) -> Path:
    return write_profiles(
        path,
        f"""
[profile.default]
address = "127.0.0.1:9"  # a decoy: the runs must use the profile they are told to

[profile.secure]
address = "{proxy.address}"
namespace = "default"

[profile.secure.tls]
server_ca_cert_path = "{certificates.ca}"
client_cert_path = "{certificates.client_cert}"
client_key_path = "{certificates.client_key}"
""",
    )


async def test_a_client_without_its_certificate_is_refused_by_an_mtls_server(
    no_temporal_env: None, mtls: tuple[TlsProxy, Certificates]
) -> None:
    proxy, certificates = mtls
    target = temporal_target(address=proxy.address)
    with pytest.raises(UsageError, match="plaintext"):
        await connect(target, patience=0)
    server_only = TemporalTarget(
        address=proxy.address,
        namespace="default",
        tls=TLSConfig(server_root_ca_cert=certificates.ca.read_bytes()),
    )
    with pytest.raises(UsageError, match="TLS"):
        await connect(server_only, patience=0)


async def test_worker_and_cli_run_a_spec_through_an_mtls_toml_profile(
    no_temporal_env: None, mtls: tuple[TlsProxy, Certificates], tmp_path: Path
) -> None:
    proxy, certificates = mtls
    config = mtls_profile(tmp_path / "temporal.toml", proxy, certificates)
    environ = {
        **os.environ,
        "TEMPORAL_CONFIG_FILE": str(config),
        "TEMPORAL_PROFILE": "secure",
        "NPAFLOW_TASK_QUEUE": f"tls-{tmp_path.name}",
        "NPAFLOW_HOME": str(tmp_path / "home"),
        "NPAFLOW_LOG_FORMAT": "console",
    }
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "worker", cwd=ROOT, env=environ, stdout=log, stderr=asyncio.subprocess.STDOUT
    )
    try:
        cli = await asyncio.create_subprocess_exec(
            NPAFLOW,
            "submit",
            "specs/examples/gate-loop.yaml",
            "--run-id",
            f"tls-{tmp_path.name}",
            "--wait",
            "--json",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path / 'out'}",
            cwd=ROOT,
            env=environ,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(cli.communicate(), timeout=180)
    finally:
        worker.terminate()
        await worker.wait()
        log.close()
    assert cli.returncode == 0, err.decode() + (tmp_path / "worker.log").read_text()[-3000:]
    assert json.loads(out)["status"] == "succeeded"
    assert "tls=True" in (tmp_path / "worker.log").read_text()
