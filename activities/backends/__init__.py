"""Backends that run wave jobs: the local processes backend and the SkyPilot CLI backend."""
