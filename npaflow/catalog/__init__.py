"""The tool catalog: toolRef entries loaded from `npa.catalog/v1` YAML."""

from npaflow.catalog.load import (
    load_builtin_catalog,
    load_catalog_from_path,
    load_catalog_from_str,
    load_catalogs,
)
from npaflow.catalog.models import ToolCatalog, ToolEntry

__all__ = [
    "ToolCatalog",
    "ToolEntry",
    "load_builtin_catalog",
    "load_catalog_from_path",
    "load_catalog_from_str",
    "load_catalogs",
]
