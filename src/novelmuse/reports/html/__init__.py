"""The static HTML report (`muse report`): a book overview, one page per chapter with every finding
highlighted at its exact offsets, the story memory and the judge panels — self-contained pages (CSS, JS and
SVG plots inline; no network) rendered from Jinja2 template files with autoescaping on.
"""

from ._plots import cost_plot
from ._render import (
    SECTIONS,
    ReportResult,
    Section,
    build_report,
    chapter_context,
    common_context,
    section_context,
    template_env,
)

__all__ = [
    "SECTIONS",
    "ReportResult",
    "Section",
    "build_report",
    "chapter_context",
    "common_context",
    "cost_plot",
    "section_context",
    "template_env",
]
