"""The getting-started walkthrough ("Your own novel") works exactly as written, on 红楼梦 (vendored).

Its shell blocks are run command by command in a real shell, with the real `muse`; a command's expected exit code
is the `# exit N` in its comment (0 without one). Its one TOML block is the edit the text asks for in book.toml.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import HONGLOU

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def walkthrough() -> list[tuple[str, str]]:
    """The (language, text) of every code block of the section "Your own novel", in order."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Your own novel", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(section)]


def commands(block: str) -> list[tuple[str, int]]:
    """The block's commands with their expected exit codes; a heredoc stays with the command that reads it."""
    out: list[tuple[str, int]] = []
    lines = block.splitlines()
    while lines:
        line = lines.pop(0)
        command, _, comment = line.partition("  #")
        expected = re.search(r"exit (\d+)", comment)
        heredoc = re.search(r"<<'(\w+)'", command)
        if heredoc:
            body = []
            while lines and lines[0] != heredoc.group(1):
                body.append(lines.pop(0))
            body.append(lines.pop(0))
            command = "\n".join([command, *body])
        out.append((command.strip(), int(expected.group(1)) if expected else 0))
    return out


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    shutil.copyfile(HONGLOU, tmp_path / "红楼梦.txt")
    muse_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{muse_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "MUSE_CONFIG": str(tmp_path / "no-user-config.toml"),
        "COLUMNS": "120",
    }
    cwd = tmp_path
    blocks = walkthrough()
    assert [lang for lang, _ in blocks][:3] == ["sh", "toml", "sh"], "the walkthrough's shape changed: update this test"
    ran: list[str] = []
    for lang, block in blocks:
        if lang == "toml":  # "change the [chapters] table to …"
            book_toml = cwd / "book.toml"
            current = book_toml.read_text(encoding="utf-8")
            edited, n = re.subn(r"^\[chapters\]\n(?:\w+ = .*\n)*", block, current, flags=re.MULTILINE)
            assert n == 1, "book.toml as `muse init` writes it has one [chapters] table"
            book_toml.write_text(edited, encoding="utf-8")
            continue
        assert lang == "sh"
        for command, expected in commands(block):
            if command.startswith("cd "):
                cwd = cwd / command.removeprefix("cd ").strip()
                continue
            proc = subprocess.run(
                ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
            )
            assert proc.returncode == expected, (
                f"`{command}` exited {proc.returncode}, the page says {expected}:\n"
                f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
            assert "Traceback" not in proc.stderr
            ran.append(command.split()[1] if command.startswith("muse ") else command.split()[0])
    # every step the page promises was run: init → import → check → rules → sync → search → status → report → export
    for step in ("init", "import", "check", "rules", "sync", "search", "status", "report", "export"):
        assert step in ran, step
    assert (cwd / "红楼梦.epub").is_file()
    assert (tmp_path / "红楼梦-导出.txt").read_bytes() == (tmp_path / "红楼梦.txt").read_bytes()
