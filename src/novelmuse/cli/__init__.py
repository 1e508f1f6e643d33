"""The `muse` command line: thin — parse arguments, call one service, render the result, and map how it ended
(an `errors.Outcome`) to the exit code through `errors.exit_code`, the only place exit codes are decided."""

from __future__ import annotations

import errno
import os
import sys
import traceback

import typer

from ..errors import FailedClosed, InputError, MuseError, Outcome, exit_code

__all__ = ["main"]

# No pydantic plugin (another package's `pydantic` entry point) observes what muse validates: it would see chapter
# text and model answers. Discovering plugins also scans every installed package's metadata when the first model
# is built (a few ms of every command's start-up). Set before any command module builds a model.
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "1"


class _Internal(MuseError):
    """A novelmuse bug (an exception nobody classified), reported like any error — never a traceback."""

    outcome: Outcome = "internal"

    def __init__(self, exc: BaseException):
        first = (str(exc).splitlines() or [""])[0]
        super().__init__(
            "INTERNAL",
            f"{type(exc).__name__}: {first}" if first else type(exc).__name__,
            fix="this is a novelmuse bug; rerun with MUSE_DEBUG=1 and report the traceback",
        )


class _Interrupted(MuseError):
    """Ctrl-C: the command stopped where it was; what was done is kept and a rerun resumes."""

    outcome: Outcome = "interrupted"

    def __init__(self) -> None:
        super().__init__("INTERRUPTED", "stopped by the user", fix="rerun the command to resume where it stopped")


#: What the operating system says about a path, as the refusal it is (errno → code, what, how to fix).
_PATH_ERRORS: dict[int, tuple[str, str, str]] = {
    errno.ENAMETOOLONG: ("PATH_TOO_LONG", "the path, or a name in it, is too long", "use a shorter path"),
    errno.ENOTDIR: ("PATH_NOT_A_DIRECTORY", "a part of the path is a file, not a directory", "check the path"),
    errno.ELOOP: ("PATH_LINK_LOOP", "the path goes through symbolic links that loop", "check the links"),
    errno.EISDIR: ("PATH_IS_A_DIRECTORY", "the path is a directory where a file is needed", "name the file"),
    errno.EACCES: ("PATH_PERMISSION", "permission denied", "check the permissions, or use another path"),
    errno.EPERM: ("PATH_PERMISSION", "operation not permitted", "check the permissions, or use another path"),
    errno.EROFS: ("PATH_READ_ONLY", "the file system is read-only", "use a writable place"),
    errno.ENOSPC: ("DISK_FULL", "no space left on the device", "free some space and rerun (what was done is kept)"),
}
_SHOWN_PATH_CHARS = 120


def _os_error(exc: OSError) -> MuseError | None:
    """An OSError about a path the system refuses (too long, through a file, no permission, a full disk) as an
    error naming the path (shortened) — exit 2; None for any other OSError (then it is a bug)."""
    known = _PATH_ERRORS.get(exc.errno or 0)
    if known is None:
        return None
    code, what, fix = known
    path = str(exc.filename) if exc.filename is not None else "a path"
    shown = path if len(path) <= _SHOWN_PATH_CHARS else f"{path[:60]}…{path[-50:]} ({len(path)} characters)"
    kind = FailedClosed if code == "DISK_FULL" else InputError  # a full disk is not the user's input
    return kind(code, f"the system refuses this path: {what}", shown, fix)


def _usage_error(message: str) -> InputError:
    """Typer/click's own usage errors (unknown option or command, missing argument, bad value) as USAGE."""
    return InputError("USAGE", " ".join(message.split()), "command line", "see `muse --help`")


def _wants_json(argv: list[str]) -> bool:
    return "--json" in argv


def _tolerate_narrow_encodings() -> None:
    """On a stream that cannot encode Chinese (PYTHONIOENCODING=ascii, a C locale), escape what it cannot
    show instead of crashing mid-output; BMP characters come out as \\u escapes, which JSON readers decode."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
        if not encoding.startswith(("utf", "gb")) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    """Run `muse`: every failure — a MuseError, a usage error, an interruption, a bug — becomes one
    `error[CODE]: …` line on stderr (and, with --json, the JSON error document on stdout) and its documented
    exit code."""
    _tolerate_narrow_encodings()
    from ._app import app

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rc = app(args=args, prog_name="muse", standalone_mode=False)
    except MuseError as exc:
        return _fail(exc, args)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.TyperException as exc:  # usage errors: unknown option, missing argument, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":  # `muse cards`: the group's own subcommands, not the top level
            context = getattr(exc, "ctx", None)
            if context is not None:
                print(context.get_help())
            else:
                app(args=["--help"], prog_name="muse", standalone_mode=False)
            return exit_code("bad_input")
        return _fail(_usage_error(exc.format_message()), args)
    except (KeyboardInterrupt, typer.Abort):
        return _fail(_Interrupted(), args)
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the system refuses is bad input; any other OSError is a bug
        refused = _os_error(exc)
        if refused is None:
            return _fail(_Internal(exc), args)
        return _fail(refused, args)
    except Exception as exc:  # a bug, not a user error: say so plainly
        if os.environ.get("MUSE_DEBUG"):
            traceback.print_exc()
        return _fail(_Internal(exc), args)
    if rc == exit_code("interrupted"):  # Typer turns Ctrl-C inside a command into exit 130 without a word
        return _fail(_Interrupted(), args)
    return rc if isinstance(rc, int) else 0


def _fail(error: MuseError, args: list[str]) -> int:
    """Report `error` (stderr; with --json also the error document on stdout) and return its exit code."""
    if _wants_json(args):
        from ._common import emit_json

        emit_json({"ok": False, "error": error.to_json()})
    print(error.render(), file=sys.stderr)
    return error.exit_code


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
