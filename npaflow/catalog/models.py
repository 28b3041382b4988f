"""The `npa.catalog/v1` ToolCatalog document: tools as data (DESIGN §3.12)."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict, Field

from npaflow.document.models import MultiNodeMode
from npaflow.presets import FROZEN

CATALOG_API_VERSION = "npa.catalog/v1"


class ToolEntry(BaseModel):
    """One `toolRef` target: its command template plus what launching it needs."""

    model_config = FROZEN | ConfigDict(populate_by_name=True)

    name: str = ""
    description: str = ""
    argv: tuple[str, ...] = Field(alias="argv")
    config_defaults: dict[str, str] = Field(default_factory=dict, alias="configDefaults")
    omit_flags_when_empty: tuple[str, ...] = Field(default=(), alias="omitFlagsWhenEmpty")
    multi_node_mode: MultiNodeMode = Field(default=MultiNodeMode.FORBIDDEN, alias="multiNodeMode")
    image: str = ""
    setup: str = ""
    run_preamble: str = Field(default="", alias="runPreamble")
    secret_hints: tuple[str, ...] = Field(default=(), alias="secretHints")


class ToolCatalog(BaseModel):
    """A merged set of tool entries keyed by toolRef; later catalogs win."""

    model_config = FROZEN

    tools: dict[str, ToolEntry] = Field(default_factory=dict)

    def get(self, ref: str) -> ToolEntry | None:
        """Return the entry for `ref`, or None."""
        return self.tools.get(ref)

    def close_matches(self, ref: str, limit: int = 5) -> list[str]:
        """Return the known toolRefs that look most like `ref`."""
        return difflib.get_close_matches(ref, list(self.tools), n=limit, cutoff=0.5)

    def merged_with(self, other: ToolCatalog) -> ToolCatalog:
        """Return a catalog where `other`'s entries replace ours."""
        return ToolCatalog(tools={**self.tools, **other.tools})
