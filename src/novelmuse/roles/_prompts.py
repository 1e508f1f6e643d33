"""Prompt templates: text files beside each role's schema, hashed into every receipt."""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..text import sha256_hex


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template file (``roles/<role>/<name>.txt``) and its sha256.

    Placeholders are ``$name`` / ``${name}`` (string.Template), so JSON examples with braces in a
    prompt need no escaping. Rendering fails on a missing field rather than sending a hole.
    """

    role: str
    name: str
    text: str
    sha256: str

    def render(self, **fields: object) -> str:
        """Fill every placeholder; a missing one raises KeyError (a bug, caught by tests)."""
        return string.Template(self.text).substitute({k: str(v) for k, v in fields.items()})


@cache
def load_prompt(role: str, name: str = "prompt") -> PromptTemplate:
    """Load ``roles/<role>/<name>.txt`` from the installed package."""
    text = (resources.files("novelmuse.roles") / role / f"{name}.txt").read_text(encoding="utf-8")
    return PromptTemplate(role, name, text, sha256_hex(text))
