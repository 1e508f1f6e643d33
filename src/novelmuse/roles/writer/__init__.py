"""The writer role: paragraph-targeted rewrites (hard rules, repair, polish) and whole-chapter rewrites.

Shared with the writing service later; the editorial loop uses the prompts in this folder.
"""

from .schema import ChapterRewrite, ParagraphEdit, ParagraphEdits

__all__ = ["ChapterRewrite", "ParagraphEdit", "ParagraphEdits"]
