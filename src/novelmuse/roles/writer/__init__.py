"""The writer role: paragraph-targeted rewrites (hard rules, repair, polish), whole-chapter rewrites, and the
"write" task that writes a chapter from its WriterContext (seed 003).

The editorial loop uses the tasks `PARAGRAPHS`, `REPAIR`, `POLISH`, `REWRITE`; `novelmuse.writing` builds the
WriterContext and the tasks `WRITE` / `WRITE_FINAL` (via `render_write`) turn it into the write call.
"""

from ._tasks import (
    PARAGRAPHS,
    POLISH,
    REPAIR,
    REWRITE,
    ParagraphsRequest,
    PolishRequest,
    RepairRequest,
    RewriteRequest,
    WriterRules,
    forbidden_in,
    numbered,
    paragraph_contract,
    rewrite_contract,
)
from ._write import (
    SCENE_WORDS,
    TASK,
    WRITE,
    WRITE_FINAL,
    RenderedWrite,
    WriteRequest,
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
    "PARAGRAPHS",
    "POLISH",
    "REPAIR",
    "REWRITE",
    "SCENE_WORDS",
    "TASK",
    "WRITE",
    "WRITE_FINAL",
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
    "ParagraphsRequest",
    "PolishRequest",
    "PriorChapter",
    "RenderedWrite",
    "RepairRequest",
    "RewriteRequest",
    "WriteRequest",
    "WriterContext",
    "WriterRules",
    "forbidden_in",
    "numbered",
    "paragraph_contract",
    "render_write",
    "rewrite_contract",
    "user_text",
    "write_fields",
    "write_prompt_sha256",
    "write_schema",
    "write_schema_sha256",
    "writer_visible_text",
]
