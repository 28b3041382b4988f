"""What differs between two keys, in the user's words: the input's URI and field, the config, the image.

`differing` (key.py) names key paths (`inputs[0].objects[0].etag`); a user reads
the spec, not the key. Each difference here names what the spec calls it and the
store's own evidence (`sha256` for a file, `etag` for an S3 object), with old ->
new where the values are short.
"""

from __future__ import annotations

from pydantic import JsonValue

from npaflow.cache.key import InputContent, KeyComponents, differing

#: Values longer than this are named, not shown.
SHORT = 64
#: Key paths of the step as it would run, as the spec says them.
_STEP_WORDS = {
    "step.task.run": "the command (run)",
    "step.task.setup": "the setup",
    "step.task.num_nodes": "num_nodes",
    "step.secret_names": "the secret names",
    "cache_version": "cache.version",
    "scope": "the cache scope",
    "state": "the state",
}


def changes(old: KeyComponents, new: KeyComponents) -> list[str]:
    """One line per difference, most specific first, in the spec's and the store's words."""
    lines: list[str] = []
    lines.extend(_input_changes(old.inputs, new.inputs))
    before, after = old.model_dump(mode="json"), new.model_dump(mode="json")
    for path in differing(old, new):
        if path.startswith("inputs"):
            continue
        words = _STEP_WORDS.get(path) or _task_words(path)
        lines.append(f"{words}: {_change(_at(before, path), _at(after, path))}")
    return lines


def _task_words(path: str) -> str:
    field = path.removeprefix("step.task.")
    if field == "resources.image_id":
        return "the image"
    return f"resources.{field.removeprefix('resources.')}" if field.startswith("resources.") else field


def _input_changes(old: tuple[InputContent, ...], new: tuple[InputContent, ...]) -> list[str]:
    before = {content.uri: content for content in old}
    lines = []
    for content in new:
        was = before.pop(content.uri, None)
        if was is None:
            lines.append(f"input {content.uri}: new (the other entry did not read it)")
            continue
        lines.extend(_object_changes(content, was))
    lines.extend(f"input {uri}: no longer read" for uri in before)
    return lines


def _object_changes(new: InputContent, old: InputContent) -> list[str]:
    was = {facts.key: facts for facts in old.objects}
    lines = []
    for facts in new.objects:
        where = new.uri + (f" ({facts.key})" if facts.key else "")
        prior = was.pop(facts.key, None)
        if prior is None:
            lines.append(f"input {where}: a new object")
        elif prior.etag != facts.etag:
            lines.append(f"input {where}: content {_evidence(prior.etag)} -> {_evidence(facts.etag)}")
        elif prior.size != facts.size:
            lines.append(f"input {where}: size {prior.size} -> {facts.size}")
        elif prior.version_id != facts.version_id:
            lines.append(f"input {where}: version {prior.version_id or '-'} -> {facts.version_id or '-'}")
    lines.extend(f"input {new.uri} ({key}): the object is gone" for key in was)
    return lines


def _evidence(etag: str) -> str:
    """`sha256 9f2c…` for a file, `etag 7d1e…` for an S3 object (its MD5)."""
    if etag.startswith("sha256:"):
        return f"sha256 {etag.removeprefix('sha256:')[:12]}…"
    return f"etag {etag.strip(chr(34))[:12]}…"


def _at(document: JsonValue, path: str) -> JsonValue:
    value = document
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("[") and isinstance(value, list):
            index = int(part.strip("[]"))
            value = value[index] if index < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def _change(before: JsonValue, after: JsonValue) -> str:
    old, new = str(before), str(after)
    if len(old) <= SHORT and len(new) <= SHORT:
        return f"{old} -> {new}"
    return "changed"
