"""What re-reading a fan-out's list changes: the items added and removed, by content.

`resume --reread-items` shows it before the restart (a helper reads the run's
copy and the source where the storage is), and the ledger's fan-out record
carries it once the group read the list again. Items are compared by member
key, so a reordered list changes nothing.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from npaflow.fanout.items import canonical, member_key
from npaflow.presets import FROZEN

#: Items a change names on each side (the run's copy and members.json have them all).
NAMED_CHANGES = 5
#: How much of one item a line shows.
SHOWN_ITEM_CHARS = 80


class ItemsChange(BaseModel):
    """One fan-out occurrence's list: the run's copy against its source now."""

    model_config = FROZEN

    group: str
    occurrence: int
    items_uri: str
    added: int = 0
    removed: int = 0
    #: Up to NAMED_CHANGES canonical items on each side, sorted.
    added_items: tuple[str, ...] = ()
    removed_items: tuple[str, ...] = ()
    #: Why the source cannot be read now ("" when it was); the restart would fail at the group.
    error: str = ""

    @classmethod
    def between(
        cls, group: str, occurrence: int, items_uri: str, before: list[JsonValue], after: list[JsonValue]
    ) -> ItemsChange:
        """The change from `before` (the run's copy) to `after` (the source now)."""
        old = {member_key(item): item for item in before}
        new = {member_key(item): item for item in after}
        added = sorted(canonical(new[key]) for key in new.keys() - old.keys())
        removed = sorted(canonical(old[key]) for key in old.keys() - new.keys())
        return cls(
            group=group,
            occurrence=occurrence,
            items_uri=items_uri,
            added=len(added),
            removed=len(removed),
            added_items=tuple(added[:NAMED_CHANGES]),
            removed_items=tuple(removed[:NAMED_CHANGES]),
        )

    def summary(self) -> str:
        """`2 items added, 1 removed`, or `the same items`."""
        if self.error:
            return f"cannot be read now: {self.error}"
        if not self.added and not self.removed:
            return "the same items"
        return f"{self.added} items added, {self.removed} removed"

    def item_lines(self) -> list[str]:
        """`+ {"shard": 8}` per named item, and `+ ... N more` past NAMED_CHANGES."""
        lines: list[str] = []
        sides = (("+", self.added, self.added_items), ("-", self.removed, self.removed_items))
        for sign, count, items in sides:
            lines += [f"{sign} {item[:SHOWN_ITEM_CHARS]}" for item in items]
            if count > len(items):
                lines.append(f"{sign} ... {count - len(items)} more")
        return lines

    def note(self) -> str:
        """The ledger's note on a re-read: `read again (--reread-items): 1 items added, 0 removed; + ...`."""
        return "; ".join([f"read again (--reread-items): {self.summary()}", *self.item_lines()])


class ItemsChanges(BaseModel):
    """Every fan-out list a run read, against its source now (`resume --reread-items`)."""

    model_config = FROZEN

    run_id: str
    changes: list[ItemsChange] = Field(default_factory=list)

    def unreadable(self) -> list[ItemsChange]:
        """The lists whose source cannot be read now."""
        return [change for change in self.changes if change.error]

    def text_lines(self) -> list[str]:
        """One line per list and one per item named, as `resume --reread-items` prints them."""
        if not self.changes:
            return ["no forEach list was read yet: each group reads its list when it starts"]
        lines = []
        for change in self.changes:
            lines.append(f"{change.group}#{change.occurrence} {change.items_uri}: {change.summary()}")
            lines += [f"  {line}" for line in change.item_lines()]
        return lines


class DiffItemsInput(BaseModel):
    """`diff_items`: the run's fan-out lists, read again where the storage is."""

    model_config = FROZEN

    ledger_uri: str
