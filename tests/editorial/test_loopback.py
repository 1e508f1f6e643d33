"""`muse review` over the real openai and anthropic providers against loopback servers (127.0.0.1 only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from novelmuse.text import split_paragraphs

from ..llm.loopback import Reply, serving
from .helpers import as_json, body_of, editor_output, issue, make_book, paragraph_of, unique_sentences

KEY = "sk-editorial-loopback-test-key-0123456789"


MODELS = {"openai": "gpt-4o-mini-2024-07-18", "anthropic": "claude-test-model-1"}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_review_over_loopback_server(tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setenv("MUSE_TEST_EDITORIAL_KEY", KEY)
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    paras = split_paragraphs(body)
    replies = [
        Reply(status=500),  # a transient failure: resent, same input
        Reply(content={"issues": [issue(quote, "major")], "passed": False}),
        Reply(content={"paragraphs": [{"index": target, "text": paras[target].text.strip() + "(改)"}]}),
        Reply(content={"issues": [], "passed": True}),
        Reply(content=editor_output(body, overall=90)),
    ]
    model = MODELS[kind]
    with serving(kind, *replies) as srv:  # type: ignore[arg-type]
        book = make_book(
            tmp_path / "b",
            extra_toml=(
                f'[providers.p]\nkind = "{kind}"\nbase_url = "{srv.base_url}"\n'
                'api_key_env = "MUSE_TEST_EDITORIAL_KEY"\n'
                f'timeout_s = 5\n[roles]\ndefault = "p:{model}"\n'
                f'[prices."{model}"]\ninput = 0.15\noutput = 0.6\n'
            ),
        )
        r = muse("review", "1", "--book", book, "--json")
        assert r.exit_code == 0, r.stderr
        assert srv.count == 5
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized"
    assert [s["step"] for s in ch["steps"]] == [
        "rules",
        "consistency_review",
        "repair",
        "re_review",
        "editor_review",
        "facts",  # skipped(revision not applied): no extractor request reached the server
    ]
    usage = ch["usage"]
    assert usage["calls"] == 4 and usage["attempts"] == 5
    assert usage["cost"] is not None and usage["cost"] > 0
    assert usage["by_role"]["reviewer"]["attempts"] == 3
    assert KEY not in r.stdout and KEY not in r.stderr
