"""SQLite store `.muse/muse.db`: connection, append-only migrations, the chapter registry, ids.

Migrations live in ``store/migrations/NNNN_name.sql``; each capability owns its file
(0001 core, 0002 llm, 0003 memory, 0004 editorial, 0005 judging, …).
"""

from ._chapters import ChapterRecord, register_chapters, registered_chapters
from ._db import connect, transaction, utc_now
from ._ids import new_id

__all__ = [
    "ChapterRecord",
    "connect",
    "new_id",
    "register_chapters",
    "registered_chapters",
    "transaction",
    "utc_now",
]
