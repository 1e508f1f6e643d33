"""The studio's security model against a real server on loopback: the token, the cookie, CSRF, Host and Origin
checks, paths outside the book, links leaving it, methods, and the API key that must reach no page."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .running import SECRET, Studio, copy_sample, start

PAGES = (
    "/",
    "/chapters",
    "/chapters/0002.html",
    "/outlines",
    "/outlines/0011.html",
    "/memory.html",
    "/memory.html?q=%E5%90%95%E5%B8%83&as_of=5",
    "/spend.html",
    "/experiments.html",
    "/judging.html",
)


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    root = tmp_path_factory.mktemp("studio-security")
    book = copy_sample(root / "book")
    # a provider whose key comes from the environment, as every real book has it
    with (book / "book.toml").open("a", encoding="utf-8") as f:
        f.write('\n[providers.ds]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "DS_API_KEY"\n')
    (root / "outside.md").write_text("# 第三回\n\n　　THE-OUTSIDE-TEXT 不可读\n", encoding="utf-8")
    s = start(book)
    yield s
    err = s.stop()
    assert "Traceback" not in err and SECRET not in err, err


def test_the_printed_link_sets_a_strict_httponly_cookie_and_drops_the_token(studio: Studio) -> None:
    r = studio.request("GET", f"/chapters?token={studio.token}&x=1", cookie=False)
    assert r.status == 303
    assert r.headers["location"] == "/chapters?x=1"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(studio.cookie + ";")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie


@pytest.mark.parametrize("path", ["/", "/chapters/0002.html", "/static/studio.css", "/nothing-here"])
def test_a_request_without_the_token_is_403(studio: Studio, path: str) -> None:
    assert studio.request("GET", path, cookie=False).status == 403
    wrong = {"Cookie": f"muse_studio_{studio.port}=not-the-token"}
    assert studio.request("GET", path, cookie=False, headers=wrong).status == 403
    assert studio.request("GET", f"{path}?token=guess", cookie=False).status == 403


def test_the_token_of_another_port_is_not_this_studios(studio: Studio) -> None:
    other = {"Cookie": f"muse_studio_{studio.port + 1}={studio.token}"}
    assert studio.request("GET", "/", cookie=False, headers=other).status == 403


def test_a_post_without_csrf_is_403_and_changes_nothing(studio: Studio) -> None:
    db = studio.book / ".muse" / "muse.db"
    before = db.stat().st_mtime_ns if db.exists() else None
    assert studio.request("POST", "/actions/check", form={}).status == 403
    assert studio.request("POST", "/actions/check", form={"csrf": "stale"}).status == 403
    assert studio.request("POST", "/outlines/0011.html/confirm", form={}).status == 403
    assert (db.stat().st_mtime_ns if db.exists() else None) == before
    ok = studio.request("POST", "/actions/check", form={"csrf": studio.csrf()})
    assert ok.status == 200 and "check failed: 1 error(s)" in ok.body  # chapter 2 breaks 禁止:后宫
    header = studio.request("POST", "/actions/check", headers={"X-CSRF-Token": studio.csrf()})
    assert header.status == 200


def test_a_get_never_changes_anything(studio: Studio) -> None:
    assert studio.request("GET", "/actions/check").status == 404
    assert studio.request("GET", "/outlines/0011.html/confirm").status == 404


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example:80"},
        {"Host": "rebind.attacker.test"},  # DNS rebinding: a name that resolves to 127.0.0.1, sent as such
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
    ],
)
def test_a_foreign_host_or_origin_is_403(studio: Studio, headers: dict[str, str]) -> None:
    assert studio.request("GET", "/", headers=headers).status == 403
    post = studio.request("POST", "/actions/check", headers={**headers, "X-CSRF-Token": studio.csrf()})
    assert post.status == 403


def test_the_studios_own_origin_and_the_loopback_names_are_accepted(studio: Studio) -> None:
    assert studio.request("GET", "/", headers={"Origin": studio.base}).status == 200
    assert studio.request("GET", "/", headers={"Host": f"localhost:{studio.port}"}).status == 200


def test_only_get_head_and_post(studio: Studio) -> None:
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        assert studio.request(method, "/").status == 405


@pytest.mark.parametrize(
    "path",
    [
        "/static/../book.toml",
        "/static/..%2Fbook.toml",
        "/%2e%2e/book.toml",
        "/chapters/..%2F..%2Fbook.toml",
        "/chapters/../../etc/passwd",
        "/chapters/0002.md",
        "/book.toml",
        "/.muse/muse.db",
        "/outlines/0011.yaml",
    ],
)
def test_no_path_reaches_a_file(studio: Studio, path: str) -> None:
    r = studio.request("GET", path)
    assert r.status == 404
    assert "[providers" not in r.body and "SQLite format" not in r.body and "root:" not in r.body


def test_a_chapter_linked_outside_the_book_is_404_and_never_read(studio: Studio) -> None:
    chapter = studio.book / "chapters" / "0003.md"
    kept = chapter.read_bytes()
    chapter.unlink()
    os.symlink(studio.book.parent / "outside.md", chapter)
    try:
        r = studio.request("GET", "/chapters/0003.html")
        assert r.status == 404
        assert "BOOK_LINK_OUTSIDE" in r.body
        assert "THE-OUTSIDE-TEXT" not in r.body
        assert "THE-OUTSIDE-TEXT" not in studio.request("GET", "/memory.html?q=THE-OUTSIDE-TEXT").body
    finally:
        chapter.unlink()
        chapter.write_bytes(kept)


def test_every_page_has_the_headers_and_no_api_key(studio: Studio) -> None:
    for path in PAGES:
        r = studio.request("GET", path)
        assert r.status == 200, (path, r.body[:300])
        assert SECRET not in r.body and SECRET not in str(r.headers)
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["x-frame-options"] == "DENY" and r.headers["cache-control"] == "no-store"
        assert r.headers["referrer-policy"] == "same-origin"
        assert "Traceback" not in r.body
        # nothing the page loads comes from elsewhere: every src/href is the studio's own
        for ref in re.findall(r'(?:src|href|action)="([^"]*)"', r.body):
            assert not ref.startswith(("http:", "https:", "//")), (path, ref)


def test_a_non_loopback_host_needs_allow_remote(tmp_path: Path) -> None:
    from tests.conftest import muse_subprocess

    book = copy_sample(tmp_path / "book")
    r = muse_subprocess("studio", "--no-browser", "--book", book, "--host", "0.0.0.0")
    assert r.exit_code == 2
    assert "error[STUDIO_REMOTE]" in r.stderr and "--allow-remote" in r.stderr
