"""Fixtures shared by the integration and e2e tiers (servers start only when a test asks)."""

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
