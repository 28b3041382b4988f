"""Where a command finds Temporal: its connection flags, unset ones left to the environment."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict

#: Built from argparse's namespace: the command's other flags are ignored here, read by its own model.
#: `--json` is the field `as_json` (BaseModel has a `json`); tests may build a model by field name.
FROM_FLAGS = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class FromFlags(BaseModel):
    """A command's options, parsed once from its `argparse.Namespace`."""

    model_config = FROM_FLAGS

    @classmethod
    def parsed(cls, flags: Any) -> Self:
        """The options from an `argparse.Namespace` (or any object with these attributes).

        Flags this model does not name are ignored; ones the command lacks keep their defaults.
        """
        return cls.model_validate(vars(flags))


class ConnectionOptions(FromFlags):
    """`--address`, `--namespace`, `--profile`, `--task-queue`, `--ledger-root` (None: not given)."""

    address: str | None = None
    namespace: str | None = None
    profile: str | None = None
    task_queue: str | None = None
    ledger_root: str | None = None
