"""Fixtures shared by the integration and e2e tiers (servers start only when a test asks).

The longest files run first: the two test processes take files in collection order
(`--dist loadfile --no-loadscope-reorder`), so a long file collected late would run
alone at the end while the other process idles. Longest first, they finish together.
"""

import pytest

from tests.harness import (
    env,
    fake,
    fake_sky,
    fake_sky_harness,
    harness,
    home,
    local_harness,
    no_worker_process_outlives_its_test,
    payloads_under_the_warning,
    s3_server,
    sky_harness,
    sky_server,
)

__all__ = [
    "env",
    "fake",
    "fake_sky",
    "fake_sky_harness",
    "harness",
    "home",
    "local_harness",
    "no_worker_process_outlives_its_test",
    "payloads_under_the_warning",
    "s3_server",
    "sky_harness",
    "sky_server",
]

#: Files that take minutes, longest first (as `pytest --durations=30` measured them).
LONGEST_FIRST = (
    "tests/integration/test_skypilot_live_server.py",
    "tests/e2e/test_long_loops.py",
    "tests/integration/test_local_faults.py",
    "tests/integration/test_gpu_quotas.py",
    "tests/e2e/test_wide_runs.py",
    "tests/e2e/test_wheel_install.py",
    "tests/integration/test_stage_cache.py",
    "tests/integration/test_crash_and_replay.py",
    "tests/integration/test_scale_out.py",
    "tests/e2e/test_cli_quota.py",
    "tests/e2e/test_bounded_inputs.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the longest files first (a stable sort: every other test keeps its place)."""
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
