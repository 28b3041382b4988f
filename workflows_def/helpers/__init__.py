"""Small helper workflows the CLI starts on a worker's queue (workers hold the credentials).

- `logs.py`: `NpaflowJobLogs`, a job's log tail.
- `artifacts.py`: `NpaflowArtifacts`, a run's recorded artifacts.
- `report.py`: `NpaflowRunReport`, a run's HTML report.
- `run_waves.py`: `NpaflowRunWaves`, a page of an ended run's wave attempts from its ledger.
- `ledger_repair.py`: `NpaflowLedgerRepair`, a ledger rebuilt from a run's history.
- `reconcile.py`: `NpaflowReconcileRun`, the orphan and ledger sweeps' per-run repair.
"""
