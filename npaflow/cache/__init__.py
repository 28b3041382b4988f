"""The stage cache (DESIGN 20): never pay twice for the same GPU work.

Front door. `key` computes a stage's content key from its components;
`entry` holds the manifest a successful, verified wave leaves and checks a
candidate hit against what storage reports now. Pure: storage is read by the
activities, the workflow decides.
"""

from npaflow.cache.entry import (
    ENTRY_SCHEMA,
    CachedOutput,
    CacheEntry,
    Mismatch,
    MismatchReason,
    mismatches,
    object_uri,
)
from npaflow.cache.key import (
    KEY_SCHEMA_VERSION,
    RUN_ID_TOKEN,
    InputContent,
    KeyComponents,
    ObjectFacts,
    StepIdentity,
    cache_key,
    differing,
    encode,
)
from npaflow.cache.layout import KEYS_DIR, entry_uri, key_record_uri, scope_segment, scope_uri

__all__ = [
    "ENTRY_SCHEMA",
    "KEYS_DIR",
    "KEY_SCHEMA_VERSION",
    "RUN_ID_TOKEN",
    "CacheEntry",
    "CachedOutput",
    "InputContent",
    "KeyComponents",
    "Mismatch",
    "MismatchReason",
    "ObjectFacts",
    "StepIdentity",
    "cache_key",
    "differing",
    "encode",
    "entry_uri",
    "key_record_uri",
    "mismatches",
    "object_uri",
    "scope_segment",
    "scope_uri",
]
