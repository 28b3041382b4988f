"""npaflow: the npa.workflow/v0.0.1 spec language and everything pure around it."""

__version__ = "0.1.0"
