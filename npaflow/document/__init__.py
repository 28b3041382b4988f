"""The spec document itself: its pydantic models (models.py) and the located YAML (yaml_source.py).

The lowest layer of the spec language: the catalog, the run context and the
loader build on it, and it imports none of them. Its models have one front
door, `npaflow.spec` (which also loads and validates); only the layers below
the loader import `npaflow.document.models` directly.
"""
