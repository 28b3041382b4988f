"""Fixtures shared by the integration and e2e tiers (servers start only when a test asks)."""

from tests.harness import env, fake, harness, home, local_harness, s3_server

__all__ = ["env", "fake", "harness", "home", "local_harness", "s3_server"]
