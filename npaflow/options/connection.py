"""Where a command finds Temporal: its connection flags, unset ones left to the environment."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict

#: Built from argparse's namespace: the command's other flags are ignored here, read by its own model.
FROM_FLAGS = ConfigDict(frozen=True, extra="ignore")


class ConnectionOptions(BaseModel):
    """`--address`, `--namespace`, `--profile`, `--task-queue`, `--ledger-root` (None: not given)."""

    model_config = FROM_FLAGS

    address: str | None = None
    namespace: str | None = None
    profile: str | None = None
    task_queue: str | None = None
    ledger_root: str | None = None

    @classmethod
    def parsed(cls, flags: Any) -> Self:
        """The options from an `argparse.Namespace` (or any object with these attributes)."""
        return cls.model_validate(vars(flags))
