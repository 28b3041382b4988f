"""The stage cache in the workflow layer: its wave layer and its coordinator workflows.

- `layer.py`: `StageCache`, the wave layer that may serve a wave without launching it.
- `flights.py`: joining or leading a cache flight (one launch per key across runs).
- `flight_workflow.py`: `NpaflowCacheFlight`, the long-lived flight coordinator.
- `admin_workflow.py`: `NpaflowCacheAdmin`, `npaflow cache list | explain | purge`.
"""
