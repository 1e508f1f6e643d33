"""One fault injected into one step of one sample (issue 12's checks): that sample or its panel is not ok with
its code, the gate fails naming it, no other model is called and no arm is skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from novelmuse.llm import ProviderError, ProviderRequest
from novelmuse.replay import build_gate_input, evaluate_run

from ..writing.write_helpers import draft
from .replay_helpers import RoleFake, answer, judge_output, registered, replay_book, respond, run, with_signer

ONE_ATTEMPT = "\n[calls]\nmax_attempts = 1\n"


def _timeout(_: ProviderRequest) -> ProviderError:
    return ProviderError("MODEL_TIMEOUT", "no answer in time", transient=True)


def _other_model(request: ProviderRequest) -> Any:
    good = answer(request)
    good.resolved_model = "another-model"  # type: ignore[misc]
    return good


def _not_json(request: ProviderRequest) -> Any:
    return respond(request, None, text="这不是 JSON")


def _judge_unknown(request: ProviderRequest) -> Any:
    return respond(request, judge_output(request, "unknown"))


def _scoring(score: float) -> Any:
    def judge(request: ProviderRequest) -> Any:
        report = judge_output(request)
        for cell in report["scores"]:
            cell["score"] = score
        return respond(request, report)

    return judge


Faults = dict[tuple[str, int], Any]
FAULTS: dict[str, tuple[Faults, str]] = {
    "timeout": ({("writer", 1): _timeout}, "MODEL_TIMEOUT"),
    "model_mismatch": ({("detector", 1): _other_model}, "MODEL_MISMATCH"),
    "schema": ({("extractor", 1): _not_json}, "MODEL_"),
    "invalid_judge": ({("judge", 1): _not_json}, "MODEL_OUTPUT_NOT_JSON"),
    "unstable_judge": ({("judge", k): _scoring(2.0 * k - 1) for k in (1, 2, 3)}, "JUDGE_UNSTABLE"),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_fault_in_one_step_fails_its_sample_and_the_gate(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config = tmp_path / "userconf" / "config.toml"
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    book = with_signer(replay_book(tmp_path / "b", extra_toml=ONE_ATTEMPT), user_config)
    faults, code = FAULTS[name]
    fake = RoleFake(faults=faults)
    out = run(book, registered(book), fake, concurrency=1)
    assert not out.ok and out.status == "finished"
    assert sorted(s.arm for s in out.samples) == ["A", "B", "C"]  # no arm skipped
    assert all(s.status != "pending" for s in out.samples)
    codes = [s.code for s in out.samples if s.code] + [p.code for p in out.panels if p.code]
    assert codes and any(c.startswith(code) for c in codes if c), codes
    assert {model for _, model in fake.calls} == {"scripted-model-1"}  # no other model tried
    gi = build_gate_input(book, out.run_id)
    assert not all(s.ok for s in gi.samples)
    if name.endswith("judge"):  # the panel is invalid: every sample of the item is a judge anomaly
        assert out.panels[0].panel_status in ("invalid", "invalid_unstable")
        assert {s.anomaly.category for s in gi.samples if s.anomaly} == {"judge"}
    doc = evaluate_run(book, out.run_id, "A")
    assert doc.outcome == "failed" and doc.receipt_seq is None
    assert doc.report.anomalies and not doc.report.checks


def test_a_budget_refusal_fails_the_samples_without_sending(tmp_path: Path) -> None:
    book = replay_book(tmp_path / "b", extra_toml="\n[budget]\nmax_tokens = 50\n")
    fake = RoleFake()
    out = run(book, registered(book), fake)
    assert fake.calls == [] and not out.ok
    assert all(s.code and s.code.startswith("BUDGET") for s in out.samples), [s.code for s in out.samples]
    assert out.panels[0].code == "PANEL_NOT_RUN"


def test_a_judge_answering_unknown_is_accepted_without_correction_and_a_clean_small_set_is_insufficient(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config = tmp_path / "userconf" / "config.toml"
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    book = with_signer(replay_book(tmp_path / "b"), user_config)
    fake = RoleFake(faults={("judge", 1): _judge_unknown, ("judge", 2): _judge_unknown})
    out = run(book, registered(book), fake)
    assert [r for r, _ in fake.calls].count("judge") == 2  # no correction call, no third judge
    assert out.panels[0].panel_status == "stable" and out.ok
    gi = build_gate_input(book, out.run_id)
    assert all(v.verdict == "unknown" for s in gi.samples for v in s.panel)
    assert all(s.ok for s in gi.samples)  # unknown is an allowed answer, not an anomaly (the oracle fails it)
    report = evaluate_run(book, out.run_id, "A").report
    assert report.outcome == "insufficient" and not report.anomalies  # clean, but one item is too small a set


def _leaky_draft(request: ProviderRequest) -> Any:
    text = draft(requests=[])["output"]
    return respond(request, {**text, "text": text["text"] + "\n（据 BM25 检索结果改写）"})


def test_a_leak_fails_the_gate_even_on_a_set_too_small_to_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config = tmp_path / "userconf" / "config.toml"
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    book = with_signer(replay_book(tmp_path / "b", extra_toml=ONE_ATTEMPT), user_config)
    fake = RoleFake(faults={("writer", 1): _leaky_draft})
    out = run(book, registered(book), fake, concurrency=1)
    assert not out.ok and "judge" not in [r for r, _ in fake.calls]  # nothing was sent to a judge
    report = evaluate_run(book, out.run_id, "B").report
    assert report.outcome == "failed" and "leak" in {a.category for a in report.anomalies}, report.anomalies
    assert report.set.problems  # the set alone would have been insufficient


def test_a_report_on_a_damaged_manifest_stays_verifiable_after_the_manifest_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a report bound is what it saw: a gate evaluated while a manifest was damaged fails naming it (a hash
    anomaly), and restoring the manifest afterwards does not break the journal — the report verifies as what it
    was, forever. A clean evaluation keeps no such snapshot: a change after it still breaks verification."""
    from novelmuse.replay import gate_input_rebuilder, store_reader, verify_journal
    from novelmuse.replay._stored import manifest_location

    user_config = tmp_path / "userconf" / "config.toml"
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))
    book = with_signer(replay_book(tmp_path / "b"), user_config)
    out = run(book, registered(book), RoleFake())
    sha = next(s.manifest_sha256 for s in build_gate_input(book, out.run_id).samples if s.manifest_sha256)
    path = book.root / manifest_location(book, sha)
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"chapter"', b'"chapter "', 1))  # damaged
    report = evaluate_run(book, out.run_id, "A").report
    assert report.outcome == "failed" and "hash" in {a.category for a in report.anomalies}

    def verified() -> list[tuple[int | None, str]]:
        doc = verify_journal(book, reader=store_reader(book, gate_input_rebuilder(book)))
        return [(p.seq, p.code) for p in doc.problems]

    assert verified() == []
    path.write_bytes(original)  # restored
    assert verified() == []  # the report still verifies as what it saw
    clean = evaluate_run(book, out.run_id, "B")  # evaluated on the restored, clean manifests
    assert not any(a.category == "hash" for a in clean.report.anomalies)
    path.write_bytes(original.replace(b'"chapter"', b'"chapter "', 1))  # damaged after a clean evaluation
    assert (clean.report_seq, "GATE_ARTEFACT_CHANGED") in verified()
