"""The writer role's write task: messages are a pure function of the WriterContext; the final round has no
request field; templates are sent without their version header."""

from __future__ import annotations

from novelmuse.llm import strict_json_schema
from novelmuse.roles.writer import (
    ChapterDraft,
    Excerpt,
    FactLine,
    FinalChapterDraft,
    OutlineLine,
    PriorChapter,
    WriterContext,
    render_write,
    write_schema_sha256,
)


def _ctx(**over: object) -> WriterContext:
    base: dict[str, object] = {
        "chapter": 12,
        "label": "第12回",
        "title": "陶恭祖三让徐州",
        "scene": "转折",
        "goal": "陶谦让徐州",
        "min_chars": 3000,
        "max_chars": 6000,
        "constraints": [
            OutlineLine(id="E1", text="硬事件：陶谦病重"),
            OutlineLine(id="hook", text="章末钩子：吕布来投"),
        ],
        "beats": [OutlineLine(id="B1", text="糜竺进言")],
        "entities": ["刘备", "陶谦"],
        "facts": [FactLine(text="刘备的状态：在世（自第1章起）", basis="作者设定")],
        "prior_chapters": [PriorChapter(chapter=11, title="第十一回", text="却说……", omitted_before=True)],
        "readback": [Excerpt(purpose="刘备此前出场", text="玄德曰：“备已许人。”"), Excerpt(purpose="空的", text="")],
        "style": [Excerpt(purpose="章末钩子（1）", text="且听下文分解。")],
        "forbidden": ["后宫"],
        "preferences": ["多对话"],
    }
    return WriterContext.model_validate(base | over)


def test_messages_are_a_pure_function_of_the_context() -> None:
    a, b = render_write(_ctx()), render_write(_ctx())
    assert a.messages == b.messages and a.messages_sha256 == b.messages_sha256
    assert [m.role for m in a.messages] == ["system", "user"]
    user = a.messages[1].content
    for text in (
        "E1　硬事件：陶谦病重",
        "B1　糜竺进言",
        "〔作者设定〕",
        "—— 第十一回 ——",
        "（本章前面部分从略）",
        "〔刘备此前出场〕\n玄德曰",
        "后宫",
        "多对话",
        "3000–6000 字",
        "evidence_requests",
    ):
        assert text in user, text
    assert "空的" not in user  # an empty slot shows nothing
    assert "$" not in user and not user.startswith("# version") and "# version" not in a.messages[0].content
    other = render_write(_ctx(goal="另一个目标"))
    assert other.messages_sha256 != a.messages_sha256 and other.prompt_sha256 == a.prompt_sha256


def test_the_final_round_has_no_request_field_anywhere() -> None:
    final = render_write(_ctx(), allow_requests=False)
    assert "evidence_requests" not in final.messages[1].content
    assert (
        final.schema is FinalChapterDraft
        and "evidence_requests" not in strict_json_schema(FinalChapterDraft)["properties"]
    )
    assert "evidence_requests" in strict_json_schema(ChapterDraft)["properties"]
    assert final.schema_sha256 == write_schema_sha256(False) != write_schema_sha256(True)


def test_an_empty_context_renders_none_markers() -> None:
    empty = _ctx(
        constraints=[],
        beats=[],
        entities=[],
        facts=[],
        prior_chapters=[],
        readback=[],
        style=[],
        forbidden=[],
        preferences=[],
        min_chars=None,
        max_chars=None,
        scene="",
        goal="",
    )
    user = render_write(empty).messages[1].content
    assert user.count("（无）") >= 8 and "篇幅：不限" in user and "场景类型：未指定" in user
