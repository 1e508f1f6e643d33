"""YAML author files with line numbers: every mapping and sequence remembers where it was written.

Author files (canon cards, fine outlines) must fail with errors that name the file AND the line. PyYAML's
composed nodes carry `start_mark`; this loader keeps those lines on the constructed values, and
`line_of` maps a pydantic error location (``("hard_events", 2, "id")``) back to the nearest line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import InputError
from ._userfile import parsing_user_file, read_user_file

M = TypeVar("M", bound=BaseModel)


class LineDict(dict[Any, Any]):
    """A YAML mapping: `line` is where it starts, `key_lines[key]` where each key was written (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A YAML sequence: `line` is where it starts, `item_lines[i]` where item i starts (1-based)."""

    line: int = 0
    item_lines: list[int]


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int, first: int):
        super().__init__(f"duplicate key {key!r} (first written at line {first})")
        self.line = line


# libyaml's parser when PyYAML was built with it (the pure-Python one is ~10× slower: 500 cards took seconds);
# both give the nodes' start marks this loader keeps.
_SafeLoaderBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoaderBase):  # type: ignore[valid-type,misc]
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool) and key is not None:
            key = str(key)
        line = key_node.start_mark.line + 1
        if key in out.key_lines:
            raise _DuplicateKey(key, line, out.key_lines[key])
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = line
    return out


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)

#: The most values a YAML document may stand for once its aliases are expanded. An author file or a script holds
#: thousands; aliases of aliases ("billion laughs") stand for billions from a few lines, and any code that walks
#: the result (validation, JSON) would then run without end.
MAX_YAML_EXPANDED_NODES = 1_000_000


class YamlTooLarge(yaml.YAMLError):
    """A document whose aliases expand beyond `MAX_YAML_EXPANDED_NODES` values (refused before it is built)."""


def load_bounded_yaml(text: str, loader: type[yaml.SafeLoader] = _SafeLoaderBase) -> Any:
    """`yaml.load(text, Loader=loader)`, refusing (YamlTooLarge) a document that would stand for more than
    `MAX_YAML_EXPANDED_NODES` values once its aliases are expanded — measured on the composed node graph, where an
    alias is a shared node, before anything is constructed."""
    parser = loader(text)
    try:
        node = parser.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return parser.construct_document(node)
    finally:
        parser.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _expanded_size(root: yaml.Node) -> int:
    """How many values `root` stands for with every alias expanded (a shared node counted once per use); a node
    that contains itself (a recursive alias) is refused too: nothing could walk it to an end."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            total = 1 + sum(sizes[id(c)] for c in _children(node))
            if total > MAX_YAML_EXPANDED_NODES:
                raise YamlTooLarge(
                    f"its aliases expand to more than {MAX_YAML_EXPANDED_NODES:,} values (aliases of aliases?)"
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise YamlTooLarge("an alias refers to a value that contains it (a recursive structure)")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    return sizes[id(root)]


def load_yaml_lines(path: Path, *, code_prefix: str, text: str | None = None) -> Any:
    """Parse one YAML file keeping line numbers; syntax errors become `<PREFIX>_SYNTAX` naming file:line."""
    if text is None:
        try:
            text = read_user_file(path, what="YAML file", kind=code_prefix).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{code_prefix}_SYNTAX", f"not UTF-8 (byte {exc.start})", str(path), "save the file as UTF-8"
            ) from exc
    try:
        with parsing_user_file(f"{code_prefix}_SYNTAX", str(path), "YAML file"):
            return load_bounded_yaml(text, _LineLoader)
    except _DuplicateKey as exc:
        raise InputError(f"{code_prefix}_SYNTAX", str(exc), f"{path}:{exc.line}", "remove one of the two keys") from exc
    except YamlTooLarge as exc:
        raise InputError(f"{code_prefix}_SYNTAX", f"refused: {exc}", str(path), "write the values out") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(
            f"{code_prefix}_SYNTAX", f"invalid YAML ({exc.problem or exc})", where, "fix the YAML syntax"
        ) from exc
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (control characters, NUL)
        line = text.count("\n", 0, exc.position) + 1
        what = (
            f"invalid YAML (character U+{exc.character:04X} is not allowed)"
            if isinstance(exc.character, int)
            else (f"invalid YAML ({exc.reason})")
        )
        raise InputError(f"{code_prefix}_SYNTAX", what, f"{path}:{line}", "remove the character") from exc
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__  # one error line, always
        raise InputError(f"{code_prefix}_SYNTAX", f"invalid YAML ({first})", str(path), "fix the YAML syntax") from exc


def line_of(data: Any, loc: tuple[int | str, ...]) -> int:
    """The line of the deepest value along `loc` that carries one (1 when nothing does)."""
    line = getattr(data, "line", 1) or 1
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
        line = getattr(node, "line", line) or line
    return line


def validate_located(model: type[M], data: Any, path: Path, *, code: str, fix: str) -> M:
    """Validate `data` with a pydantic model; the first error becomes `code` naming file:line and the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = ".".join(str(p) for p in loc) or "(top level)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        msg = first["msg"].removeprefix("Value error, ")
        raise InputError(code, f"{msg} at {field}{more}", f"{path}:{line_of(data, loc)}", fix) from exc
