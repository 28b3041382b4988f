"""A stage's cache key: sha256 over a versioned, length-prefixed encoding of what its result depends on.

Content, never names: the step as it would run (its rendered task: the command
with every config value it uses already substituted, the tool's setup, resources
with accelerators, the image) and the *content* of every declared input (each
object's key, size, content digest and version id; an upstream stage's outputs
are inputs here, so what it produced is keyed by content too). Config values
the step does not use are not in the task, so they never change its key. Never
the run id (the step is keyed as resolved with `{{run.id}}` for its run id, so
two runs of one spec share while a value that merely contains a run id keys as
itself), the attempt, or a secret's value (only the secret's name). Every value
is encoded with its type and its length, so no two different component sets
encode alike (joining parts without a delimiter is how caches collide), and the
encoding starts with the key schema's version, so a change to what is keyed
starts a fresh key space instead of misreading old entries.
"""

from __future__ import annotations

import hashlib
import struct

from pydantic import BaseModel, Field, JsonValue

from npaflow.presets import FROZEN

#: Bump when the components or their encoding change: old entries then never match.
KEY_SCHEMA_VERSION = 1
_MAGIC = b"npaflow-stage-cache"
#: What a run id is written back as in every keyed text.
RUN_ID_TOKEN = "{{run.id}}"


class ObjectFacts(BaseModel):
    """One stored object as storage describes it: its key under the declared URI, size, checksum."""

    model_config = FROZEN

    key: str = Field(description="the object's key relative to its declared URI ('' for a file URI)")
    size: int = Field(ge=0)
    etag: str = Field(description="the store's ETag or checksum: changes whenever the bytes change")
    version_id: str = ""


class InputContent(BaseModel):
    """A declared input and what it held when the key was computed (objects sorted by key)."""

    model_config = FROZEN

    uri: str
    objects: tuple[ObjectFacts, ...]


class StepIdentity(BaseModel):
    """The step as it would run (npaflow/render/step_identity.py).

    Its SkyPilot task (run script, setup, resources with accelerators, image, node
    count) with the run id left symbolic, and the secrets by name only.
    """

    model_config = FROZEN

    task: dict[str, JsonValue]
    secret_names: tuple[str, ...] = ()


class KeyComponents(BaseModel):
    """Everything a key is computed from, kept in the entry so a miss can say what differs."""

    model_config = FROZEN

    schema_version: int = KEY_SCHEMA_VERSION
    scope: str
    state: str
    cache_version: str = ""
    step: StepIdentity
    inputs: tuple[InputContent, ...] = ()


def encode(value: JsonValue) -> bytes:
    """The canonical encoding: a type tag and a length before every value; mappings sorted by key."""
    if value is None:
        return b"n"
    if isinstance(value, bool):
        return b"b" + (b"1" if value else b"0")
    if isinstance(value, int):
        return _framed(b"i", str(value).encode())
    if isinstance(value, float):
        return _framed(b"f", repr(value).encode())
    if isinstance(value, str):
        return _framed(b"s", value.encode("utf-8"))
    if isinstance(value, list | tuple):
        return _framed(b"l", b"".join(encode(item) for item in value), count=len(value))
    if isinstance(value, dict):
        items = sorted(value.items())
        body = b"".join(encode(key) + encode(item) for key, item in items)
        return _framed(b"d", body, count=len(items))
    raise TypeError(f"cannot key a {type(value).__name__}")


def _framed(tag: bytes, payload: bytes, *, count: int | None = None) -> bytes:
    head = tag + (struct.pack(">Q", count) if count is not None else b"")
    return head + struct.pack(">Q", len(payload)) + payload


def cache_key(components: KeyComponents) -> str:
    """`sha256:<hex>` of the versioned encoding of the components."""
    document = components.model_dump(mode="json")
    digest = hashlib.sha256(_MAGIC + encode(KEY_SCHEMA_VERSION) + encode(document))
    return f"sha256:{digest.hexdigest()}"


def differing(old: KeyComponents, new: KeyComponents) -> list[str]:
    """Which components differ, most specific first (`inputs[0]`, `step.image`, `config.lr`)."""
    changes: list[str] = []
    before, after = old.model_dump(mode="json"), new.model_dump(mode="json")
    for name in after:
        _compare(name, before.get(name), after[name], changes)
    return changes


def _compare(path: str, before: JsonValue, after: JsonValue, changes: list[str]) -> None:
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            _compare(f"{path}.{key}", before.get(key), after.get(key), changes)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            _compare(f"{path}[{index}]", old, new, changes)
        return
    changes.append(path)
