"""A spec named on the command line: the file, `--var`, catalogs, image flags, and how a preview plans."""

from __future__ import annotations

from pydantic import Field

from npaflow.ids import RunId
from npaflow.options.connection import FromFlags


class ImageFlags(FromFlags):
    """`--image`, `--image-override`, `--resolve-images`, `--skip-image-preflight`, `--require-images`."""

    image: str = ""
    image_override: tuple[str, ...] = ()
    resolve_images: bool = False
    skip_image_preflight: bool = False
    require_images: bool = False


class SpecOptions(ImageFlags):
    """`SPEC`, `--var`, `--allow-new-vars`, `--catalog`, `--json`, and the decision a run may assume."""

    spec: str
    var: tuple[str, ...] = ()
    allow_new_vars: bool = False
    catalog: tuple[str, ...] = ()
    as_json: bool = Field(default=False, alias="json")
    assume_decision: str = ""  # `--assume-decision` (plan-spec, render, submit, schedule create)


class PreviewOptions(SpecOptions):
    """`plan-spec` and `render`: the run id, cap and assumed lists a preview plans with."""

    run_id: RunId = RunId("plan-run")
    max_concurrency: int = 0
    assume_items: str | None = None
    quota_pool: str = ""
    waves: bool = False
    format: str = "text"
    out: str | None = None  # `render --out DIR`
