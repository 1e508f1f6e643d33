"""Provider factory: a provider kind → its class, imported lazily (an SDK is loaded only when used).

Every provider class is constructed as ``Cls(name, config, book_root)`` with the matching
`book.*ProviderConfig`, and satisfies the `Provider` protocol of `_types`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import cast

from ..book import ProviderConfig
from ..errors import InputError
from ._types import Provider

PROVIDER_CLASSES: dict[str, tuple[str, str]] = {
    "openai": ("._provider_openai", "OpenAIProvider"),
    **dict.fromkeys(("ollama", "lmstudio", "llamacpp", "vllm"), ("._provider_openai", "OpenAIProvider")),
    "anthropic": ("._provider_anthropic", "AnthropicProvider"),
    "claude-cli": ("._provider_cli", "ClaudeCliProvider"),
    "scripted": ("._provider_scripted", "ScriptedProvider"),
}


def create_provider(name: str, config: ProviderConfig, book_root: Path) -> Provider:
    """Build the provider `name` of its configured kind (lazily importing its module)."""
    module_name, class_name = PROVIDER_CLASSES[config.kind]
    try:
        module = importlib.import_module(module_name, __package__)
        cls = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise InputError(
            "MODEL_PROVIDER_UNAVAILABLE",
            f"provider kind {config.kind!r} is not available ({exc})",
            f"[providers.{name}]",
            "install novelmuse with its provider dependencies, or use another provider kind",
        ) from exc
    return cast(Provider, cls(name, config, book_root))
