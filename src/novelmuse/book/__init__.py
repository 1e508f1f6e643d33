"""The novel project on disk: find it, load and validate book.toml, list and read chapters, safe writes."""

from ._config import (
    ROLE_NAMES,
    AnthropicProviderConfig,
    BookConfig,
    Budget,
    CallPolicy,
    ChapterLimits,
    ClaudeCliProviderConfig,
    MemoryConfig,
    OpenAIProviderConfig,
    Price,
    ProviderConfig,
    ReviewConfig,
    ScriptedProviderConfig,
    load_config,
    user_config_path,
)
from ._files import atomic_write_bytes, atomic_write_text
from ._project import BOOK_FILE, Book, Chapter, find_book, parse_chapter_file

__all__ = [
    "BOOK_FILE",
    "ROLE_NAMES",
    "AnthropicProviderConfig",
    "Book",
    "BookConfig",
    "Budget",
    "CallPolicy",
    "Chapter",
    "ChapterLimits",
    "ClaudeCliProviderConfig",
    "MemoryConfig",
    "OpenAIProviderConfig",
    "Price",
    "ProviderConfig",
    "ReviewConfig",
    "ScriptedProviderConfig",
    "atomic_write_bytes",
    "atomic_write_text",
    "find_book",
    "load_config",
    "parse_chapter_file",
    "user_config_path",
]
