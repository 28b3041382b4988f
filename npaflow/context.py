"""Run context creation: config self-resolution and the params overlay (reference §2.3–2.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from npaflow.catalog.models import ToolCatalog
from npaflow.document.models import State, WorkflowSpec
from npaflow.errors import TokenError
from npaflow.ids import RunId
from npaflow.tokens import TokenScope, resolve_text, token_scopes_in

#: The run id a cached step's keyed twin is resolved with: `{{run.id}}` stays a token, literally,
#: so two runs key alike while a value that merely contains a run id keys as itself.
KEYED_RUN_ID = RunId("{{run.id}}")
#: How many passes config self-resolution makes before giving up on chains.
CONFIG_RESOLUTION_PASSES = 4


class ConfigTokenError(TokenError):
    """A config value cannot be resolved; names the offending key."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(message)


@dataclass(frozen=True)
class RunContext:
    """The resolved global config and run scope of one run (or plan, or validation)."""

    run_id: RunId
    config: Mapping[str, JsonValue]
    run: Mapping[str, JsonValue]

    def scope(
        self,
        *,
        state_outputs: Mapping[str, Mapping[str, str]] | None = None,
        loop_iterations: Mapping[str, int] | None = None,
        config: Mapping[str, JsonValue] | None = None,
    ) -> TokenScope:
        """Return a token scope over this context plus walk-time state."""
        return TokenScope(
            config=self.config if config is None else config,
            run=self.run,
            state_outputs=state_outputs or {},
            loop_iterations=loop_iterations or {},
        )


def config_with_catalog_defaults(spec: WorkflowSpec, catalog: ToolCatalog) -> dict[str, JsonValue]:
    """Merge every used tool's `configDefaults` into config, set-if-absent."""
    config: dict[str, JsonValue] = dict(spec.config)
    for state in spec.states.values():
        entry = catalog.get(state.tool_ref) if state.tool_ref else None
        if entry is not None:
            for key, value in entry.config_defaults.items():
                config.setdefault(key, value)
    return config


def build_run_context(spec: WorkflowSpec, catalog: ToolCatalog, run_id: RunId) -> RunContext:
    """Resolve config against itself and the run scope (reference §2.3).

    Raises:
        ConfigTokenError: a config value uses an unknown or forbidden token.
    """
    run: dict[str, JsonValue] = {"id": run_id, "prefix": f"{spec.name}/{run_id}"}
    run.update(spec.run_defaults)
    run["id"] = run_id
    config = config_with_catalog_defaults(spec, catalog)
    for key, value in config.items():
        if isinstance(value, str):
            forbidden = token_scopes_in(value) & {"state", "loop"}
            if forbidden:
                scope = sorted(forbidden)[0]
                raise ConfigTokenError(
                    key,
                    f"config values cannot use {{{{{scope}.*}}}} tokens "
                    f"(there are no outputs or iterations yet)",
                )
    for _ in range(CONFIG_RESOLUTION_PASSES):
        changed = False
        for key, value in config.items():
            if isinstance(value, str) and "{{" in value:
                try:
                    resolved = resolve_text(value, TokenScope(config=config, run=run))
                except TokenError as exc:
                    raise ConfigTokenError(key, str(exc)) from None
                if resolved != value:
                    config[key] = resolved
                    changed = True
        if not changed:
            break
    prefix = config.get("prefix")
    if prefix not in (None, ""):
        run["prefix"] = str(prefix)
    return RunContext(run_id=run_id, config=config, run=run)


def keyed_context(spec: WorkflowSpec, catalog: ToolCatalog) -> RunContext | None:
    """The context a cached spec's keyed twins resolve in (None when no state has `cache:`)."""
    if not any(state.cache is not None for state in spec.states.values()):
        return None
    return build_run_context(spec, catalog, KEYED_RUN_ID)


def state_config(state: State, context: RunContext, scope: TokenScope) -> Mapping[str, JsonValue]:
    """Return the config a state sees: the global config plus its params (reference §2.4).

    String params resolve against the base config, so one param cannot see another.

    Raises:
        TokenError: a param uses an unknown token (message prefixed with params.<key>).
    """
    if not state.params:
        return context.config
    overlay: dict[str, JsonValue] = dict(context.config)
    for key, value in state.params.items():
        if isinstance(value, str):
            try:
                overlay[key] = resolve_text(value, scope)
            except TokenError as exc:
                raise TokenError(f"params.{key}: {exc}") from None
        else:
            overlay[key] = value
    return overlay


def is_config_truthy(reference: str, config: Mapping[str, JsonValue]) -> bool:
    """Evaluate a transition `if:` with Python truthiness, as the reference does."""
    text = reference.strip()
    if text.startswith("config."):
        return bool(config.get(text[len("config.") :]))
    return bool(text)
