"""Registry credentials as Docker keeps them: `config.json` (`DOCKER_CONFIG`), its helpers, or the env.

Looked up per registry host: `auths[host].auth` (base64 `user:password`) or
`username`/`password`, else the host's credential helper (`credHelpers`, then
`credsStore`: `docker-credential-<name> get`), else `NPAFLOW_REGISTRY_USERNAME`
and `NPAFLOW_REGISTRY_PASSWORD` when `NPAFLOW_REGISTRY_HOST` names this host.
Values are never printed; only where they came from.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from npaflow.images import ImageReference
from npaflow.images.reference import DOCKER_HUB

#: The key `docker login` writes for Docker Hub.
_HUB_KEYS = ("https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io")
_HELPER_TIMEOUT_SECONDS = 20


@dataclass(frozen=True)
class Credentials:
    """A username and secret for one registry, and where they were found (for messages)."""

    username: str
    secret: str
    source: str


def config_path() -> Path:
    """`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`."""
    base = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    return Path(base) / "config.json"


def _config() -> dict[str, object]:
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise CredentialsError(f"{path} cannot be read as JSON ({exc}); fix or remove it") from None
    return data if isinstance(data, dict) else {}


class CredentialsError(Exception):
    """Credentials exist but cannot be read: reported, never taken as "no credentials"."""


def _keys_for(host: str) -> tuple[str, ...]:
    return (*_HUB_KEYS,) if host == DOCKER_HUB else (host, f"https://{host}", f"http://{host}")


def _from_auths(config: dict[str, object], host: str) -> Credentials | None:
    auths = config.get("auths")
    if not isinstance(auths, dict):
        return None
    for key in _keys_for(host):
        entry = auths.get(key)
        if not isinstance(entry, dict):
            continue
        if entry.get("auth"):
            try:
                user, _, secret = base64.b64decode(str(entry["auth"])).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise CredentialsError(
                    f"{config_path()}: auths[{key!r}].auth is not base64 'user:password'"
                ) from None
            return Credentials(user, secret, f"{config_path()} auths[{key!r}]")
        if entry.get("username"):
            source = f"{config_path()} auths[{key!r}]"
            return Credentials(str(entry["username"]), str(entry.get("password", "")), source)
    return None


def _helper_for(config: dict[str, object], host: str) -> str:
    helpers = config.get("credHelpers")
    if isinstance(helpers, dict):
        for key in _keys_for(host):
            if isinstance(helpers.get(key), str):
                return str(helpers[key])
    store = config.get("credsStore")
    return store if isinstance(store, str) else ""


def _from_helper(helper: str, host: str) -> Credentials | None:
    program = f"docker-credential-{helper}"
    server = "https://index.docker.io/v1/" if host == DOCKER_HUB else host
    try:
        done = subprocess.run(
            [program, "get"], input=server, capture_output=True, text=True, timeout=_HELPER_TIMEOUT_SECONDS
        )
    except FileNotFoundError:
        raise CredentialsError(
            f"{config_path()} names credential helper {program}, which is not on PATH"
        ) from None
    except subprocess.TimeoutExpired:
        raise CredentialsError(
            f"credential helper {program} did not answer in {_HELPER_TIMEOUT_SECONDS} s"
        ) from None
    if done.returncode != 0:
        return None  # the helper holds nothing for this host ("credentials not found in native keychain")
    try:
        answer = json.loads(done.stdout)
        return Credentials(str(answer["Username"]), str(answer["Secret"]), f"credential helper {program}")
    except (ValueError, KeyError, TypeError):
        raise CredentialsError(
            f"credential helper {program} answered with something that is not its JSON"
        ) from None


def credentials_for(image: ImageReference) -> Credentials | None:
    """The credentials for the image's registry, or None when none are configured.

    Raises:
        CredentialsError: credentials are configured but unreadable.
    """
    config = _config()
    found = _from_auths(config, image.registry)
    if found is None and (helper := _helper_for(config, image.registry)):
        found = _from_helper(helper, image.registry)
    if found is None and os.environ.get("NPAFLOW_REGISTRY_HOST") == image.registry:
        user = os.environ.get("NPAFLOW_REGISTRY_USERNAME", "")
        if user:
            secret = os.environ.get("NPAFLOW_REGISTRY_PASSWORD", "")
            found = Credentials(user, secret, "NPAFLOW_REGISTRY_USERNAME/NPAFLOW_REGISTRY_PASSWORD")
    return found
