"""SkyPilot `resources` normalization (reference §8.6), without reading the environment."""

from __future__ import annotations

import re

from pydantic import JsonValue

#: The profile keys SkyPilot receives, in the order they are written.
SKYPILOT_RESOURCE_KEYS = ("cloud", "accelerators", "cpus", "memory", "disk_size", "use_spot", "region")
_KUBERNETES = {"kubernetes", "k8s"}
_MEMORY_UNIT = re.compile(r"(?i)(gi|g)$")


def is_kubernetes(profile: dict[str, JsonValue]) -> bool:
    """True when the profile targets Kubernetes (`cloud: kubernetes` or `k8s`)."""
    return str(profile.get("cloud") or "").strip().lower() in _KUBERNETES


def _at_least(value: JsonValue) -> str:
    text = str(value).strip()
    return text if text.endswith("+") else f"{text}+"


def normalize_resources(profile: dict[str, JsonValue], infra: str = "") -> dict[str, JsonValue]:
    """Keep the keys SkyPilot understands and apply the memory and Kubernetes rules.

    A run-level `infra` (`k8s/<context>`, `aws/us-east-1`, ...) is written into the
    task itself and replaces the profile's cloud and region: `sky jobs launch --infra`
    is ignored for JobGroups and pipelines, a task's own `resources.infra` is not.
    """
    kubernetes = (
        is_kubernetes(profile) if not infra else (infra.split("/", 1)[0].strip().lower() in _KUBERNETES)
    )
    result: dict[str, JsonValue] = {"infra": infra} if infra else {}
    for key in SKYPILOT_RESOURCE_KEYS:
        if infra and key in ("cloud", "region"):
            continue
        value = profile.get(key)
        if value is None or value == "" or value == {}:
            continue
        if key == "cloud" and kubernetes:
            value = "kubernetes"
        if key == "memory" and isinstance(value, str):
            value = _MEMORY_UNIT.sub("", value.strip())
        if key in ("cpus", "memory") and kubernetes:
            value = _at_least(value)
        if key == "disk_size":
            if not kubernetes:
                continue
            key = "ephemeral_storage"
        result[key] = value
    return result


def kubernetes_config(profile: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """Return the task-level `config.kubernetes` taken from a profile's `kubernetes` block."""
    block = profile.get("kubernetes")
    if not isinstance(block, dict):
        return {}
    picked: dict[str, JsonValue] = {
        key: block[key] for key in ("pod_config", "provision_timeout") if key in block
    }
    return {"kubernetes": picked} if picked else {}
