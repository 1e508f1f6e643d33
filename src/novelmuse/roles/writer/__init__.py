"""The writer role: paragraph-targeted rewrites (hard rules, repair, polish), whole-chapter rewrites, and the
"write" task that writes a chapter from its WriterContext (seed 003).

The editorial loop uses the rewrite prompts in this folder; `novelmuse.writing` builds the WriterContext and
`render_write` turns it into the write task's messages.
"""

from ._write import (
    SCENE_WORDS,
    TASK,
    RenderedWrite,
    render_write,
    user_text,
    write_fields,
    write_prompt_sha256,
    write_schema,
    write_schema_sha256,
    writer_visible_text,
)
from .context import CONTEXT_SCHEMA_VERSION, Excerpt, FactLine, OutlineLine, PriorChapter, WriterContext
from .schema import (
    ChapterDraft,
    ChapterRewrite,
    DeclaredFact,
    EvidenceRequest,
    FinalChapterDraft,
    ParagraphEdit,
    ParagraphEdits,
)

__all__ = [
    "CONTEXT_SCHEMA_VERSION",
    "SCENE_WORDS",
    "TASK",
    "ChapterDraft",
    "ChapterRewrite",
    "DeclaredFact",
    "EvidenceRequest",
    "Excerpt",
    "FactLine",
    "FinalChapterDraft",
    "OutlineLine",
    "ParagraphEdit",
    "ParagraphEdits",
    "PriorChapter",
    "RenderedWrite",
    "WriterContext",
    "render_write",
    "user_text",
    "write_fields",
    "write_prompt_sha256",
    "write_schema",
    "write_schema_sha256",
    "writer_visible_text",
]
