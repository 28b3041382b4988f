"""A run execution's memo (part of the contract, npaflow/runtime/contract.py): read leniently."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RunMemo(BaseModel):
    """A run execution's memo: what `submit` wrote, and what the run keeps current.

    `status` and `list` read it when no worker answers; `resume` carries it over.
    Read leniently (`read`): a run started by hand may carry any memo at all.
    """

    model_config = ConfigDict(extra="ignore")

    spec: str = ""  # the spec file submitted (or, for a schedule's runs, the spec's name)
    vars: dict[str, str] = Field(default_factory=dict)
    submitted_by: str = ""
    phase: str = ""  # a RunPhase value, kept by the run
    ledger_uri: str = ""
    gpu_hours: float | None = None  # the run's hours, once it ended
    waited_seconds: float | None = None  # how long its waves waited for quota GPUs, once it ended
    node_hours: float | None = None
    ledger_behind: str = ""  # why the last export failed, while the ledger is behind
    unverified_cancels: int = 0  # jobs the run's end cancelled without seeing them end (a sweep follows)

    @classmethod
    def read(cls, raw: Mapping[str, Any]) -> RunMemo:
        """The memo's fields that hold what they should; anything else is left at its default."""
        fields: dict[str, Any] = {}
        for name in cls.model_fields:
            if name in raw:
                try:
                    cls.model_validate({name: raw[name]})
                except ValueError:
                    continue
                fields[name] = raw[name]
        return cls.model_validate(fields)

    def submitted(self) -> dict[str, Any]:
        """What a submit writes (a schedule's action too): the spec, its vars, who asked."""
        return {"spec": self.spec, "vars": self.vars, "submitted_by": self.submitted_by}

    def kept(self) -> dict[str, Any]:
        """What the run upserts: its phase and ledger, its hours once it ended, a ledger behind."""
        memo: dict[str, Any] = {"phase": self.phase, "ledger_uri": self.ledger_uri}
        if self.gpu_hours is not None and self.node_hours is not None:
            memo["gpu_hours"], memo["node_hours"] = self.gpu_hours, self.node_hours
        if self.waited_seconds is not None:
            memo["waited_seconds"] = self.waited_seconds
        if self.ledger_behind:
            memo["ledger_behind"] = self.ledger_behind
        if self.unverified_cancels:
            memo["unverified_cancels"] = self.unverified_cancels
        return memo
