"""SQLite store `.muse/muse.db`: connection, append-only migrations, the chapter registry, ids.

Migrations live in ``store/migrations/NNNN_name.sql``; each capability owns its file
(0001 core, 0002 llm, 0003 memory, 0004 editorial, 0005 judging, …, 0009 texts for the report).
"""

from ._chapters import ChapterRecord, register_chapters, registered_chapters
from ._db import StoreWriteError, connect, transaction, utc_now
from ._findings import cached_findings, store_findings
from ._ids import new_id
from ._reviews import ReviewStatus, latest_reviews
from ._texts import get_texts, put_texts

__all__ = [
    "ChapterRecord",
    "ReviewStatus",
    "StoreWriteError",
    "cached_findings",
    "connect",
    "get_texts",
    "latest_reviews",
    "new_id",
    "put_texts",
    "register_chapters",
    "registered_chapters",
    "store_findings",
    "transaction",
    "utc_now",
]
