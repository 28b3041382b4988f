"""GPU quota pools shared by a team (DESIGN 21): checked first as arithmetic, enforced at every launch.

Front door. `models` holds the pool's documents (config, claims, leases,
answers, status); `leases` a lease's vocabulary (its typed id, its states and the
moves between them, the pool's verdict); `book` is the pool's bookkeeping, served by priority, then
weighted fair share, then first come first served. Pure: the pool itself is a
Temporal workflow (`workflows_def/quota/pool_workflow.py`), a run's side is
`workflows_def/quota/layer.py`, and the CLI is `npaflow quota`.
"""

from npaflow.quota.book import HALF_LIFE_SECONDS, PoolBook
from npaflow.quota.models import (
    DEFAULT_PRIORITY,
    DEFAULT_TEAM,
    Lease,
    LeaseAnswer,
    LeaseRequest,
    PoolCarry,
    PoolConfig,
    PoolStatus,
    QuotaClaim,
    ReleaseAnswer,
    ReleaseRun,
    SpentRelease,
    TeamUsage,
    accelerator_problem,
    name_problem,
)

__all__ = [
    "DEFAULT_PRIORITY",
    "DEFAULT_TEAM",
    "HALF_LIFE_SECONDS",
    "Lease",
    "LeaseAnswer",
    "LeaseRequest",
    "PoolBook",
    "PoolCarry",
    "PoolConfig",
    "PoolStatus",
    "QuotaClaim",
    "ReleaseAnswer",
    "ReleaseRun",
    "SpentRelease",
    "TeamUsage",
    "accelerator_problem",
    "name_problem",
]
