"""SkyPilot 0.12 rendering of waves: pipelines, JobGroups, the placeholder guard."""

from npaflow.render.guard import assert_no_unresolved_placeholders
from npaflow.render.resources import kubernetes_config, normalize_resources
from npaflow.render.wave import (
    LAUNCH_TOKEN_KEY,
    RenderedWave,
    RenderOptions,
    logical_launch_id,
    render_wave,
)
from npaflow.render.wave_yaml import dump_wave_yaml, load_wave_yaml
from npaflow.waves import sanitize_task_name

__all__ = [
    "LAUNCH_TOKEN_KEY",
    "RenderOptions",
    "RenderedWave",
    "assert_no_unresolved_placeholders",
    "dump_wave_yaml",
    "kubernetes_config",
    "load_wave_yaml",
    "logical_launch_id",
    "normalize_resources",
    "render_wave",
    "sanitize_task_name",
]
