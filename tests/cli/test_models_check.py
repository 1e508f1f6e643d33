"""`muse models check`: configuration validation, one tiny call per role, exit codes 0 / 2 / 3, skip ≠ ok."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

import pytest

from novelmuse.book import ROLE_NAMES
from novelmuse.llm import _provider_cli
from novelmuse.store import connect
from tests.conftest import muse_subprocess
from tests.llm.loopback import LoopbackServer, Reply
from tests.llm.test_cli_provider import install_fake

KEY = "sk-models-check-SECRET-1a2b3c4d5e"


def make_book(root: Path, toml: str, script: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "book.toml").write_text('[book]\ntitle = "check"\n\n' + toml, encoding="utf-8")
    if script is not None:
        (root / "script.yaml").write_text(script, encoding="utf-8")
    return root


SCRIPTED = '[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n'


def roles_of(doc: dict) -> dict[str, dict]:
    return {r["role"]: r for r in doc["roles"]}


def test_nothing_configured_every_role_is_skipped_never_ok(muse, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", "")
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 4  # nothing was checked: not evaluated, never a pass
    doc = json.loads(r.stdout)
    assert doc["status"] == "skipped" and doc["run_id"] is None and doc["issues"] == []
    assert doc["exit"] == {"outcome": "not_evaluated", "code": 4}
    assert [x["role"] for x in doc["roles"]] == list(ROLE_NAMES)
    assert all(x["outcome"] == "skipped" and x["reason"] == "no model configured" for x in doc["roles"])
    human = muse("models", "check", "--book", book)
    assert human.exit_code == 4
    assert "skipped (no model configured)" in human.stdout
    assert "passed" not in human.stdout.replace("0 passed", "")


def test_scripted_roles_pass_and_a_wrong_echo_is_corrected(muse, tmp_path: Path) -> None:
    script = """
reviewer:
  - output: {ok: true, echo: muse-reviewer}
writer:
  - output: {ok: true, echo: something-else}
  - output: {ok: true, echo: muse-writer}
"""
    roles = '[roles]\nreviewer = "s:scripted-model-1"\nwriter = "s:scripted-model-1"\n'
    book = make_book(tmp_path / "b", SCRIPTED + roles, script)
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "passed" and doc["exit_code"] == 0
    by_role = roles_of(doc)
    assert by_role["reviewer"]["outcome"] == "passed" and by_role["reviewer"]["attempts"] == 1
    assert by_role["writer"]["outcome"] == "passed" and by_role["writer"]["attempts"] == 2
    assert by_role["judge"]["outcome"] == "skipped"
    conn = connect(book / ".muse" / "muse.db")
    try:
        rows = conn.execute(
            "SELECT role, attempt, outcome, error_code FROM receipts WHERE run_id = ? ORDER BY role, attempt",
            (doc["run_id"],),
        ).fetchall()
        run = conn.execute("SELECT kind, status FROM runs WHERE id = ?", (doc["run_id"],)).fetchone()
    finally:
        conn.close()
    assert [tuple(x) for x in rows] == [
        ("reviewer", 1, "ok", None),
        ("writer", 1, "failed", "CHECK_ECHO_MISMATCH"),
        ("writer", 2, "ok", None),
    ]
    assert tuple(run) == ("models-check", "ok")


def test_a_role_that_fails_closed_exits_3(muse, tmp_path: Path) -> None:
    script = """
default:
  - output: {ok: true, echo: muse-reviewer}
judge:
  - error: {code: MODEL_AUTH, status: 401}
"""
    roles = '[roles]\nreviewer = "s:scripted-model-1"\njudge = "s:scripted-model-1"\n'
    book = make_book(tmp_path / "b", SCRIPTED + roles, script)
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 3
    doc = json.loads(r.stdout)
    assert doc["status"] == "error"
    by_role = roles_of(doc)
    assert by_role["reviewer"]["outcome"] == "passed"
    assert (by_role["judge"]["outcome"], by_role["judge"]["code"], by_role["judge"]["attempts"]) == (
        "error",
        "MODEL_AUTH",
        1,
    )
    human = muse("models", "check", "--book", book)
    assert human.exit_code == 3  # the script is consumed again from the start by a new run
    assert "error[MODEL_AUTH]" in human.stdout


def test_three_wrong_answers_fail_closed_with_the_contract_code(muse, tmp_path: Path) -> None:
    wrong = "  - output: {ok: false, echo: muse-editor}\n"
    book = make_book(tmp_path / "b", SCRIPTED + '[roles]\neditor = "s:scripted-model-1"\n', "editor:\n" + wrong * 4)
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 3
    editor = roles_of(json.loads(r.stdout))["editor"]
    assert (editor["outcome"], editor["code"], editor["attempts"]) == ("error", "CHECK_NOT_OK", 3)


def test_missing_key_is_a_config_error_and_nothing_is_sent(
    muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUSE_TEST_MC_KEY", raising=False)
    with LoopbackServer("openai") as srv:
        toml = (
            SCRIPTED
            + f'[providers.ds]\nkind = "openai"\nbase_url = "{srv.base_url}"\napi_key_env = "MUSE_TEST_MC_KEY"\n'
            + '[roles]\nreviewer = "ds:deepseek-chat"\nwriter = "s:scripted-model-1"\n'
        )
        book = make_book(tmp_path / "b", toml, "writer:\n  - output: {ok: true, echo: muse-writer}\n")
        r = muse("models", "check", "--book", book, "--json")
        assert srv.count == 0
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [(i["code"], i["severity"], i["where"]) for i in doc["issues"]] == [
        ("MODEL_KEY_MISSING", "error", "[providers.ds]")
    ]
    by_role = roles_of(doc)
    assert (by_role["reviewer"]["outcome"], by_role["reviewer"]["code"]) == ("error", "MODEL_KEY_MISSING")
    assert by_role["writer"]["outcome"] == "passed"  # the rest is still checked
    human = muse("models", "check", "--book", book)
    assert human.exit_code == 2
    assert "error[MODEL_KEY_MISSING]" in human.stdout and "MUSE_TEST_MC_KEY" in human.stdout


def test_unused_provider_problems_are_warnings(muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSE_TEST_MC_KEY", raising=False)
    toml = (
        SCRIPTED
        + '[providers.spare]\nkind = "anthropic"\napi_key_env = "MUSE_TEST_MC_KEY"\n'
        + '[roles]\nwriter = "s:scripted-model-1"\n'
    )
    book = make_book(tmp_path / "b", toml, "writer:\n  - output: {ok: true, echo: muse-writer}\n")
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert [(i["code"], i["severity"]) for i in doc["issues"]] == [("MODEL_KEY_MISSING", "warning")]


def test_budget_needs_prices(muse, tmp_path: Path) -> None:
    toml = SCRIPTED + '[roles]\ndefault = "s:unpriced-model-7"\n\n[budget]\nmax_tokens = 100000\n'
    book = make_book(tmp_path / "b", toml, "default:\n  - output: {ok: true, echo: x}\n")
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [(i["code"], i["where"]) for i in doc["issues"]] == [("MODEL_COST_UNKNOWN", '[prices."unpriced-model-7"]')]
    assert all(x["outcome"] == "error" and x["code"] == "MODEL_COST_UNKNOWN" for x in doc["roles"])
    assert doc["run_id"] is None  # nothing was called


def test_missing_script_file(muse, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", SCRIPTED + '[roles]\nwriter = "s:scripted-model-1"\n')
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 2
    assert roles_of(json.loads(r.stdout))["writer"]["code"] == "SCRIPT_READ"


def test_claude_cli_pin_mismatch_is_a_config_error(muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-used-0000")
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\necho 2.1.0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    wrong = hashlib.sha256(b"something else").hexdigest()
    toml = f'[providers.cli]\nkind = "claude-cli"\npath = "{exe}"\nsha256 = "{wrong}"\nversion = "2.1.0"\n'
    book = make_book(tmp_path / "b", toml + '[roles]\njudge = "cli:claude-test-model"\n')
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [i["code"] for i in doc["issues"]] == ["MODEL_CLI_PIN_MISMATCH"]
    assert roles_of(doc)["judge"]["code"] == "MODEL_CLI_PIN_MISMATCH"


def echo_role(request: dict) -> Reply:
    """Answer a check request with the echo its prompt asks for."""
    prompt = json.dumps(request["messages"], ensure_ascii=False)
    role = re.search(r'role \\"(\w+)\\"', prompt)
    assert role is not None, prompt
    return Reply(content={"ok": True, "echo": f"muse-{role.group(1)}"}, delay_s=0.1)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_every_role_over_a_loopback_endpoint(muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setenv("MUSE_TEST_MC_KEY", KEY)
    with LoopbackServer(kind, responder=echo_role) as srv:  # type: ignore[arg-type]
        srv.queue(Reply(status=500))  # the first request hits a transient error and is resent
        toml = (
            f'[providers.p]\nkind = "{kind}"\nbase_url = "{srv.base_url}"\napi_key_env = "MUSE_TEST_MC_KEY"\n'
            '[roles]\ndefault = "p:test-model-1"\n'
        )
        book = make_book(tmp_path / "b", toml)
        r = muse("models", "check", "--book", book, "--json")
        assert srv.count == len(ROLE_NAMES) + 1
    assert r.exit_code == 0, r.stdout
    doc = json.loads(r.stdout)
    assert doc["status"] == "passed"
    assert all(x["outcome"] == "passed" and x["kind"] == kind for x in doc["roles"])
    assert sorted(x["attempts"] for x in doc["roles"]) == [1] * (len(ROLE_NAMES) - 1) + [2]


def test_key_never_appears_in_db_vault_or_output(tmp_path: Path) -> None:
    """One real subprocess run, with the SDK's debug log on: the reviewer's answer and the writer's errors echo
    the key back (as real endpoints do in 401 messages); it must reach no file and no output."""
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}
    writer_replies = [Reply(status=503, error_body=echo), Reply(status=401, error_body=echo)]

    def respond(request: dict) -> Reply:
        if "muse-writer" in json.dumps(request["messages"]):
            return writer_replies.pop(0)
        return Reply(content={"ok": True, "echo": "muse-reviewer", "note": KEY})

    with LoopbackServer("openai", responder=respond) as srv:
        toml = (
            f'[providers.ds]\nkind = "openai"\nbase_url = "{srv.base_url}"\napi_key_env = "MUSE_TEST_MC_KEY"\n'
            '[roles]\nreviewer = "ds:deepseek-chat"\nwriter = "ds:deepseek-chat"\n'
        )
        book = make_book(tmp_path / "b", toml)
        env = {"MUSE_TEST_MC_KEY": KEY, "OPENAI_LOG": "debug"}
        r = muse_subprocess("models", "check", "--book", book, "--json", env=env)
        assert srv.count == 3
        assert all(req.headers["authorization"] == f"Bearer {KEY}" for req in srv.requests)
    assert r.exit_code == 3, r.stdout + r.stderr
    by_role = roles_of(json.loads(r.stdout))
    assert by_role["reviewer"]["outcome"] == "passed"
    assert (by_role["writer"]["code"], by_role["writer"]["attempts"]) == ("MODEL_AUTH", 2)
    assert "DEBUG" in r.stderr  # the SDK's debug log really was written
    assert KEY not in r.stdout and KEY not in r.stderr
    files = [p for p in (book / ".muse").rglob("*") if p.is_file()]
    assert any("vault" in p.parts for p in files)
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    assert os.environ.get("MUSE_TEST_MC_KEY") is None  # the subprocess env never leaked into ours


def test_bad_config_and_missing_book_exit_2_with_one_error(muse, tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", '[roles]\nwriter = "nowhere:model-x"\n')
    r = muse("models", "check", "--book", book, "--json")
    assert r.exit_code == 2
    assert json.loads(r.stdout)["error"]["code"] == "CONFIG_INVALID"
    assert r.stderr.startswith("error[CONFIG_INVALID]")
    missing = muse("models", "check", "--book", tmp_path / "nope")
    assert missing.exit_code == 2 and missing.stderr.startswith("error[")
    assert "Traceback" not in missing.stderr


def test_failures_that_point_at_the_config_come_with_a_hint(
    muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSE_TEST_MC_KEY", KEY)

    def respond(request: dict) -> Reply:
        text = json.dumps(request["messages"])
        if "muse-writer" in text:
            return Reply(content={"ok": True, "echo": "muse-writer"}, model="deepseek-chat-0324")
        if "muse-reviewer" in text:
            return Reply(status=400)
        return Reply(status=401)

    with LoopbackServer("openai", responder=respond) as srv:
        toml = (
            f'[providers.ds]\nkind = "openai"\nbase_url = "{srv.base_url}"\napi_key_env = "MUSE_TEST_MC_KEY"\n'
            '[roles]\nwriter = "ds:deepseek-chat"\nreviewer = "ds:deepseek-chat"\njudge = "ds:deepseek-chat"\n'
        )
        book = make_book(tmp_path / "b", toml)
        r = muse("models", "check", "--book", book, "--json")
        assert srv.count == 3  # none of these is retried
        human = muse("models", "check", "--book", book)
    assert r.exit_code == 3
    by_role = roles_of(json.loads(r.stdout))
    assert by_role["writer"]["code"] == "MODEL_MISMATCH" and "'deepseek-chat-0324'" in by_role["writer"]["hint"]
    assert by_role["reviewer"]["code"] == "MODEL_INVALID_REQUEST"
    assert 'structured = "json_object"' in by_role["reviewer"]["hint"]
    assert by_role["judge"]["code"] == "MODEL_AUTH" and "$MUSE_TEST_MC_KEY" in by_role["judge"]["hint"]
    assert human.exit_code == 3 and "hint:" in human.stdout


def test_anthropic_invalid_request_hints_at_tool_mode(muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUSE_TEST_MC_KEY", KEY)
    with LoopbackServer("anthropic", default=Reply(status=400)) as srv:
        toml = (
            f'[providers.gw]\nkind = "anthropic"\nbase_url = "{srv.base_url}"\napi_key_env = "MUSE_TEST_MC_KEY"\n'
            '[roles]\nextractor = "gw:kimi-k2"\n'
        )
        r = muse("models", "check", "--book", make_book(tmp_path / "b", toml), "--json")
        assert srv.count == 1
    extractor = roles_of(json.loads(r.stdout))["extractor"]
    assert r.exit_code == 3 and extractor["code"] == "MODEL_INVALID_REQUEST"
    assert 'structured = "tool"' in extractor["hint"]


def test_a_pinned_claude_cli_role_passes_through_the_isolated_process(
    muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_provider_cli, "find_sandbox", lambda platform, path_env: ("none", None))
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", "sk-test-key-for-the-fake")
    fake = install_fake(tmp_path / "bin")
    fake.control(responses=[{"output": {"ok": True, "echo": "muse-judge"}}])
    toml = (
        f'[providers.cli]\nkind = "claude-cli"\npath = "{fake.path}"\nsha256 = "{fake.sha256}"\n'
        'version = "2.1.211"\napi_key_env = "MUSE_TEST_CLI_KEY"\nallow_unsandboxed = true\n'
        '[roles]\njudge = "cli:claude-test-model-2"\n'
    )
    r = muse("models", "check", "--book", make_book(tmp_path / "b", toml), "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    judge = roles_of(doc)["judge"]
    assert (judge["outcome"], judge["kind"], judge["attempts"]) == ("passed", "claude-cli", 1)
    (run,) = fake.records()
    assert "claude-test-model-2" in run["argv"]
    # no sandbox on this (patched) machine: the check says so — a warning, never implied confinement
    assert judge["sandbox"] == "none"
    (issue,) = doc["issues"]
    assert (issue["code"], issue["severity"], issue["where"]) == ("MODEL_SANDBOX_NONE", "warning", "[providers.cli]")
    human = muse("models", "check", "--book", tmp_path / "b")
    assert "warning[MODEL_SANDBOX_NONE]" in human.stdout and "(unconfined)" in human.stdout


def test_a_claude_cli_key_variable_that_is_unset_is_a_config_error(
    muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUSE_TEST_CLI_KEY", raising=False)
    fake = install_fake(tmp_path / "bin")
    toml = (
        f'[providers.cli]\nkind = "claude-cli"\npath = "{fake.path}"\nsha256 = "{fake.sha256}"\n'
        'version = "2.1.211"\napi_key_env = "MUSE_TEST_CLI_KEY"\nallow_unsandboxed = true\n'
        '[roles]\njudge = "cli:claude-test-model-2"\n'
    )
    r = muse("models", "check", "--book", make_book(tmp_path / "b", toml), "--json")
    assert r.exit_code == 2
    assert roles_of(json.loads(r.stdout))["judge"]["code"] == "MODEL_KEY_MISSING"
    assert fake.runs() == 0  # nothing was started


def test_a_local_server_needs_no_key_unless_the_book_names_one(
    muse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ollama, LM Studio, llama.cpp and vLLM on this machine: `kind = "ollama"` (and the other presets) with no key
    variable is checked and called with no key in the environment; a key variable the book names is required."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with LoopbackServer("openai", default=Reply(content={"ok": True, "echo": "muse-reviewer"})) as srv:
        toml = (
            f'[providers.local]\nkind = "ollama"\nbase_url = "{srv.base_url}"\n[roles]\nreviewer = "local:qwen2.5:7b"\n'
        )
        book = make_book(tmp_path / "b", toml)
        r = muse("models", "check", "--book", book, "--json")
        assert r.exit_code == 0, r.stdout
        assert srv.count == 1 and roles_of(json.loads(r.stdout))["reviewer"]["outcome"] == "passed"
        named = make_book(tmp_path / "c", toml.replace('kind = "ollama"', 'kind = "ollama"\napi_key_env = "VLLM_KEY"'))
        refused = muse("models", "check", "--book", named, "--json")
        assert refused.exit_code == 2 and "MODEL_KEY_MISSING" in refused.stdout and srv.count == 1
    ollama_api = make_book(tmp_path / "d", '[providers.o]\nkind = "ollama"\nbase_url = "http://127.0.0.1:11434/api"\n')
    doc = json.loads(muse("models", "check", "--book", ollama_api, "--json").stdout)
    assert any(i["code"] == "CONFIG_BASE_URL" and "/v1" in i["fix"] for i in doc["issues"])
    from novelmuse.book import load_config

    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "book.toml").write_text('[providers.l]\nkind = "lmstudio"\n', encoding="utf-8")
    config = load_config(tmp_path / "e" / "book.toml", user_config=tmp_path / "none.toml")
    assert config.providers["l"].base_url == "http://127.0.0.1:1234/v1"  # type: ignore[union-attr]


def test_calls_show_prints_each_attempt_and_its_raw_answer(muse, tmp_path: Path) -> None:
    """A correction was needed (the first echo was wrong): `muse calls show --last` shows both attempts, what was
    sent in brief and each raw answer as the vault keeps it; an unknown id is CALL_NOT_FOUND."""
    script = "writer:\n  - output: {ok: true, echo: something-else}\n  - output: {ok: true, echo: muse-writer}\n"
    book = make_book(tmp_path / "b", SCRIPTED + '[roles]\nwriter = "s:scripted-model-1"\n', script)
    assert muse("calls", "show", "--last", "--book", book).exit_code == 2  # no call yet
    assert muse("models", "check", "--book", book).exit_code == 0
    doc = json.loads(muse("calls", "show", "--last", "--json", "--book", book).stdout)
    assert doc["role"] == "writer" and [a["attempt"] for a in doc["attempts"]] == [1, 2]
    assert "something-else" in doc["attempts"][0]["answer"] and "muse-writer" in doc["attempts"][1]["answer"]
    assert doc["attempts"][0]["messages"] and all(m["chars"] > 0 for m in doc["attempts"][0]["messages"])
    human = muse("calls", "show", doc["call_id"], "--book", book)
    assert human.exit_code == 0 and "attempt 2" in human.stdout and "muse-writer" in human.stdout
    missing = muse("calls", "show", "MC-nope", "--book", book)
    assert missing.exit_code == 2 and missing.stderr.startswith("error[CALL_NOT_FOUND]")
    assert muse("calls", "bogus", "--book", book).exit_code == 2
