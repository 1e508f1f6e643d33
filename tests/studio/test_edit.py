"""Editing a chapter in the studio: saved through the revision store (the old text kept, restorable from the
page), never over a change made meanwhile — the CLI changes the chapter while its editor page is open, and the
save is refused with both versions shown."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator

import pytest

from tests.conftest import muse_subprocess

from .running import Studio, copy_sample, start


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    s = start(copy_sample(tmp_path_factory.mktemp("studio-edit") / "book"))
    yield s
    assert "Traceback" not in s.stop()


def editor(studio: Studio, n: int, kind: str = "chapters") -> tuple[str, str]:
    """The editor's text and base sha256 as the chapter (or outline) page gives them."""
    page = studio.request("GET", f"/{kind}/{n:04d}.html").body
    base = re.search(r'name="base" value="([0-9a-f]{64})"', page)
    text = re.search(r'<textarea name="text"[^>]*>(.*?)</textarea>', page, re.S)
    assert base and text
    # an HTML parser drops the one line break that follows <textarea>, as the browser does
    return html.unescape(text.group(1)).removeprefix("\n"), base.group(1)


def revisions(studio: Studio, n: int) -> list[dict[str, object]]:
    r = muse_subprocess("revisions", str(n), "--json", "--book", studio.book)
    assert r.exit_code == 0, r.stderr
    revs: list[dict[str, object]] = json.loads(r.stdout)["revisions"]
    return revs


def test_a_save_keeps_the_old_text_and_a_restore_brings_it_back(studio: Studio) -> None:
    path = studio.book / "chapters" / "0004.md"
    old = path.read_bytes()
    text, base = editor(studio, 4)
    assert text.encode() == old
    edited = text.replace("却说", "话说", 1).replace("\n", "\r\n")  # a browser sends CRLF
    saved = studio.request(
        "POST", "/chapters/0004.html/save", form={"csrf": studio.csrf(), "text": edited, "base": base}
    )
    assert saved.status == 200 and "saved; the text it replaced is kept as" in saved.body
    assert path.read_bytes() == text.replace("却说", "话说", 1).encode()  # the file's own LF line breaks
    [rev] = revisions(studio, 4)
    assert rev["sha256"] == base and rev["command"] == "muse studio: edit chapter 4"
    assert rev["id"] in saved.body  # listed under the kept versions, with its restore button
    back = studio.request("POST", "/chapters/0004.html/restore", form={"csrf": studio.csrf(), "revision": rev["id"]})
    assert back.status == 200 and f"restored {rev['id']}" in back.body
    assert path.read_bytes() == old
    assert len(revisions(studio, 4)) == 2  # the edited text was kept before the restore


def test_a_save_over_a_change_made_meanwhile_is_refused_with_both_versions(studio: Studio) -> None:
    path = studio.book / "chapters" / "0005.md"
    text, base = editor(studio, 5)  # the editor page is open …
    mine = text.replace("。", "！", 1)
    # … while `muse` changes the chapter: an edit saved and restored from the command line
    first = studio.request(
        "POST", "/chapters/0005.html/save", form={"csrf": studio.csrf(), "text": text + "\n补一句。\n", "base": base}
    )
    assert first.status == 200
    [rev] = revisions(studio, 5)
    r = muse_subprocess("revisions", "restore", "5", str(rev["id"]), "--book", studio.book)
    assert r.exit_code == 0, r.stderr
    path.write_bytes(path.read_bytes() + "作者在编辑器里又写了一句。\n".encode())
    now = path.read_bytes()
    refused = studio.request(
        "POST", "/chapters/0005.html/save", form={"csrf": studio.csrf(), "text": mine, "base": base}
    )
    assert refused.status == 409
    assert "FILE_CHANGED_ON_DISK" in refused.body or "changed on disk" in refused.body
    assert html.escape(mine, quote=False) in refused.body  # the author's text, kept on the page
    assert "作者在编辑器里又写了一句。" in refused.body  # the file as it is now
    assert path.read_bytes() == now  # nothing was overwritten
    assert len(revisions(studio, 5)) == 2  # and nothing recorded
    # saving again from the refusal page means: over the file as it is now (its sha256 is the new base)
    new_base = re.search(r'name="base" value="([0-9a-f]{64})"', refused.body)
    assert new_base
    again = studio.request(
        "POST", "/chapters/0005.html/save", form={"csrf": studio.csrf(), "text": mine, "base": new_base.group(1)}
    )
    assert again.status == 200 and path.read_bytes() == mine.encode()


def test_a_crlf_chapter_stays_crlf(studio: Studio) -> None:
    path = studio.book / "chapters" / "0006.md"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    text, base = editor(studio, 6)
    r = studio.request(
        "POST", "/chapters/0006.html/save", form={"csrf": studio.csrf(), "text": text + "尾。", "base": base}
    )
    assert r.status == 200
    assert path.read_bytes().endswith("尾。".encode()) and b"\n" not in path.read_bytes().replace(b"\r\n", b"")


def test_a_save_needs_the_csrf_token(studio: Studio) -> None:
    _, base = editor(studio, 7)
    assert studio.request("POST", "/chapters/0007.html/save", form={"text": "x", "base": base}).status == 403
    assert revisions(studio, 7) == []


def test_an_outline_edited_in_the_studio_is_saved_through_the_revision_store_and_must_be_confirmed_again(
    studio: Studio,
) -> None:
    """Edit (YAML), lint, confirm: the old bytes kept; a confirmed outline edited is unconfirmed (the writer uses
    exactly the confirmed bytes); YAML that does not read is refused, nothing written; a change made meanwhile by
    the author's editor is refused with both versions shown."""
    path = studio.book / "outlines" / "0011.yaml"
    assert studio.request("POST", "/outlines/0011.html/confirm", form={"csrf": studio.csrf()}).status == 200
    old = path.read_bytes()
    text, base = editor(studio, 11, "outlines")
    assert text.encode() == old
    edited = text.replace("hook: ", "hook: （作者改）", 1)
    saved = studio.request(
        "POST", "/outlines/0011.html/save", form={"csrf": studio.csrf(), "text": edited, "base": base}
    )
    assert saved.status == 200 and "the outline it replaced is kept as" in saved.body
    assert path.read_bytes() == edited.encode()
    shown = json.loads(muse_subprocess("outline", "show", "11", "--json", "--book", studio.book).stdout)
    assert shown["confirmation"]["state"] != "confirmed"
    kept = muse_subprocess("revisions", "outlines/0011.yaml", "--json", "--book", studio.book)
    [rev] = json.loads(kept.stdout)["revisions"]
    assert rev["sha256"] == base
    text2, base2 = editor(studio, 11, "outlines")
    bad = studio.request(
        "POST", "/outlines/0011.html/save", form={"csrf": studio.csrf(), "text": "chapter: [", "base": base2}
    )
    assert bad.status in (400, 422) and "OUTLINE_SYNTAX" in bad.body and path.read_text(encoding="utf-8") == text2
    path.write_text(text2 + "# the author's editor, meanwhile\n", encoding="utf-8")
    late = studio.request(
        "POST", "/outlines/0011.html/save", form={"csrf": studio.csrf(), "text": text2 + "# mine\n", "base": base2}
    )
    assert late.status == 409 and "the author&#39;s editor, meanwhile" in late.body and "# mine" in late.body
