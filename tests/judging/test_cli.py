"""`muse judge` and `muse rubrics`: exit codes, JSON shape, skipped never passed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from novelmuse.judging import Candidate

from ..conftest import muse_subprocess
from ._helpers import corpus_candidates, good_report
from .conftest import Panel, output


def _files(panel: Panel) -> list[Path]:
    paths = []
    for i, c in enumerate(panel.candidates):
        p = panel.book.root / f"draft{i}.txt"
        p.write_text(c.text, encoding="utf-8")
        paths.append(p)
    return paths


def _args(panel: Panel, *extra: str | Path) -> list[str | Path]:
    return [
        "judge",
        "--book",
        panel.book.root,
        "--profile",
        "quality_gate",
        *_files(panel),
        "--item",
        "item-1",
        "--seed",
        "s",
        "--chapter",
        "1",
        *extra,
    ]


def test_rubrics_lists_profiles_versions_and_hashes(muse) -> None:  # type: ignore[no-untyped-def]
    r = muse("rubrics", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert [(x["profile"], x["id"], x["version"]) for x in doc["rubrics"]] == [
        ("quality_gate", "quality-gate-rubric-v1", 1),
        ("fine_outline_replay", "fine-outline-replay-rubric-v1", 1),
        ("writer_replay", "writer-replay-rubric-v2", 2),
    ]
    assert all(len(x["sha256"]) == 64 for x in doc["rubrics"])
    human = muse("rubrics")
    assert "canon_compliance*" in human.stdout and "sha256" in human.stdout


def test_judge_stable_with_computed_hard_blocks_passes_the_gate(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    good = output(lambda b: good_report(b, 4.5))
    panel = make_panel(corpus_candidates(2), [[good], [good]])
    asserts = panel.book.root / "asserts.yaml"
    asserts.write_text("[]\n", "utf-8")
    r = muse(*_args(panel, "--assertions", asserts, "--json"))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "stable" and doc["report"]["status"] == "stable"
    assert [g["outcome"] for g in doc["gate"]] == ["passed", "passed"]
    # the rule layer computed each candidate's blocks; no outline: static_contract is not applicable (said so)
    assert {g["hard_blocks"]["static_contract"] for g in doc["gate"]} == {"not_applicable"}
    assert {arm: r["source_safety"]["state"] for arm, r in doc["hard_block_reports"].items()} == {
        "A": "passed",
        "B": "passed",
    }
    assert doc["evidence"]["chapter"] == 1 and doc["evidence"]["source"] == "memory" and doc["evidence"]["items"] == []
    # every decision is stored with its inputs and listed by judge-summary, with a gate lesson (not an example one)
    summary = json.loads(muse("judge-summary", "--book", panel.book.root, "--json").stdout)
    assert [(g["origin"], g["chapter"], g["outcome"]) for g in summary["gates"]] == [("judge", 1, "passed")] * 2
    assert all(g["rubric"]["id"] == "quality-gate-rubric-v1" and g["lesson_id"] for g in summary["gates"])
    kinds = panel.book.db.execute("SELECT kind, lesson FROM judge_lessons ORDER BY kind").fetchall()
    gate_lessons = [lesson for kind, lesson in kinds if kind == "gate"]
    assert gate_lessons and all(lesson.startswith("【门终态】") for lesson in gate_lessons)
    assert {kind for kind, _ in kinds} == {"example", "gate"}
    assert sorted(doc["unblinded"].values()) == ["A", "B"] and doc["sources"]["A"].endswith("draft0.txt")
    assert doc["reliability"]["third_judge_rate"] == 0.0
    human = muse(*_args(panel, "--no-lessons"))
    assert "unblinded" in human.stdout
    # one JSON style: every key novelmuse names is snake_case, in judge, judge-summary and rubrics (schema v2)
    summary = json.loads(muse("judge-summary", "--book", panel.book.root, "--json").stdout)
    rubrics = json.loads(muse("rubrics", "--json").stdout)
    for document in (doc, summary, rubrics):
        assert document["schema_version"] == 2 and _keys_not_snake(document) == []
    assert doc["report"]["schema_version"] == "judge-panel-v2"


#: Maps whose keys are data, not names: candidate ids → arms, arms → files, error codes → counts.
_DATA_MAPS = {"unblinded", "sources", "codes", "violations", "hard_block_reports"}


def _keys_not_snake(node: object, parent: str = "") -> list[str]:
    """Keys (other than data maps' keys) that are not snake_case."""
    if isinstance(node, list):
        return [k for item in node for k in _keys_not_snake(item, parent)]
    if not isinstance(node, dict):
        return []
    bad = [] if parent in _DATA_MAPS else [k for k in node if not re.fullmatch(r"[a-z0-9_]+", k)]
    return bad + [k for key, value in node.items() for k in _keys_not_snake(value, key)]


def test_a_forbidden_phrase_never_passes_the_gate_whatever_file_is_given(
    muse, make_panel: Callable[..., Panel]
) -> None:  # type: ignore[no-untyped-def]
    """Issue 14 item 4: hard blocks come from the rule layer, never from the caller — a candidate holding the book's
    禁止 phrase fails the gate with the best scores; a hard-blocks file may add a fired block, never a pass."""
    good = output(lambda b: good_report(b, 5.0))
    cands = corpus_candidates(1)
    panel = make_panel(cands, [[good, good], [good, good]])
    forbidden = cands[0].text[100:104]
    (panel.book.root / "rules.txt").write_text(f"禁止:{forbidden}\n", encoding="utf-8")
    r = muse(*_args(panel, "--json"))
    assert r.exit_code == 1, r.stderr
    (gate,) = json.loads(r.stdout)["gate"]
    assert gate["outcome"] == "failed" and gate["hard_blocks"]["source_safety"] == "fired"
    assert "hard block source_safety fired (rule layer)" in gate["reasons"]
    blocks = panel.book.root / "blocks.yaml"
    blocks.write_text("source_safety: passed\noutput_compliance: passed\nstatic_contract: passed\n", "utf-8")
    r = muse(*_args(panel, "--hard-blocks", blocks))
    assert r.exit_code == 2 and "JUDGE_HARD_BLOCKS_INVALID" in r.stderr  # no file can make a block pass
    (panel.book.root / "rules.txt").write_text("", encoding="utf-8")
    blocks.write_text("static_contract: fired\n", "utf-8")  # an override can only fire a block
    r = muse(*_args(panel, "--hard-blocks", blocks, "--json"))
    assert r.exit_code == 1, r.stderr
    (gate,) = json.loads(r.stdout)["gate"]
    assert gate["hard_blocks"] == {"source_safety": "passed", "output_compliance": "passed", "static_contract": "fired"}


def test_invalid_item_exits_3_with_one_error_line(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(corpus_candidates(1), [[{"raw_text": "not json"}] * 3])
    r = muse(*_args(panel, "--json"))
    assert r.exit_code == 3
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "invalid" and doc["report"]["scores"] == []
    last = r.stderr.strip().splitlines()[-1]  # progress lines first, then exactly one error line
    assert last.startswith("error[") and "invalid" in last
    assert sum(line.startswith("error[") for line in r.stderr.splitlines()) == 1
    assert "judge 1 (blind order): running" in r.stderr


def test_leak_exits_3_and_sends_nothing(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    text = corpus_candidates(1)[0].text + "（arm_cards 生成）"
    panel = make_panel([Candidate("A", text)], [[output(good_report)]])
    r = muse(*_args(panel, "--secret", "arm_cards", "--json"))
    assert r.exit_code == 3
    assert json.loads(r.stdout)["error"]["code"] == "JUDGE_INPUT_LEAK"
    assert "arm_cards" not in r.stderr


def test_file_name_of_a_candidate_counts_as_an_arm_label(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(corpus_candidates(1), [[output(good_report)]])
    path = panel.book.root / "cardsarm.txt"
    path.write_text(corpus_candidates(1)[0].text + " cardsarm ", encoding="utf-8")
    r = muse("judge", "--book", panel.book.root, "--profile", "quality_gate", "--chapter", "1", path)
    assert r.exit_code == 3 and "JUDGE_INPUT_LEAK" in r.stderr


def test_no_model_is_skipped_exit_4_and_says_so(make_panel: Callable[..., Panel]) -> None:
    panel = make_panel(corpus_candidates(1), None)
    r = muse_subprocess(*_args(panel, "--json"))
    assert r.exit_code == 4, r.stderr  # not evaluated: never a pass
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "skipped" and doc["reason"] == "no model configured" and doc["report"] is None
    human = muse_subprocess(*_args(panel))
    assert "skipped(no model configured)" in human.stdout and "passed" not in human.stdout


def test_usage_errors_exit_2(muse, make_panel: Callable[..., Panel], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(corpus_candidates(1), None)
    (draft,) = _files(panel)
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {id: a1}\n", "utf-8")
    cases = [
        ["--profile", "nope", draft],
        ["--profile", "writer_replay", draft],
        ["--profile", "writer_replay", "--scene-type", "picnic", draft],
        ["--profile", "writer_replay", "--scene-type", "battle", draft],
        ["--profile", "fine_outline_replay", "--chapter", "1", draft],
        ["--profile", "fine_outline_replay", draft],
        ["--profile", "quality_gate", draft],
        ["--profile", "quality_gate", "--chapter", "1", "--assertions", bad, draft],
        ["--profile", "quality_gate", "--chapter", "1", tmp_path / "missing.txt"],
    ]
    codes = []
    for args in cases:
        r = muse("judge", "--book", panel.book.root, *args)
        assert r.exit_code == 2, (args, r.stderr)
        codes.append(r.stderr.split("]")[0])
    assert codes == [
        "error[JUDGE_PROFILE_UNKNOWN",
        "error[JUDGE_SCENE_TYPE",
        "error[JUDGE_SCENE_TYPE",
        "error[JUDGE_OUTLINE_REQUIRED",
        "error[JUDGE_OUTLINE_REQUIRED",
        "error[JUDGE_CHAPTER_REQUIRED",
        "error[JUDGE_CHAPTER_REQUIRED",
        "error[JUDGE_ASSERTIONS_INVALID",
        "error[JUDGE_FILE_READ",
    ]


def test_card_ids_strategy_names_and_manifest_lines_never_reach_a_judge(  # type: ignore[no-untyped-def]
    muse, make_panel: Callable[..., Panel]
) -> None:
    text = corpus_candidates(1)[0].text
    good = output(good_report)
    panel = make_panel([Candidate("A", text)], [[good], [good]])
    cards = panel.book.root / "cards"
    cards.mkdir()
    (cards / "liu-bei.yaml").write_text("id: liu-bei\ntype: character\nname: 刘备\naliases: [玄德]\n", "utf-8")
    (cards / "zhang.yaml").write_text("id: 张飞\ntype: character\nname: 张飞\n", "utf-8")  # id = name: text
    (draft,) = _files(panel)
    base = [
        "judge",
        "--book",
        panel.book.root,
        "--profile",
        "quality_gate",
        "--chapter",
        "1",
        "--item",
        "item-1",
        "--seed",
        "s",
    ]
    assert muse(*base, draft, "--no-lessons").exit_code == 0  # 张飞/刘备 in the text are fine

    leaky = panel.book.root / "leaky.txt"
    leaky.write_text(text + "（据 liu-bei 卡）", encoding="utf-8")
    r = muse(*base, leaky)
    assert r.exit_code == 3 and "card_id×1" in r.stderr

    r = muse(*base, draft, "--strategy", "话说天下大势")
    assert r.exit_code == 3 and "strategy_name×1" in r.stderr

    manifest = panel.book.root / "manifest.txt"
    manifest.write_text("卡: 刘备\n" + text[100:140] + "\n", encoding="utf-8")
    r = muse(*base, draft, "--manifest", manifest)
    assert r.exit_code == 3 and "manifest×1" in r.stderr
    assert panel.book.db.execute("SELECT count(*) FROM receipts").fetchone()[0] == 2  # only the first run sent


def test_writer_replay_with_outline_scene_type_and_assertions(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    from novelmuse.book import parse_outline
    from novelmuse.judging import Target

    outline_yaml = "chapter: 1\ngoal: 刘关张结义\nhard_events:\n  - {id: E1, text: 桃园结义}\nhook: 投军破黄巾\n"
    cands = corpus_candidates(2)
    probe = make_panel(cands, None)
    outline_path = probe.book.root / "0001.yaml"
    outline_path.write_text(outline_yaml, encoding="utf-8")
    outline = parse_outline(outline_path)
    targets = {"assertions": [Target("a1", "三人结义")], "constraints": [Target("h1", "张飞不死")]}

    def judged(blind):  # type: ignore[no-untyped-def]
        report = good_report(blind, 7.5)
        report["scores"][0]["evidenceRefs"] = [{"type": "fine_outline", "id": "E1"}]  # type: ignore[index]
        report["scores"][1]["evidenceRefs"] = [{"type": "oracle_assertion", "id": "h1"}]  # type: ignore[index]
        return report

    panel = make_panel(
        cands,
        [[output(judged)], [output(judged)]],
        profile="writer_replay",
        scene_type="turning_point",
        outline=outline,
        **targets,
    )
    (panel.book.root / "0001.yaml").write_text(outline_yaml, encoding="utf-8")
    asserts = panel.book.root / "asserts.yaml"
    asserts.write_text("- {id: a1, text: 三人结义}\n- {id: h1, text: 张飞不死, kind: constraint}\n", "utf-8")
    files = _files(panel)
    r = muse(
        "judge",
        "--book",
        panel.book.root,
        "--profile",
        "writer_replay",
        *files,
        "--item",
        "item-1",
        "--seed",
        "s",
        "--scene-type",
        "turning_point",
        "--outline",
        panel.book.root / "0001.yaml",
        "--assertions",
        asserts,
        "--json",
    )
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "stable" and doc["gate"] == []
    assert doc["report"]["scene_type"] == "turning_point" and doc["rubric"]["id"] == "writer-replay-rubric-v2"
    assert {s["score"] for s in doc["report"]["scores"]} == {7.5}
    assert [(v["target_id"], v["verdict"]) for v in doc["report"]["verdicts"]] == [("a1", "pass"), ("h1", "pass")] * 2


def test_judge_summary_aggregates_items_by_arm_with_deltas(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from novelmuse.judging import build_blind_item, load_rubric, panel_orders

    from .conftest import write_script

    rubric = load_rubric("quality_gate")
    texts = [c.text for c in corpus_candidates(4)]
    items = [("i1", texts[0:2]), ("i2", texts[2:4])]  # in each item: first file = arm A, second = arm B
    entries = []
    for item_id, pair in items:
        item = build_blind_item(
            item_id=item_id, seed="s", rubric=rubric, candidates=[Candidate("A", pair[0]), Candidate("B", pair[1])]
        )
        arm_of = item.arm_map.open(item.arm_map.sha256)
        orders = panel_orders(item.blind.candidate_ids)
        for slot in (1, 2):
            seen = item.blind.in_order(orders[slot])
            entries.append(
                {"output": good_report(seen, lambda c, d, i, arm_of=arm_of: 4.5 if arm_of[c] == "B" else 3.5)}
            )
    book = write_script(tmp_path / "book", entries)
    for item_id, pair in items:
        files = []
        for n, text in enumerate(pair):
            p = book.root / f"{item_id}-{n}.txt"
            p.write_text(text, encoding="utf-8")
            files.append(p)
        r = muse(
            "judge",
            "--book",
            book.root,
            "--profile",
            "quality_gate",
            "--chapter",
            "1",
            *files,
            "--item",
            item_id,
            "--seed",
            "s",
        )
        assert r.exit_code == 1, r.stderr  # stable; the gate fails (no hard blocks given)
    r = muse("judge-summary", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    (block,) = doc["rubrics"]
    assert block["aggregate"]["items_stable"] == 2
    deltas = {(d["arm"], d["dimension_id"]): (d["items"], d["mean_delta"]) for d in block["aggregate"]["deltas"]}
    assert deltas[("B", "canon_compliance")] == (2, 1.0)
    means = {(m["arm"], m["dimension_id"]): m["mean"] for m in block["aggregate"]["means"]}
    assert means[("A", "readability")] == 3.5 and means[("B", "readability")] == 4.5
    assert block["reliability"]["items"] == 2 and block["reliability"]["third_judge_rate"] == 0.0
    human = muse("judge-summary", "--book", book.root)
    assert "+1.00 (2)" in human.stdout


def test_bad_input_files_give_one_line_errors_that_name_file_and_line(  # type: ignore[no-untyped-def]
    muse, make_panel: Callable[..., Panel], tmp_path: Path
) -> None:
    panel = make_panel(corpus_candidates(1), None)
    (draft,) = _files(panel)
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {id: a1, text: x}\n- {id: [\n", "utf-8")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("- {id: a1, text: caf\xe9}\n".encode("latin-1"))
    cases = [
        (["--assertions", broken], "error[JUDGE_FILE_SYNTAX]", f"{broken}:"),
        (["--hard-blocks", broken], "error[JUDGE_FILE_SYNTAX]", f"{broken}:"),
        (["--assertions", latin1], "error[JUDGE_FILE_SYNTAX]", str(latin1)),
        (["--assertions", tmp_path], "error[JUDGE_FILE_READ]", str(tmp_path)),
        (["--manifest", tmp_path / "none.txt"], "error[JUDGE_FILE_READ]", "none.txt"),
        ([tmp_path], "error[JUDGE_FILE_READ]", str(tmp_path)),
    ]
    for extra, code, where in cases:
        r = muse("judge", "--book", panel.book.root, "--profile", "quality_gate", "--chapter", "1", draft, *extra)
        assert r.exit_code == 2, (extra, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(code) and where in lines[0], (extra, r.stderr)
        assert " — " in lines[0]  # every error says how to fix it


def test_hard_blocks_are_refused_for_a_profile_without_a_gate(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(corpus_candidates(1), None)
    (draft,) = _files(panel)
    blocks = panel.book.root / "blocks.yaml"
    blocks.write_text("source_safety: passed\n", "utf-8")
    r = muse("judge", "--book", panel.book.root, "--profile", "fine_outline_replay", draft, "--hard-blocks", blocks)
    assert r.exit_code == 2 and r.stderr.startswith("error[JUDGE_HARD_BLOCKS_UNUSED]")


def test_judge_summary_refuses_an_unknown_profile(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(corpus_candidates(1), None)
    r = muse("judge-summary", "--book", panel.book.root, "--profile", "qualitygate", "--json")
    assert r.exit_code == 2
    assert json.loads(r.stdout)["error"]["code"] == "JUDGE_PROFILE_UNKNOWN"


def test_human_output_shows_ties_as_ties(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    tie = output(good_report)  # every cell 4.0: no candidate is better on any dimension
    panel = make_panel(corpus_candidates(2), [[tie], [tie]])
    r = muse(*_args(panel, "--no-lessons"))
    line = next(x for x in r.stdout.splitlines() if x.startswith("canon_compliance"))
    a, b = panel.item.blind.candidate_ids
    assert f"{a} = {b}" in line and ">" not in line


def test_human_output_of_an_invalid_panel_names_the_failed_judge(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(corpus_candidates(1), [[{"raw_text": "not json"}] * 3])
    r = muse(*_args(panel))
    assert r.exit_code == 3
    assert "judge 1 failed closed (MODEL_OUTPUT_NOT_JSON)" in r.stdout
    assert "differed by more than 0.5" not in r.stdout


def test_directory_names_that_tell_the_arms_apart_are_arm_labels(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    text = corpus_candidates(1)[0].text
    panel = make_panel(corpus_candidates(1), None)
    files = []
    for arm, body in (("baseline", text), ("withcards", text[:600] + "（withcards）" + text[600:])):
        d = panel.book.root / "replay" / arm
        d.mkdir(parents=True)
        (d / "0001.md").write_text(body, encoding="utf-8")
        files.append(d / "0001.md")
    r = muse("judge", "--book", panel.book.root, "--profile", "quality_gate", "--chapter", "1", *files)
    assert r.exit_code == 3 and "JUDGE_INPUT_LEAK" in r.stderr and "arm_name×1" in r.stderr
    # a directory all candidates share ("replay") is no arm label: text may mention it
    files[0].write_text(text + " replay ", encoding="utf-8")
    files[1].write_text(text[:600], encoding="utf-8")
    r = muse("judge", "--book", panel.book.root, "--profile", "quality_gate", "--chapter", "1", *files)
    assert r.exit_code == 4 and "skipped(no model configured)" in r.stdout, r.stderr


def test_the_item_name_is_shown_as_given(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    """--item names the item for the author: shown as typed (the judges see only its blind reference)."""
    good = output(lambda b: good_report(b, 4.5))
    panel = make_panel(corpus_candidates(1), [[good], [good]] * 2)
    args = [a if a != "item-1" else "第3回 张飞怒鞭督邮" for a in _args(panel)]
    doc = json.loads(muse(*args, "--json").stdout)
    assert doc["item_id"] == "第3回 张飞怒鞭督邮" and doc["item_ref"].startswith("item_")
    human = muse(*args, "--no-lessons")
    assert "item 第3回 张飞怒鞭督邮" in human.stdout and human.stdout.count(doc["item_ref"]) <= 1, human.stdout


def test_arm_letters_are_refused_in_every_field_but_the_candidate_text(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    """Seed 000: before unblinding only random candidate ids appear, never A/B/C. An arm letter in the outline or an
    assertion (fields the judge reads beside the candidates) fails closed before any request; the same letter in a
    candidate's own text is an ordinary word (A计划) and is judged."""
    cands = corpus_candidates(2)
    panel = make_panel([Candidate("A", "A计划：" + cands[0].text), cands[1]], None)
    files = _files(panel)
    outline = panel.book.root / "0001.yaml"
    base = ["judge", "--book", panel.book.root, "--profile", "writer_replay", *files, "--scene-type", "battle"]
    outline.write_text(
        "chapter: 1\ngoal: 刘关张结义\nhard_events:\n  - {id: E1, text: 桃园结义}\nhook: 投军\n", "utf-8"
    )
    r = muse(*base, "--outline", outline)
    assert r.exit_code == 4, r.stderr  # no leak (the candidate's A计划 is its own text); no judge model: not evaluated
    outline.write_text(
        "chapter: 1\ngoal: 刘关张结义\nhard_events:\n  - {id: E1, text: 桃园结义}\nhook: 按B计划投军\n", "utf-8"
    )
    r = muse(*base, "--outline", outline)
    assert r.exit_code == 3 and "JUDGE_INPUT_LEAK" in r.stderr and "arm_name×1" in r.stderr
    assert "outside the candidate texts" in r.stderr
    asserts = panel.book.root / "asserts.yaml"
    asserts.write_text("- {id: a1, text: 走C路线的人获胜}\n", "utf-8")
    outline.write_text(
        "chapter: 1\ngoal: 刘关张结义\nhard_events:\n  - {id: E1, text: 桃园结义}\nhook: 投军\n", "utf-8"
    )
    r = muse(*base, "--outline", outline, "--assertions", asserts)
    assert r.exit_code == 3 and "JUDGE_INPUT_LEAK" in r.stderr


def test_fine_outline_replay_never_shows_a_judge_the_target_chapter(muse, make_panel: Callable[..., Panel]) -> None:  # type: ignore[no-untyped-def]
    """Seed 000 细纲回放: judged only against a frozen snapshot and the reference scaffold, never the target chapter —
    the input builder refuses text of chapter N or later anywhere a judge reads (candidates, reference, assertions)."""
    from ._helpers import sanguo_chapter

    panel = make_panel(corpus_candidates(1), None)
    root = panel.book.root
    (root / "chapters").mkdir()
    for n in (1, 2, 3):
        (root / "chapters" / f"{n:04d}.md").write_text(f"# 第{n}回\n{sanguo_chapter(n)}\n", encoding="utf-8")
    sentence = sanguo_chapter(2)[200:230]  # 30 characters of chapter 2's text
    outline = root / "ref.yaml"
    outline.write_text("chapter: 2\ngoal: 张飞怒鞭督邮\nhard_events:\n  - {id: E1, text: 督邮索贿}\n", "utf-8")
    candidate = root / "cand.txt"
    candidate.write_text(f"目标：张飞怒鞭督邮。关键事件：{sentence}。钩子：何进召外兵。", encoding="utf-8")
    base = ["judge", "--book", root, "--profile", "fine_outline_replay", "--outline", outline, candidate]
    r = muse(*base, "--chapter", "2")
    assert r.exit_code == 3 and "JUDGE_FUTURE_TEXT" in r.stderr and "candidates×1" in r.stderr
    assert sentence not in r.stderr  # the error counts fields, never quotes the text
    r = muse(*base, "--chapter", "3")  # chapter 2 is the past for chapter 3: allowed (no judge model: not evaluated)
    assert r.exit_code == 4, r.stderr
    candidate.write_text("目标：张飞怒鞭督邮。关键事件：督邮索贿不成。钩子：何进召外兵。", encoding="utf-8")
    outline.write_text(
        f"chapter: 2\ngoal: 张飞怒鞭督邮\nhard_events:\n  - {{id: E1, text: {sentence}}}\n", encoding="utf-8"
    )
    r = muse(*base, "--chapter", "2")  # the reference scaffold may not quote it either
    assert r.exit_code == 3 and "fineOutline×1" in r.stderr
