"""Image preflight on the user's machine (DESIGN 22): credentials, registries' answers, digests kept a while.

Front door. `checked_binding` is what `submit`, `schedule create` and `resume
--spec` start a run with (every problem at once, exit 2); `resolved_binding`
shows digests in `render` and `plan-spec`; `preflight` and `images_of` serve
`preflight-images`. Inside: `credentials` (Docker's config.json, helpers, the
environment), `registry` (the OCI distribution API), `digest_cache`.
"""

from npaflow.cli.images.checked import checked_binding, problems_text, resolved_binding
from npaflow.cli.images.preflight import images_of, preflight, preflight_async

__all__ = [
    "checked_binding",
    "images_of",
    "preflight",
    "preflight_async",
    "problems_text",
    "resolved_binding",
]
