"""The error registry (src/novelmuse/errors.toml) declares every code the source uses, and nothing else.

A code is a string literal shaped like one (``RULES_SYNTAX``); codes made from a file kind (``f"{kind}_READ"``,
``f"{code_prefix}_SYNTAX"``) are checked for every kind the source passes. An error raised through one of the
error classes must end the way the registry says (one bad input, one exit code).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from novelmuse.errors import AREAS, registry

SRC = Path(__file__).resolve().parents[1] / "src" / "novelmuse"
CODE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

#: Literals shaped like codes that are not codes: environment variables, os attributes, the Claude CLI's settings.
NOT_CODES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "MUSE_CONFIG",
        "MUSE_DEBUG",
        "XDG_CONFIG_HOME",
        "PYDANTIC_DISABLE_PLUGINS",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "CLAUDE_CODE_MAX_RETRIES",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_TELEMETRY",
        "O_CLOEXEC",
        "O_DIRECTORY",
        "O_NOFOLLOW",
        "O_NONBLOCK",
        "TYPE_CHECKING",
        "CONFIG_BASE_URL",  # a models-check hint's key
    }
)
#: File kinds: `read_user_file(kind=K)` reports K_READ and K_TOO_LARGE; `load_yaml_lines(code_prefix=P)` P_SYNTAX.
KIND_SUFFIXES = {"kind": ("_READ", "_TOO_LARGE"), "code_prefix": ("_SYNTAX", "_READ", "_TOO_LARGE")}
#: How each error class ends a command.
CLASS_OUTCOMES = {
    "InputError": "bad_input",
    "FailedClosed": "failed_closed",
    "NotEvaluated": "not_evaluated",
    "ModelCallFailed": "failed_closed",
    "VaultError": "failed_closed",
    "StoreWriteError": "bad_input",
}


def _trees() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _all_names(tree: ast.Module) -> set[int]:
    """ids of the string constants listed in `__all__` (public names, not codes)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            out |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    return out


def _kind(node: ast.AST) -> str | None:
    """The file kind a `kind=` / `code_prefix=` keyword passes (an upper-case literal), else None."""
    if isinstance(node, ast.keyword) and node.arg in KIND_SUFFIXES and isinstance(node.value, ast.Constant):
        value = node.value.value
        return value if isinstance(value, str) and re.fullmatch(r"[A-Z][A-Z_]*", value) else None
    return None


def used_codes() -> dict[str, set[str]]:
    """Every code the source uses (a literal, or a file kind's family), with where."""
    found: dict[str, set[str]] = {}
    for path, tree in _trees():
        skip = _all_names(tree)
        where = str(path.relative_to(SRC))
        for node in ast.walk(tree):
            if kind := _kind(node):
                assert isinstance(node, ast.keyword)
                skip.add(id(node.value))  # a kind is a prefix, not a code
                for suffix in KIND_SUFFIXES[node.arg or ""]:
                    found.setdefault(f"{kind}{suffix}", set()).add(where)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
                and CODE.match(node.value)
                and node.value not in NOT_CODES
            ):
                found.setdefault(node.value, set()).add(where)
    return found


def test_every_code_the_source_uses_is_registered() -> None:
    missing = {code: sorted(where) for code, where in used_codes().items() if code not in registry()}
    assert not missing, (
        "codes used in src/novelmuse but not declared in src/novelmuse/errors.toml — add each with its area, exit "
        f"(outcome), cause and fix (or, if it is not a code, add it to NOT_CODES here): {missing}"
    )


def test_every_registered_code_is_used() -> None:
    used = used_codes()
    source = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    stale = [code for code in registry() if code not in used and code not in source]
    assert not stale, f"registered in errors.toml but used nowhere in src/novelmuse (remove them): {stale}"


def test_error_classes_end_as_registered() -> None:
    """`InputError("X", …)` exits 2, so the registry must say bad_input for X, and so on for each class."""
    wrong: list[str] = []
    codes = registry()
    for path, tree in _trees():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
                continue
            outcome = CLASS_OUTCOMES.get(node.func.id)
            first = node.args[0]
            if outcome and isinstance(first, ast.Constant) and isinstance(first.value, str):
                entry = codes.get(first.value)
                if entry and entry.outcome != outcome:
                    wrong.append(f"{path.relative_to(SRC)}:{node.lineno} {first.value}: {outcome} ≠ {entry.outcome}")
    assert not wrong, wrong


def test_entries_speak_to_users() -> None:
    for entry in registry().values():
        assert entry.area in AREAS
        text = f"{entry.cause} {entry.fix}"
        assert not re.search(r"\b(seed|issue) ?\d", text, re.IGNORECASE), entry.code
        assert entry.cause.endswith((".", ")")) and entry.fix.endswith((".", ")")), entry.code
