"""Backends that run wave jobs: local processes (local/), SkyPilot managed jobs through its Python SDK."""
