"""Keying a cached step from what storage holds now: its rendered task and the content of its inputs."""

from __future__ import annotations

from activities.storage import MAX_LISTED_KEYS, StorageRouter
from npaflow.cache import InputContent, KeyComponents, ObjectFacts, cache_key
from npaflow.errors import ConfigurationError
from npaflow.render.step_identity import step_identity
from npaflow.runtime.cache.messages import CacheLookupInput, StepKey
from npaflow.steps import PlanStep


async def objects_at(storage: StorageRouter, uri: str) -> list[ObjectFacts]:
    """The objects a declared URI names: every object under a prefix (`.../`), else the one object.

    Raises:
        ConfigurationError: more objects than a key may list (a partial listing would key wrongly).
    """
    store = storage.for_uri(uri)
    if not uri.endswith("/"):
        facts = await store.facts(uri)
        return [facts] if facts is not None else []
    listed = await store.list_facts(uri, limit=MAX_LISTED_KEYS + 1)
    if len(listed) > MAX_LISTED_KEYS:
        raise ConfigurationError(
            f"{uri}: more than {MAX_LISTED_KEYS:,} objects, too many for the stage cache to key or "
            "verify (hint: declare a narrower prefix, or remove cache: from the state)"
        )
    return sorted(listed, key=lambda facts: facts.key)


async def step_key(storage: StorageRouter, step: PlanStep, request: CacheLookupInput) -> StepKey:
    """The step's key: scope, state, cache version, its keyed twin's task and input URIs, input content.

    The twin (`PlanStep.keyed`) is the step resolved with `{{run.id}}` as the run id, so
    the run id is neutral where it is a token and nowhere else; the content is read at
    the step's own URIs. A step without a twin keys as itself (its run's own key: no hit
    from another run, never a wrong one).
    """
    keyed = step.keyed or step
    inputs = [
        InputContent(uri=twin.uri, objects=tuple(await objects_at(storage, real.uri)))
        for real, twin in zip(step.inputs, keyed.inputs, strict=True)
    ]
    components = KeyComponents(
        scope=request.scope,
        state=step.state,
        cache_version=step.cache.version if step.cache else "",
        step=step_identity(
            keyed,
            request.catalog,
            infra=request.infra,
            secret_names=request.secret_env,
            images=request.images,
        ),
        inputs=tuple(inputs),
    )
    return StepKey(state=step.state, key=cache_key(components), components=components, item=step.item)
