"""Fan-out from data (DESIGN 27): a parallel group whose members come from a list a stage wrote.

The front door of the pure part. The spec's `forEach:` is modelled in
npaflow/document/for_each.py and checked in npaflow/spec/ (parse_for_each.py,
validate_for_each.py); the walk expands it in npaflow/traversal/fan_out.py.
Inside:

- `items.py`: what the list may hold (scalars, flat objects; bounded), member
  keys from content, the list's digest.
- `members.py`: a member from the template and its item (`{{NAME.field}}`).
- `claims.py`: each member's outputs its own (no two items write one URI).
- `labels.py`: a member named by its item (`shard-003`) where people look.
- `shell_words.py`: where a token stands in a `shell:` command, and an item
  value quoted for it, so bash reads data as data.
- `models.py`: what the walk asks and records (`ItemsRequest`, `ItemsRead`,
  `FanOutRecord`) and `members.json` (`MembersDocument`).
- `verdict.py`: how the group ends under `minSuccess`.
"""

from npaflow.fanout.claims import check_claims
from npaflow.fanout.items import Item, ItemsError, list_digest, member_key, parsed_items
from npaflow.fanout.labels import item_label
from npaflow.fanout.members import has_item_token, member_state
from npaflow.fanout.models import (
    MEMBERS_SCHEMA,
    FanOutRecord,
    ItemsRead,
    ItemsRequest,
    MemberRow,
    MembersDocument,
    MembersOutcome,
    MemberStatus,
)
from npaflow.fanout.verdict import allowed_failures, group_error

__all__ = [
    "MEMBERS_SCHEMA",
    "FanOutRecord",
    "Item",
    "ItemsError",
    "ItemsRead",
    "ItemsRequest",
    "MemberRow",
    "MemberStatus",
    "MembersDocument",
    "MembersOutcome",
    "allowed_failures",
    "check_claims",
    "group_error",
    "has_item_token",
    "item_label",
    "list_digest",
    "member_key",
    "member_state",
    "parsed_items",
]
