"""One folder per LLM role: prompt template files + output schema + contract checks, as role tasks.

Roles: writer, reviewer, editor, arbiter, extractor, normalizer, detector, judge, outliner (and `common`: the
models-check probe and the correction message every role's calls share). Each folder declares its tasks
(`RoleTask`): a task renders a typed request into a `llm.TaskCall` — every message sent to a model is built
here — and reports its `TaskRef` (role, task, version, prompt and schema sha256) without rendering. Template
files are pinned in ``roles/prompts.yaml`` (PROMPT_HASH_MISMATCH when edited without a version bump).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._quotes import QUOTE_MIN_CHARS, chapter_quote, normalized
    from ._task import RoleTask, correction
    from ._tasks import all_tasks, current_ref, declared_tasks

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "QUOTE_MIN_CHARS",
    "RoleTask",
    "all_tasks",
    "chapter_quote",
    "correction",
    "current_ref",
    "declared_tasks",
    "normalized",
]
