"""The sandbox around the isolated Claude CLI process (seed 003: sandbox-exec 边界).

The process runs with its cwd, HOME and TMPDIR inside one fresh 0700 directory. A sandbox adds a
filesystem boundary: on Linux bubblewrap (`bwrap`) shows the process only the system's read-only
runtime directories, the CLI's own directory and the work directory (read-write); on macOS
`sandbox-exec` applies an SBPL profile with the same shape. Network stays open (the model call needs
it; neither tool can restrict it to one host, which is a documented limit).

Everything here is pure (argv and profile construction) except `find_sandbox` and `probe_bwrap`, so the
shape of the boundary is tested without either tool installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

SandboxKind = Literal["bwrap", "sandbox-exec", "none"]

#: Read-only system paths a dynamically linked CLI (node, or a native build) needs on Linux: the
#: runtime, the dynamic loader, TLS roots, name resolution and the user database. Missing ones are skipped.
LINUX_READ_PATHS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
)

#: Read-only system paths on macOS (the SBPL profile also allows metadata reads everywhere, which
#: path resolution needs; file contents outside these stay denied).
MACOS_READ_PATHS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db/timezone",
    "/dev",
)


def bwrap_argv(
    bwrap: str,
    *,
    workdir: Path,
    cwd: Path,
    read_only: Sequence[Path | str],
    command: Sequence[str],
    system_paths: Sequence[str] = LINUX_READ_PATHS,
) -> list[str]:
    """The bubblewrap command line that runs `command` inside the boundary.

    New namespaces for everything but the network; the process dies with its parent; only the
    system runtime and `read_only` paths are visible (read-only) and `workdir` is the one writable
    place. The caller's whitelisted environment passes through unchanged.
    """
    argv = [bwrap, "--unshare-all", "--share-net", "--die-with-parent", "--new-session"]
    for p in system_paths:
        argv += ["--ro-bind-try", p, p]
    for extra in read_only:
        argv += ["--ro-bind", str(extra), str(extra)]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--bind", str(workdir), str(workdir), "--chdir", str(cwd), "--"]
    return argv + list(command)


def _sbpl_string(value: str) -> str:
    """A path quoted as an SBPL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sandbox_exec_profile(
    *, workdir: Path, read_only: Sequence[Path | str], system_paths: Sequence[str] = MACOS_READ_PATHS
) -> str:
    """The SBPL profile for `sandbox-exec -p`: deny by default; read the runtime, write only `workdir`.

    Metadata reads are allowed everywhere (the dynamic loader and path resolution stat parents);
    file contents outside the listed paths are denied. Outbound network is allowed for the model call.
    """
    reads = " ".join(f"(subpath {_sbpl_string(str(p))})" for p in [*system_paths, *map(str, read_only)])
    work = _sbpl_string(str(workdir))
    return "\n".join(
        [
            "(version 1)",
            "(deny default)",
            "(allow process-exec)",
            "(allow process-fork)",
            "(allow signal (target same-sandbox))",
            "(allow sysctl-read)",
            "(allow mach-lookup)",
            "(allow ipc-posix-shm)",
            "(allow system-socket)",
            "(allow network-outbound)",
            "(allow file-read-metadata)",
            f"(allow file-read* {reads})",
            f"(allow file-read* file-write* (subpath {work}))",
            '(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero"))',
            "",
        ]
    )


def sandbox_exec_argv(
    sandbox_exec: str, *, workdir: Path, read_only: Sequence[Path | str], command: Sequence[str]
) -> list[str]:
    """The `sandbox-exec -p PROFILE -- command…` command line."""
    return [sandbox_exec, "-p", sandbox_exec_profile(workdir=workdir, read_only=read_only), *command]


def wrap_command(
    kind: SandboxKind,
    tool: str | None,
    *,
    workdir: Path,
    cwd: Path,
    read_only: Sequence[Path | str],
    command: Sequence[str],
) -> list[str]:
    """`command` wrapped in the chosen sandbox (unchanged for "none")."""
    if kind == "none":
        return list(command)
    if tool is None:
        raise ValueError(f"sandbox {kind} needs its executable")
    if kind == "bwrap":
        return bwrap_argv(tool, workdir=workdir, cwd=cwd, read_only=read_only, command=command)
    return sandbox_exec_argv(tool, workdir=workdir, read_only=read_only, command=command)


def find_sandbox(
    platform: str, path_env: str | None, which: Callable[..., str | None] = shutil.which
) -> tuple[SandboxKind, str | None]:
    """Which sandbox this machine offers: bwrap on Linux, sandbox-exec on macOS, else none."""
    if platform.startswith("linux"):
        exe = which("bwrap", path=path_env)
        return ("bwrap", exe) if exe else ("none", None)
    if platform == "darwin":
        exe = which("sandbox-exec", path=path_env)
        if exe is None and os.path.exists("/usr/bin/sandbox-exec"):
            exe = "/usr/bin/sandbox-exec"
        return ("sandbox-exec", exe) if exe else ("none", None)
    return "none", None


def probe_bwrap(bwrap: str, workdir: Path, env: dict[str, str], timeout_s: float = 10.0) -> bool:
    """Whether bwrap can actually build the boundary here (user namespaces may be disabled)."""
    true = shutil.which("true", path=env.get("PATH")) or "/bin/true"
    argv = bwrap_argv(bwrap, workdir=workdir, cwd=workdir, read_only=[], command=[true])
    try:
        done = subprocess.run(argv, env=env, cwd=workdir, capture_output=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
