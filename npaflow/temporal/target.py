"""Where and how to reach Temporal, by Temporal's own convention (`temporalio.envconfig`).

A TOML profile (`TEMPORAL_CONFIG_FILE`, default `~/.config/temporalio/temporal.toml`,
profile `TEMPORAL_PROFILE` or `default`), overridden by `TEMPORAL_ADDRESS`,
`TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS*`, overridden by flags:
the same files and variables the Temporal CLI and every SDK read, so a Temporal
Cloud or mTLS profile that works with `temporal` works with npaflow.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.envconfig import ClientConfigProfile
from temporalio.service import TLSConfig

from npaflow.errors import UsageError
from npaflow.integers import plain_int
from npaflow.runtime.contract import ENV_DEFAULTS, EnvVar


@dataclass(frozen=True)
class TemporalTarget:
    """The resolved connection: address, namespace and credentials."""

    address: str
    namespace: str
    api_key: str | None = None
    tls: bool | TLSConfig = False
    rpc_metadata: Mapping[str, str] = field(default_factory=dict)
    source: str = "defaults"  # where the settings came from, for messages

    @property
    def secured(self) -> bool:
        """True when the connection uses TLS (an API key implies it)."""
        return self.tls is not False


def _config_file() -> str | None:
    path = os.environ.get(EnvVar.TEMPORAL_CONFIG_FILE.value, "")
    if path and not Path(path).expanduser().is_file():
        raise UsageError(
            f"{EnvVar.TEMPORAL_CONFIG_FILE.value}={path}: no such file (hint: point it at "
            "your temporal.toml, or unset it)"
        )
    return path or None


def _source(address: str | None, profile: str | None, config_file: str | None) -> str:
    """Where the address came from, as a message should name it (the flag, the variable, a profile)."""
    if address:
        return "--address"
    if os.environ.get(EnvVar.TEMPORAL_ADDRESS.value) and not (profile or config_file):
        return EnvVar.TEMPORAL_ADDRESS.value
    return f"profile {profile or 'default'}" + (f" of {config_file}" if config_file else "")


def temporal_target(
    address: str | None = None, namespace: str | None = None, profile: str | None = None
) -> TemporalTarget:
    """Resolve the profile and environment, then apply the flags given.

    Raises:
        UsageError: the config file or profile is missing or invalid, or a TLS file is unreadable.
    """
    config_file = _config_file()
    profile = profile or os.environ.get(EnvVar.TEMPORAL_PROFILE.value) or None
    try:
        loaded = ClientConfigProfile.load(profile)
        connect = loaded.to_client_connect_config()
    except OSError as exc:
        raise UsageError(
            f"Temporal TLS setting: cannot read {exc.filename}: {exc.strerror} (hint: fix "
            "the path in your profile or TEMPORAL_TLS_* variables)"
        ) from None
    except RuntimeError as exc:  # temporalio's ConfigError: bad TOML, unknown profile
        where = config_file or "~/.config/temporalio/temporal.toml"
        first = str(exc).splitlines()[0]
        raise UsageError(
            f"Temporal client config {where}: {first} (hint: fix the file, or choose "
            f"another profile with --profile / {EnvVar.TEMPORAL_PROFILE.value})"
        ) from None
    source = _source(address, profile, config_file)
    resolved = address or connect.get("target_host") or ENV_DEFAULTS[EnvVar.TEMPORAL_ADDRESS]
    if problem := _address_problem(resolved):
        where = "--address" if address else source
        raise UsageError(f"Temporal address {resolved!r} (from {where}): {problem}, e.g. 127.0.0.1:7233")
    return TemporalTarget(
        address=resolved,
        namespace=namespace or connect.get("namespace") or ENV_DEFAULTS[EnvVar.TEMPORAL_NAMESPACE],
        api_key=connect.get("api_key"),
        tls=connect.get("tls", False),
        rpc_metadata=dict(connect.get("rpc_metadata") or {}),
        source=source,
    )


def _address_problem(address: str) -> str:
    """Why `address` is not HOST:PORT ("" when it is); the SDK would raise a bare ValueError."""
    host, colon, digits = address.rpartition(":")
    port = plain_int(digits)
    if not colon or not host or port is None:
        return "expected HOST:PORT"
    if not 1 <= port <= 65535:
        return f"port {port} is not in 1-65535"
    return ""
