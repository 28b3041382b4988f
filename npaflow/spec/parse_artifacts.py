"""A state's declared artifacts (`inputs:`, `outputs:`): a list of `{uri, schema}` mappings."""

from __future__ import annotations

from pydantic import JsonValue

from npaflow.document.models import Artifact
from npaflow.document.yaml_source import KeyPath
from npaflow.spec.issues import IssueCollector


def parse_artifacts(value: JsonValue, path: KeyPath, issues: IssueCollector) -> tuple[Artifact, ...] | None:
    """A state's `inputs:` or `outputs:` list of `{uri, schema}`; None when its shape is wrong."""
    if value is None:
        return ()
    if not isinstance(value, list):
        issues.add(
            path,
            f"{path[-1]} must be a list of {{uri, schema}} mappings",
            f"write {path[-1]}: [{{uri: 's3://bucket/{{{{run.id}}}}/out/', schema: model}}]",
        )
        return None
    result = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            issues.add(
                (*path, index),
                f"{path[-1]}[{index}] must be a mapping",
                "write - {uri: s3://bucket/key, schema: label}",
            )
            continue
        issues.reject_unknown(item, {"uri", "schema"}, (*path, index))
        result.append(
            Artifact.model_validate(
                {"uri": str(item.get("uri") or ""), "schema": str(item.get("schema") or "")}
            )
        )
    return tuple(result)
