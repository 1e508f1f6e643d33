"""The report's Jinja2 environment and what every page's template is given, kept light to import: the studio
builds its environment at start-up, before any page needs the report's loaders (and the services they import)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jinja2 import BaseLoader, ChoiceLoader, Environment, PackageLoader, StrictUndefined, select_autoescape

from ... import __version__
from ...book import Book

KINDS = (  # (side-panel group, mark kind, label) for the chapter page's show/hide switches
    ("rules", "rule", "rules"),
    ("consistency", "consistency", "consistency"),
    ("editor", "editor", "editor"),
    ("judge", "judge", "judges"),
    ("facts", "fact", "facts"),
)


def template_env(loader: BaseLoader | None = None) -> Environment:
    """The report's Jinja2 environment (autoescape on, strict undefined); `loader` comes before the report's own
    templates, so another face (the studio) can render the same pages under its own `base.html`."""
    own = PackageLoader("novelmuse.reports.html", "templates")
    env = Environment(
        loader=own if loader is None else ChoiceLoader([loader, own]),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def common_context(book: Book) -> dict[str, Any]:
    """What every page's template needs besides its own section (title, version, the chapter-page namer)."""
    return {
        "version": __version__,
        "book_title": book.config.book.title,
        "author": book.config.book.author,
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "kinds": KINDS,
        "page_of": page_name,
    }


def page_name(number: int) -> str:
    """The chapter page of chapter `number`, relative to the report's (and the studio's) root."""
    return f"chapters/{number:04d}.html"
