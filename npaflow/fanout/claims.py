"""Each member's outputs are its own: checked on the members' URIs before any member launches.

Every output URI of a member names its item, but two different items may share
the field it names (`{"id": "a", "n": 1}` and `{"id": "a", "n": 2}`), and a value
such as `../a` reaches another member's place or one outside the spec's. Either
way two members, a resumed run or the cache would take one member's bytes for
another's, so the group fails naming both items.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from npaflow.fanout.items import ItemsError


def check_claims(members: Sequence[tuple[int, Sequence[str]]], template_uris: Sequence[str]) -> None:
    """Refuse a member output another member also writes, or one an item led up a directory.

    `members` holds each member's item index and its resolved output URIs.

    Raises:
        ItemsError: the items named, the URI, and the fix.
    """
    owners: dict[str, int] = {}
    climbs = any(_climbs(uri) for uri in template_uris)
    for index, uris in members:
        for uri in uris:
            if not climbs and _climbs(uri):
                raise ItemsError(
                    f"item {index} puts a '..' segment in output {uri}: a member writes "
                    "where its spec says; items hold names, ids and paths below it, not relative paths"
                )
            place = _place(uri)
            owner = owners.setdefault(place, index)
            if owner != index:
                raise ItemsError(
                    f"items {owner} and {index} would both write {uri}: name each output by a field "
                    "that differs between items (an id), or make the items differ in it"
                )


def _climbs(uri: str) -> bool:
    _, _, path = uri.rpartition("://")
    return ".." in path.split("/")


def _place(uri: str) -> str:
    scheme, found, path = uri.rpartition("://")
    return f"{scheme}{found}{posixpath.normpath(path)}" if path else uri
