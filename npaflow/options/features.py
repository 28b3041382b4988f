"""The commands of the cache, quota pools and the run page: `cache`, `quota`, `ui`."""

from __future__ import annotations

from pydantic import Field

from npaflow.options.connection import ConnectionOptions


class CacheOptions(ConnectionOptions):
    """`npaflow cache list|explain|purge`: where, which scope, which entries."""

    action: str
    root: str | None = None
    scope: str = ""
    run_id: str = ""  # explain
    state: str | None = ""  # explain: required; purge: with --run
    older_than: str = ""
    key: str = ""
    run: str = ""
    dry_run: bool = False
    as_json: bool = Field(default=False, alias="json")


class QuotaOptions(ConnectionOptions):
    """`npaflow quota set|list|status|delete|release`: the pool, its capacity and weights, a release."""

    action: str
    pool: str = ""
    gpus: int | None = None
    accelerator: str = ""
    team: tuple[str, ...] = ()
    run_id: str = ""
    force: bool = False
    as_json: bool = Field(default=False, alias="json")


class UiOptions(ConnectionOptions):
    """`npaflow ui`: where it listens, its token, and the Temporal UI it links."""

    port: int = 8234
    host: str = "127.0.0.1"
    token: str = ""
    temporal_ui: str | None = None
