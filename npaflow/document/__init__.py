"""The spec document itself: its pydantic models (models.py) and the located YAML (yaml_source.py).

The lowest layer of the spec language: the catalog, the run context and the
loader build on it, and it imports none of them. It re-exports nothing: the one
front door that re-exports the models is `npaflow.spec` (which also loads and
validates them); code that needs only a model imports `npaflow.document.models`.
"""
