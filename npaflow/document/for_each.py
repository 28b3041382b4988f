"""A parallel group's `forEach:` (npaflow's extension): its members come from a list a stage wrote.

The model only; what the list may hold, how members are keyed and how the group
ends are npaflow/fanout/'s, and how the key is parsed and checked is
npaflow/spec/'s (parse_for_each.py, validate_for_each.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from npaflow.presets import FROZEN

#: Items a list may hold when `max` is not given.
DEFAULT_MAX_ITEMS = 1000
#: The most `max` may allow: a wider list belongs in more than one group.
MAX_ITEMS_CEILING = 10_000
#: Scopes the reference's tokens use: an item's name cannot shadow one.
RESERVED_NAMES = frozenset({"config", "run", "state", "loop"})


class ForEach(BaseModel):
    """`forEach: {items: URI, as: NAME, max: N, minSuccess: 0..1}` on a group of one member template."""

    model_config = FROZEN | ConfigDict(populate_by_name=True)

    items: str
    name: str = Field(alias="as")
    max_items: int = Field(default=DEFAULT_MAX_ITEMS, alias="max")
    min_success: float = Field(default=1.0, alias="minSuccess")
