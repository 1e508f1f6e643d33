"""book.toml and the user config are validated strictly (issue 18 item 4): a value of the wrong TOML type is an
error naming the key, never coerced (`true` is not 1, "3000" is not 3000, "yes" is not a boolean); numbers are
finite and bounded; the seeds' caps may be lowered, never raised; the user config's errors name the user config."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import load_config
from novelmuse.errors import InputError

SHA = "0" * 64
CLI = f'[providers.cli]\nkind = "claude-cli"\npath = "/opt/claude"\nsha256 = "{SHA}"\nversion = "2.1.211"\n'
OPENAI = '[providers.ds]\nkind = "openai"\n'


def load(tmp_path: Path, toml: str, user: str | None = None) -> object:
    (tmp_path / "book.toml").write_text(toml, encoding="utf-8")
    user_path = tmp_path / "user.toml"
    if user is not None:
        user_path.write_text(user, encoding="utf-8")
    return load_config(tmp_path / "book.toml", user_config=user_path)


def refused(tmp_path: Path, toml: str, user: str | None = None) -> InputError:
    with pytest.raises(InputError) as info:
        load(tmp_path, toml, user)
    assert info.value.code == "CONFIG_INVALID", info.value
    return info.value


@pytest.mark.parametrize(
    ("toml", "where"),
    [
        ('[chapters]\nmin_chars = "3000"\n', "chapters.min_chars"),
        ("[chapters]\nmin_chars = true\n", "chapters.min_chars"),
        ("[chapters]\nmax_chars = 6000.0\n", "chapters.max_chars"),
        ("[chapters]\nmax_chars = 100000000\n", "chapters.max_chars"),
        (CLI + 'require_sandbox = "yes"\n', "require_sandbox"),
        (CLI + "require_sandbox = 1\n", "require_sandbox"),
        (CLI + 'sandbox_read_paths = ["runtime"]\n', None),  # valid: relative to the book root
        (CLI.replace("/opt/claude", ""), "path"),
        (CLI.replace(SHA, "not-a-hash"), "sha256"),
        (CLI + "max_turns = true\n", "max_turns"),
        (CLI + "sandbox_read_paths = [1]\n", "sandbox_read_paths"),
        (OPENAI + 'base_url = "ftp://example.com"\n', "base_url"),
        (OPENAI + 'api_key_env = "MY KEY"\n', "api_key_env"),
        (OPENAI + 'api_key_env = ""\n', "api_key_env"),
        (OPENAI + "timeout_s = inf\n", "timeout_s"),
        (OPENAI + "timeout_s = 1e300\n", "timeout_s"),
        (OPENAI + 'timeout_s = "120"\n', "timeout_s"),
        (OPENAI + "max_concurrency = 1000000\n", "max_concurrency"),
        ('[providers."a:b"]\nkind = "openai"\n', "a:b"),
        ('[providers.s]\nkind = "scripted"\nscript = ""\n', "script"),
        ("[roles]\ndefault = 3\n", "roles.default"),
        ('[prices.m]\ninput = "0.27"\noutput = 1.1\n', "prices.m.input"),
        ("[prices.m]\ninput = nan\noutput = 1.1\n", "prices.m.input"),
        ("[budget]\nmax_cost = inf\n", "budget.max_cost"),
        ("[budget]\nmax_tokens = 1.5\n", "budget.max_tokens"),
        ("[budget]\nmax_tokens = 9223372036854775807\n", "budget.max_tokens"),
        ("[budget]\ndeadline_s = nan\n", "budget.deadline_s"),
        ("[calls]\nmax_attempts = true\n", "calls.max_attempts"),
        ("[calls]\nmax_attempts = 4\n", "calls.max_attempts"),  # seed 000: at most 3 calls
        ("[review]\nrepair_rounds = 2\n", "review.repair_rounds"),  # seed 004: one repair, one re-review
        ("[review]\nrereview_rounds = 2\n", "review.rereview_rounds"),
        ("[review]\nneutral_foreshadow_chapters = -1\n", "review.neutral_foreshadow_chapters"),
        ("[memory]\nmax_plants_per_chapter = 4\n", "memory.max_plants_per_chapter"),  # seed 004: at most 3
        ("[memory]\nchunk_max_chars = 10000000\n", "memory.chunk_max_chars"),
        ("[memory]\noverdue_default_age = 0\n", "memory.overdue_default_age"),
        ("[book]\ntitle = 3\n", "book.title"),
        ("[book]\nlanguage = true\n", "book.language"),
        ("[book]\ncreated = 1979-05-27\n", "book.created"),
    ],
)
def test_wrong_types_and_out_of_range_values_are_refused(tmp_path: Path, toml: str, where: str | None) -> None:
    if where is None:
        load(tmp_path, toml)
        return
    err = refused(tmp_path, toml)
    assert where in err.what and re.fullmatch(re.escape(str(tmp_path / "book.toml")) + r"(:\d+)?", err.where), err.where
    assert "Input should be" not in err.what and "Extra inputs" not in err.what  # said in the book's own terms


def test_what_is_valid_still_loads(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        CLI
        + "require_sandbox = true\ntimeout_s = 120\nmax_budget_usd = 2\n"
        + OPENAI
        + 'base_url = "http://127.0.0.1:8000/v1"\napi_key_env = "DS_API_KEY"\n'
        + '[roles]\ndefault = "ds:deepseek-chat"\n[prices."deepseek-chat"]\ninput = 0\noutput = 1.1\n'
        + "[budget]\nmax_cost = 5\ndeadline_s = 3600\n[calls]\nmax_attempts = 2\n"
        + "[review]\nrepair_rounds = 0\n[memory]\nmax_plants_per_chapter = 3\n",
    )
    assert config.providers["cli"].require_sandbox is True  # type: ignore[attr-defined,union-attr]
    assert config.providers["cli"].timeout_s == 120.0  # type: ignore[attr-defined,union-attr]
    assert config.prices["deepseek-chat"].input == 0.0  # type: ignore[attr-defined]
    assert config.calls.max_attempts == 2 and config.review.repair_rounds == 0  # type: ignore[attr-defined]


def test_the_user_config_is_strict_too_and_its_errors_name_it(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    err = refused(tmp_path, "", user='[calls]\nmax_attempts = "2"\n')
    assert "calls.max_attempts" in err.what and err.where.startswith(str(user))
    err = refused(tmp_path, "", user=CLI + 'require_sandbox = "yes"\n')
    assert "require_sandbox" in err.what and err.where.startswith(str(user))
    # a table that is not a table (today a TypeError while merging: error[INTERNAL])
    for text in ("providers = 3\n", "roles = [1, 2]\n", 'budget = "x"\n'):
        err = refused(tmp_path, "", user=text)
        assert err.where.startswith(str(user)), text
    err = refused(tmp_path, 'roles = "x"\n', user='[roles]\ndefault = "ds:m"\n')
    assert "roles" in err.what and err.where.startswith(str(tmp_path / "book.toml"))
    # the book wins key by key over a valid user config
    config = load(tmp_path, OPENAI + '[roles]\ndefault = "ds:a"\n', user='[roles]\njudge = "ds:b"\n' + OPENAI)
    assert config.role_target("judge") == ("ds", "b") and config.role_target("writer") == ("ds", "a")  # type: ignore[attr-defined]


def test_a_toml_syntax_error_says_invalid_toml_and_where(tmp_path: Path) -> None:
    (tmp_path / "book.toml").write_text("[book]\ntitle = \n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_config(tmp_path / "book.toml", user_config=tmp_path / "none.toml")
    assert info.value.code == "CONFIG_SYNTAX" and "invalid TOML" in info.value.what and "line 2" in info.value.what


_URL_PARTS = st.sampled_from(
    ["http://", "https://", "ftp://", "[", "]", "::1", "h", ":", "99999", "x", "/v1", "?", "#", "@", " ", "%"]
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_URL_PARTS, min_size=1, max_size=8))
def test_a_base_url_either_parses_whole_or_is_config_invalid(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    """Against the oracle `urllib.parse.urlsplit` (host and port read): a base_url is accepted only when the
    request layer can use it, and refused as CONFIG_INVALID naming the key — never a crash later."""
    from urllib.parse import urlsplit

    url = "".join(parts)
    toml = f'[providers.p]\nkind = "openai"\nbase_url = {json.dumps(url)}\n'
    root = tmp_path_factory.mktemp("url")

    def usable() -> bool:
        try:
            split = urlsplit(url)
            split.port  # noqa: B018
        except ValueError:
            return False
        return split.scheme in ("http", "https") and bool(split.hostname) and not any(c.isspace() for c in url)

    try:
        load(root, toml)
    except InputError as exc:
        assert exc.code == "CONFIG_INVALID" and "base_url" in exc.what, exc
        assert not usable(), url
        return
    assert usable(), url


def test_a_misspelt_key_is_named_with_its_line_and_the_key_it_resembles(tmp_path: Path) -> None:
    err = refused(tmp_path, '[book]\ntitle = "x"\n\n[chapters]\nmin_char = 3000\n')
    assert err.what.startswith("unknown key 'min_char' at chapters.min_char")
    assert err.where == f"{tmp_path / 'book.toml'}:5" and "did you mean 'min_chars'?" in err.fix
    typed = refused(tmp_path, '[chapters]\nmax_chars = "6000"\n')
    assert "must be a whole number, without quotes (got '6000')" in typed.what and typed.where.endswith(":2")
    role = refused(tmp_path, "[roles]\nwriter = 3\n")
    assert role.what.startswith("must be text, in quotes (got 3) at roles.writer") and role.where.endswith(":2")
