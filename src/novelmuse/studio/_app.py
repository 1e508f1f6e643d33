"""The studio's routes: parse a request, call one page function or service in a worker thread (each request
opens the book afresh, as a CLI command does, so what the CLI changed meanwhile is what the page shows), render
its template. Every route sits behind `Guard` (token, CSRF, Host and Origin checks)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from .. import __version__
from ..book import Book, find_book
from ..errors import MuseError
from ..limits import MAX_CHAPTER_NUMBER, MAX_QUERY_CHARS
from ..reports.html import common_context, template_env
from . import _pages as pages
from ._jobs import Jobs
from ._security import CSRF_FIELD, ASGIApp, Guard, Secrets, allowed_hosts

NAV = (
    ("desk", "Desk", "/"),
    ("chapters", "Chapters", "/chapters"),
    ("outlines", "Outlines", "/outlines"),
    ("write", "Write", "/write"),
    ("drafts", "Drafts", "/drafts"),
    ("memory", "Memory", "/memory.html"),
    ("spend", "Spend", "/spend.html"),
    ("experiments", "Experiments", "/experiments.html"),
)
#: Errors that mean "there is no such thing here" (a missing chapter, a file linked outside the book): 404.
NOT_FOUND = frozenset(
    {"CHAPTER_NOT_FOUND", "OUTLINE_NOT_FOUND", "BOOK_LINK_OUTSIDE", "CHAPTER_READ", "OUTLINE_READ", "DRAFT_NOT_FOUND"}
)
_PAGE = re.compile(r"^(\d{1,5})\.html$")
_STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@dataclass
class Studio:
    """One running studio: the book's folder, this start's secrets, the templates."""

    root: Path
    keys: Secrets
    env: Environment = field(init=False)
    jobs: Jobs = field(init=False, default_factory=Jobs)
    static: dict[str, tuple[bytes, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.env = template_env(PackageLoader("novelmuse.studio", "templates"))
        self.env.globals["marked"] = pages.marked
        own = Path(__file__).parent / "static"
        self.static = {
            "report.css": (self.env.get_template("report.css").render().encode(), _STATIC_TYPES[".css"]),
            "report.js": (self.env.get_template("report.js").render().encode(), _STATIC_TYPES[".js"]),
        }
        for f in sorted(own.iterdir()):
            if f.suffix in _STATIC_TYPES:
                self.static[f.name] = (f.read_bytes(), _STATIC_TYPES[f.suffix])

    def open(self) -> Book:
        return find_book(self.root)

    def render(self, template: str, book: Book | None, active: str, ctx: dict[str, Any]) -> str:
        common = common_context(book) if book is not None else {"version": __version__, "book_title": "muse studio"}
        frame = {"nav": NAV, "active": active, "root": "/", "csrf": self.keys.csrf, "csrf_field": CSRF_FIELD}
        return self.env.get_template(template).render({**common, **frame, **ctx})


def _close(book: Book) -> None:
    if "db" in book.__dict__:
        with suppress(Exception):
            book.db.close()


async def _page(
    studio: Studio,
    template: str,
    active: str,
    load: Callable[[Book], dict[str, Any]],
    status: int = 200,
    conflict: tuple[str, Callable[[Book], dict[str, Any]]] | None = None,
) -> Response:
    """Open the book, load the page's context and render it — in a worker thread (the services are blocking).
    `conflict`: the page (and its loader) shown, with 409, when the file changed on disk since the page was read."""

    def work() -> tuple[int, str]:
        try:
            book = studio.open()
        except MuseError as exc:
            return _status(exc), studio.render("studio_error.html", None, active, pages.error_context(exc))
        try:
            return status, studio.render(template, book, active, load(book))
        except MuseError as exc:
            if conflict is not None and exc.code == "FILE_CHANGED_ON_DISK":
                return 409, studio.render(conflict[0], book, active, {**conflict[1](book), **pages.error_context(exc)})
            return _status(exc), studio.render("studio_error.html", book, active, pages.error_context(exc))
        finally:
            _close(book)

    try:
        code, html = await run_in_threadpool(work)
    except Exception as exc:  # a novelmuse bug: said plainly, never a traceback on the page
        print(f"error[INTERNAL]: {type(exc).__name__}: {exc} — MUSE_DEBUG=1 shows the traceback", file=sys.stderr)
        if os.environ.get("MUSE_DEBUG"):
            traceback.print_exc(file=sys.stderr)
        ctx = {"code": "INTERNAL", "what": type(exc).__name__, "where": "", "fix": "this is a novelmuse bug"}
        code, html = 500, studio.render("studio_error.html", None, active, ctx)
    return HTMLResponse(html, status_code=code)


def _status(exc: MuseError) -> int:
    if exc.code in NOT_FOUND:
        return 404
    if exc.code == "FILE_CHANGED_ON_DISK":
        return 409
    return 400 if exc.outcome == "bad_input" else 500


def _number(name: str) -> int | None:
    m = _PAGE.match(name)
    return int(m.group(1)) if m and int(m.group(1)) <= MAX_CHAPTER_NUMBER else None


def _int_param(request: Request, key: str) -> int | None:
    value = request.query_params.get(key, "").strip()
    return int(value) if value.isdigit() and int(value) <= MAX_CHAPTER_NUMBER + 1 else None


async def form_of(request: Request) -> dict[str, str]:
    """The fields of an urlencoded form (the Guard has read and size-capped the body)."""
    body = await request.body()
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def not_found(studio: Studio) -> Response:
    ctx = {"code": "STUDIO_PAGE_NOT_FOUND", "what": "no such page", "where": "", "fix": "use the menu above"}
    return HTMLResponse(studio.render("studio_error.html", None, "", ctx), status_code=404)


def build_routes(studio: Studio) -> list[Route]:
    async def desk(request: Request) -> Response:
        return await _page(studio, "studio_desk.html", "desk", pages.desk)

    async def chapters(request: Request) -> Response:
        return await _page(studio, "overview.html", "chapters", pages.chapters)

    async def chapter(request: Request) -> Response:
        n = _number(request.path_params["name"])
        if n is None:
            return not_found(studio)
        return await _page(studio, "studio_chapter.html", "chapters", lambda b: pages.chapter(b, n))

    async def save(request: Request) -> Response:
        n = _number(request.path_params["name"])
        if n is None:
            return not_found(studio)
        form = await form_of(request)
        text, base = form.get("text", ""), form.get("base", "")

        def load(b: Book) -> dict[str, Any]:
            return {**pages.chapter(b, n), "notice": pages.save_chapter(b, n, text, base)}

        def refused(b: Book) -> dict[str, Any]:
            return pages.conflict(b, n, text)

        return await _page(studio, "studio_chapter.html", "chapters", load, conflict=("studio_conflict.html", refused))

    async def save_outline(request: Request) -> Response:
        n = _number(request.path_params["name"])
        if n is None:
            return not_found(studio)
        form = await form_of(request)
        text, base = form.get("text", ""), form.get("base", "")

        def load(b: Book) -> dict[str, Any]:
            notice = pages.save_outline(b, n, text, base)
            return {**pages.outline(b, n), "notice": notice}

        def refused(b: Book) -> dict[str, Any]:
            return pages.conflict(b, n, text, kind="outline")

        return await _page(studio, "studio_outline.html", "outlines", load, conflict=("studio_conflict.html", refused))

    async def restore(request: Request) -> Response:
        n = _number(request.path_params["name"])
        if n is None:
            return not_found(studio)
        revision = (await form_of(request)).get("revision", "")

        def load(b: Book) -> dict[str, Any]:
            notice = pages.restore_chapter(b, n, revision)
            return {**pages.chapter(b, n), "notice": notice}

        return await _page(studio, "studio_chapter.html", "chapters", load)

    async def write(request: Request) -> Response:
        n = _int_param(request, "chapter")
        given = request.query_params.get("arm", "")
        arm = given if given in ("A", "C") else None
        running = studio.jobs.running()
        if n is None:
            return await _page(studio, "studio_write.html", "write", lambda b: {"plan": None, "running": running})

        def load(b: Book) -> dict[str, Any]:
            return {"plan": pages.write_plan(b, n, arm), "running": running}

        return await _page(studio, "studio_write.html", "write", load)

    async def write_start(request: Request) -> Response:
        form = await form_of(request)
        n = int(form["chapter"]) if form.get("chapter", "").isdigit() else None
        arm = form.get("arm") if form.get("arm") in ("A", "C") else None
        if n is None or n > MAX_CHAPTER_NUMBER:
            return not_found(studio)
        if (running := studio.jobs.running()) is not None:
            return RedirectResponse(f"/jobs/{running.id}", status_code=303)
        job = studio.jobs.start(f"write chapter {n}", pages.start_write(studio.root, n, arm, form.get("bill", "")))
        return RedirectResponse(f"/jobs/{job.id}", status_code=303)

    async def job_page(request: Request) -> Response:
        job = studio.jobs.get(request.path_params["job"])
        if job is None:
            return not_found(studio)
        return await _page(studio, "studio_job.html", "write", lambda b: {"job": job})

    async def job_events(request: Request) -> Response:
        job = studio.jobs.get(request.path_params["job"])
        if job is None:
            return not_found(studio)
        last = request.headers.get("last-event-id", "")
        seen = int(last) if last.isdigit() else 0

        async def stream() -> AsyncIterator[bytes]:
            nonlocal seen
            while True:
                events, done = job.since(seen)
                for ev in events:
                    seen = ev["id"]
                    data = json.dumps(ev, ensure_ascii=False)
                    yield f"id: {ev['id']}\nevent: {ev['kind']}\ndata: {data}\n\n".encode()
                if done and not events:
                    return
                if await request.is_disconnected():
                    return
                await asyncio.sleep(0.1)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"})

    async def job_cancel(request: Request) -> Response:
        job = studio.jobs.get(request.path_params["job"])
        if job is None:
            return not_found(studio)
        job.cancel()
        return RedirectResponse(f"/jobs/{job.id}", status_code=303)

    async def draft_page(request: Request) -> Response:
        token = request.path_params["token"]

        def load(b: Book) -> dict[str, Any]:
            ctx = pages.draft(b, token)
            if ctx["d"].draft.kind == "chapter":
                ctx.update(pages.accept_plan(b, token))
            return ctx

        return await _page(studio, "studio_draft.html", "drafts", load)

    async def draft_action(request: Request) -> Response:
        token, verb = request.path_params["token"], request.path_params["verb"]
        form = await form_of(request)
        if verb == "accept":
            if (running := studio.jobs.running()) is not None:
                return RedirectResponse(f"/jobs/{running.id}", status_code=303)
            job = studio.jobs.start(
                f"accept draft {token}", pages.start_accept(studio.root, token, form.get("bill", ""))
            )
            return RedirectResponse(f"/jobs/{job.id}", status_code=303)
        if verb not in ("reject", "revise"):
            return not_found(studio)

        def load(b: Book) -> dict[str, Any]:
            shown = token
            if verb == "reject":
                notice = pages.reject(b, token, form.get("reason", ""))
            else:
                shown, notice = pages.revise(b, token, form.get("text", ""))
            ctx = pages.draft(b, shown)
            if ctx["d"].draft.kind == "chapter":
                ctx.update(pages.accept_plan(b, shown))
            return {**ctx, "notice": notice}

        return await _page(studio, "studio_draft.html", "drafts", load)

    async def drafts(request: Request) -> Response:
        return await _page(studio, "desk.html", "drafts", pages.drafts)

    async def outlines(request: Request) -> Response:
        return await _page(studio, "studio_outlines.html", "outlines", pages.outlines)

    async def outline(request: Request) -> Response:
        n = _number(request.path_params["name"])
        if n is None:
            return not_found(studio)
        return await _page(studio, "studio_outline.html", "outlines", lambda b: pages.outline(b, n))

    async def confirm(request: Request) -> Response:
        n = _number(request.path_params["name"])
        if n is None:
            return not_found(studio)

        def load(b: Book) -> dict[str, Any]:
            result = pages.confirm(b, n)
            return {**pages.outline(b, n), "notice": result}

        return await _page(studio, "studio_outline.html", "outlines", load)

    async def memory(request: Request) -> Response:
        query = request.query_params.get("q", "").strip()[:MAX_QUERY_CHARS]
        as_of, before = _int_param(request, "as_of"), _int_param(request, "before")
        return await _page(studio, "studio_memory.html", "memory", lambda b: pages.memory(b, as_of, query, before))

    async def spend(request: Request) -> Response:
        return await _page(studio, "studio_spend.html", "spend", pages.spend)

    async def experiments(request: Request) -> Response:
        return await _page(studio, "replay.html", "experiments", pages.experiments)

    async def judging(request: Request) -> Response:
        return await _page(studio, "judging.html", "experiments", pages.judging)

    async def action(request: Request) -> Response:
        verb = request.path_params["verb"]
        if verb not in pages.ACTIONS:
            return not_found(studio)

        def load(b: Book) -> dict[str, Any]:
            notice = asyncio.run(pages.ACTIONS[verb](b))
            return {**pages.desk(b), "notice": notice}

        return await _page(studio, "studio_desk.html", "desk", load)

    async def static(request: Request) -> Response:
        found = studio.static.get(request.path_params["name"])
        if found is None:
            return not_found(studio)
        return Response(found[0], media_type=found[1])

    async def to_chapters(request: Request) -> Response:
        return RedirectResponse("/chapters", status_code=303)

    async def anything_else(request: Request) -> Response:
        return not_found(studio)

    return [
        Route("/", desk, methods=["GET", "HEAD"]),
        Route("/index.html", to_chapters, methods=["GET", "HEAD"]),
        Route("/chapters", chapters, methods=["GET", "HEAD"]),
        Route("/chapters/{name}", chapter, methods=["GET", "HEAD"]),
        Route("/chapters/{name}/save", save, methods=["POST"]),
        Route("/chapters/{name}/restore", restore, methods=["POST"]),
        Route("/drafts", drafts, methods=["GET", "HEAD"]),
        Route("/drafts/{token}", draft_page, methods=["GET", "HEAD"]),
        Route("/drafts/{token}/{verb}", draft_action, methods=["POST"]),
        Route("/write", write, methods=["GET", "HEAD"]),
        Route("/write/start", write_start, methods=["POST"]),
        Route("/jobs/{job}", job_page, methods=["GET", "HEAD"]),
        Route("/jobs/{job}/events", job_events, methods=["GET"]),
        Route("/jobs/{job}/cancel", job_cancel, methods=["POST"]),
        Route("/outlines", outlines, methods=["GET", "HEAD"]),
        Route("/outlines/{name}", outline, methods=["GET", "HEAD"]),
        Route("/outlines/{name}/confirm", confirm, methods=["POST"]),
        Route("/outlines/{name}/save", save_outline, methods=["POST"]),
        Route("/memory.html", memory, methods=["GET", "HEAD"]),
        Route("/spend.html", spend, methods=["GET", "HEAD"]),
        Route("/experiments.html", experiments, methods=["GET", "HEAD"]),
        Route("/judging.html", judging, methods=["GET", "HEAD"]),
        Route("/actions/{verb}", action, methods=["POST"]),
        Route("/static/{name}", static, methods=["GET", "HEAD"]),
        Route("/{rest:path}", anything_else, methods=["GET", "HEAD", "POST"]),
    ]


def create_app(root: Path, keys: Secrets, *, host: str, port: int) -> ASGIApp:
    """The studio for the book at `root`, guarded for requests to `host:port` carrying `keys`."""
    studio = Studio(root, keys)
    return Guard(Starlette(routes=build_routes(studio)), keys, allowed_hosts(host, port), port)
