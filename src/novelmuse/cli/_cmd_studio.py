"""`muse studio [--port P] [--no-browser] [--host H --allow-remote]`: the book in a local web app."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app
from ._common import BookOpt, console, err_console, open_book


@app.command("studio")
def studio(
    book: BookOpt = None,
    port: Annotated[int, typer.Option("--port", help="Port to listen on (default: a free one).", min=0, max=65535)] = 0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the link; do not open a browser.")] = False,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback unless --allow-remote).")] = (
        "127.0.0.1"
    ),
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow a --host that is not a loopback address.")
    ] = False,
) -> None:
    """Serve the book as a local web app and open it in the browser: the desk, chapters with every finding
    highlighted, outlines (lint, confirm), the story memory as of any chapter, spend, experiments.

    Only 127.0.0.1 by default; the printed link holds a token that every request needs. Stop with Ctrl-C.
    """
    from ..studio import Started, serve

    b = open_book(book)

    def started(s: Started) -> None:
        if s.remote:
            err_console.print(
                f"warning: the studio listens on {s.host}, not only on this computer: anyone who can reach it and"
                " has the link can read and change the book",
                markup=False,
            )
        console.print(f"muse studio: {b.config.book.title or b.root.name} at {s.url}", markup=False)
        console.print("stop with Ctrl-C", markup=False)

    serve(b.root, host=host, port=port, open_browser=not no_browser, allow_remote=allow_remote, on_start=started)
