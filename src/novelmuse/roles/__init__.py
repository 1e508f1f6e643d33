"""One folder per LLM role: prompt template files + output schema + contract checks.

Roles: writer, reviewer, editor, arbiter, extractor, normalizer, detector, judge. Services import a
role's schema and prompt from here and call the model only through `llm`.
"""

from ._prompts import PromptTemplate, load_prompt

__all__ = ["PromptTemplate", "load_prompt"]
