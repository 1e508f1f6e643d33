"""The `muse` command line: thin — parse arguments, call one service, render the result, and map how it ended
(an `errors.Outcome`) to the exit code through `errors.exit_code`, the only place exit codes are decided."""

from __future__ import annotations

import os
import sys
import traceback

import typer

from ..errors import MuseError, exit_code

__all__ = ["main"]

_INTERRUPTED = "error[INTERRUPTED]: stopped by the user — rerun the command to resume where it stopped"


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
    """Run `muse`: every MuseError becomes one `error[CODE]: …` line and its documented exit code."""
    _tolerate_narrow_encodings()
    from ._app import app
    from ._common import emit_json

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rc = app(args=args, prog_name="muse", standalone_mode=False)
    except MuseError as exc:
        if _wants_json(args):
            emit_json({"ok": False, "error": exc.to_json()})
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.TyperException as exc:  # usage errors: unknown option, missing argument, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":
            app(args=["--help"], prog_name="muse", standalone_mode=False)
            return exit_code("bad_input")
        print(f"error[USAGE]: {exc.format_message()} — see `muse --help`", file=sys.stderr)
        return exit_code("bad_input")
    except (KeyboardInterrupt, typer.Abort):
        print(_INTERRUPTED, file=sys.stderr)
        return exit_code("interrupted")
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not a user error: say so plainly
        if os.environ.get("MUSE_DEBUG"):
            traceback.print_exc()
        print(
            f"error[INTERNAL]: {type(exc).__name__}: {exc} — this is a novelmuse bug; rerun with MUSE_DEBUG=1 "
            "and report the traceback",
            file=sys.stderr,
        )
        return exit_code("internal")
    if rc == exit_code("interrupted"):  # Typer turns Ctrl-C inside a command into exit 130 without a word
        print(_INTERRUPTED, file=sys.stderr)
    return rc if isinstance(rc, int) else 0


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
