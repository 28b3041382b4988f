"""GPU quota pools in the workflow layer: the lease layer and the pool coordinator.

- `layer.py`: `QuotaLeases`, the wave layer that holds a lease around a wave's attempts.
- `pool_workflow.py`: `NpaflowQuotaPool`, the long-lived pool that grants leases in order.
"""
