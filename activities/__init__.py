"""Every Temporal activity, plus the backends and storage adapters they use."""
