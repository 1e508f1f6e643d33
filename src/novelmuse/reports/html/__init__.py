"""The static HTML report (`muse report`): a book overview, one page per chapter with every finding
highlighted at its exact offsets, the story memory and the judge panels — self-contained pages (CSS, JS and
SVG plots inline; no network) rendered from Jinja2 template files with autoescaping on.
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_getattr

if TYPE_CHECKING:  # imported on first use: `muse status` needs the chapter rows, not the report's loaders (replay…)
    from ._diff import char_diff
    from ._env import common_context, template_env
    from ._plots import cost_plot
    from ._render import SECTIONS, ReportResult, Section, build_report, chapter_context, memory_context, section_context

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "SECTIONS",
    "ReportResult",
    "Section",
    "build_report",
    "chapter_context",
    "char_diff",
    "common_context",
    "cost_plot",
    "memory_context",
    "section_context",
    "template_env",
]
