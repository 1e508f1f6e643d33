"""Terminal renderings of `muse check`, `muse rules lint` and `muse rules show` (Rich tables)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel

from ..book import Book, Chapter
from ..errors import MuseError, Outcome, exit_code
from ..rules import BookCheck, ChapterCheck, CheckReport, Finding, LintReport, ShowReport, collector_paused, flat_hits
from ..store import latest_reviews
from ..text import chapter_label

if TYPE_CHECKING:  # Rich is imported by the terminal renderings only: `muse check --json` does without it
    from rich.console import Console

#: Hits shown per finding in the terminal (all of them are in --json).
MAX_HITS_SHOWN = 3
#: Finding rows listed in the terminal by `muse check`: per chapter when several chapters have findings, and in
#: all. A Rich table row costs ~1 ms (1,000 rows of a 5M-character book took 1 s to print, more than checking
#: it): the terminal shows the first rows, each chapter not listed gets one line with its counts, the summary
#: counts everything, and --json has every finding and hit.
MAX_ROWS_PER_CHAPTER = 20
MAX_FINDING_ROWS = 100
#: Rules listed by `rules lint` and `rules show` (a 100,000-line rules file printed for ~50 s).
MAX_ROWS_TOTAL = 1000
#: Lines listed one by one in the terminal (unparsed rules.txt lines, problems, warnings, preferences); a
#: 100,000-line rules file printed them all (`rules lint` took ~50 s). --json always has all of them.
MAX_LINES_LISTED = 100
MAX_WARNINGS_NOTED = 20
CONTEXT_CHARS = 8
_SPACES = re.compile(r"\s+")


def _excerpt(body: str, start: int, end: int) -> str:
    """A short one-line context around [start, end) with the match in brackets."""
    from rich.markup import escape

    lo, hi = max(0, start - CONTEXT_CHARS), min(len(body), end + CONTEXT_CHARS)
    left = ("…" if lo > 0 else "") + body[lo:start]
    right = body[end:hi] + ("…" if hi < len(body) else "")
    flat = [_SPACES.sub(" ", s) for s in (left, body[start:end], right)]  # one line: runs of whitespace → " "
    return f"{escape(flat[0])}[bold]【{escape(flat[1])}】[/bold]{escape(flat[2])}"


def _where_cell(f: Finding, chapter: Chapter | None) -> str:
    if f.rule == "length":
        return "-"
    line = chapter.file_line if chapter is not None else None
    shown = " ".join(
        (f"{line(start)} " if line is not None else "") + f"¶{para}@{start}"
        for para, start, _ in f.hits(MAX_HITS_SHOWN)
    )
    more = f.hit_count - MAX_HITS_SHOWN
    return shown + (f" +{more}" if more > 0 else "")


def render_check(report: BookCheck, console: Console, chapter_of: Callable[[int], Chapter | None]) -> None:
    """Findings per chapter: a table (severity, rule, target, limit, actual, origin, first hits as file line and
    ¶paragraph@offset), then a context line per shown hit with its location ``chapters/0002.md:17``, then the
    summary. `chapter_of(number)` gives the chapter as checked, for the file lines and the context excerpts (None:
    offsets only).

    At most MAX_ROWS_PER_CHAPTER rows per chapter (errors come first) when several chapters have findings, and
    MAX_FINDING_ROWS rows in all; what is not listed is said, with where to see it (--chapter N, --json)."""
    from rich.markup import escape
    from rich.table import Table

    with_findings = [ch for ch in report.chapters if ch.findings]
    per_chapter = MAX_FINDING_ROWS if len(with_findings) == 1 else MAX_ROWS_PER_CHAPTER
    listed = 0
    not_listed: list[str] = []  # one line per chapter past the total, printed at once (a print costs ~65 µs)
    for ch in with_findings:
        counts = f"{ch.chars} chars, {ch.errors} error(s), {ch.warnings} warning(s)"
        room = min(per_chapter, MAX_FINDING_ROWS - listed)
        if room <= 0:
            not_listed.append(
                f"{ch.number:04d} {escape(ch.title)} — {counts}: not listed (over {MAX_FINDING_ROWS} rows shown); "
                f"see `muse check --chapter {ch.number}` or --json"
            )
            continue
        rows = ch.findings[:room]
        listed += len(rows)
        chapter = chapter_of(ch.number)
        table = Table(title=f"{escape(ch.path)} {escape(ch.title)} — {counts}", title_justify="left")
        table.add_column("severity", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("target")
        table.add_column("limit", justify="right", no_wrap=True)
        table.add_column("actual", justify="right", no_wrap=True)
        table.add_column("origin")
        table.add_column("where (line ¶paragraph@offset)" if chapter is not None else "where (¶paragraph@offset)")
        for f in rows:
            sev = "[red]error[/red]" if f.severity == "error" else "[yellow]warning[/yellow]"
            limit = "-" if f.limit is None else str(f.limit)
            table.add_row(
                sev, f.rule, escape(f.target), limit, str(f.actual), escape(f.origin), _where_cell(f, chapter)
            )
        console.print(table)
        hidden = len(ch.findings) - len(rows)
        if hidden:
            more_errors = ch.errors - sum(f.severity == "error" for f in rows)
            where = "--json" if per_chapter == MAX_FINDING_ROWS else f"`muse check --chapter {ch.number}` or --json"
            console.print(
                f"  … {hidden} more finding(s) in this chapter ({more_errors} error(s), "
                f"{hidden - more_errors} warning(s)) not listed: see {where}"
            )
        if chapter is not None:
            context = [
                f"  {escape(f.target)} {escape(f'{ch.path}:{chapter.file_line(start)} ¶{para}@{start}-{end}')}: "
                + _excerpt(chapter.body, start, end)
                for f in rows
                for para, start, end in f.hits(MAX_HITS_SHOWN)
            ]
            if context:
                console.print("\n".join(context))
    if not_listed:
        console.print("\n".join(not_listed))
    if report.gaps:
        spans = [
            chapter_label(report.chapter_unit, g.missing_from)
            + ("" if g.missing_to == g.missing_from else "–" + chapter_label(report.chapter_unit, g.missing_to))
            for g in report.gaps
        ]
        shown = ", ".join(spans[:MAX_LINES_LISTED]) + (
            f" (+{len(spans) - MAX_LINES_LISTED} more)" if len(spans) > MAX_LINES_LISTED else ""
        )
        console.print(f"[yellow]missing chapter files (gaps in the numbering): {escape(shown)}[/yellow]")
    s = report.summary
    length = "length checked" if s.length_checked else escape("length skipped (no limits in book.toml [chapters])")
    verdict = {
        "failed": "[red]FAILED[/red]",
        "passed": "[green]passed[/green]",
        "incomplete": f"[yellow]INCOMPLETE[/yellow] ({escape(report.reason or '')})",
    }.get(report.outcome, f"[yellow]skipped[/yellow] ({escape(report.reason or '')})")
    by_rule = ", ".join(f"{k} {v}" for k, v in s.by_rule.items()) or "no findings"
    console.print(
        f"{verdict}: {s.chapters} chapter(s) checked, {s.errors} error(s) in {s.chapters_with_errors} chapter(s), "
        f"{s.warnings} warning(s) in {s.chapters_with_warnings} chapter(s) ({by_rule}); {length}"
    )
    r = report.rules
    console.print(
        f"rules {r.sha256[:12]}: {r.enforced} enforced ({r.forbidden} forbidden, {r.fatigue} fatigue; defaults "
        f"v{r.defaults_version}), rules.txt {r.file}"
    )


def check_notes(report: BookCheck | CheckReport) -> list[str]:
    """Notes for stderr: defaults-only books, unparsed lines, rule warnings, a skipped registry update."""
    notes = []
    if not report.chapters:
        notes.append("note: the book has no chapters yet (chapters/NNNN.md): nothing was checked")
    r = report.rules
    if r.file == "missing":
        notes.append(f"note: no rules.txt at {r.path}: checked with the built-in defaults only")
    elif r.file == "empty":
        notes.append("note: rules.txt holds no rules: checked with the built-in defaults only")
    for u in r.unparsed[:10]:
        notes.append(
            f"warning[RULES_NOT_ENFORCED]: rules.txt line {u.line} {u.text!r} parses as no rule, so it is not "
            "enforced — run `muse rules normalize` (or `muse check --normalize`) to turn it into rules"
        )
    if len(r.unparsed) > 10:
        notes.append(f"warning[RULES_NOT_ENFORCED]: … and {len(r.unparsed) - 10} more line(s): see `muse rules lint`")
    notes.extend(f"warning[{w.code}]: {w.message}" for w in r.warnings[:MAX_WARNINGS_NOTED])
    if len(r.warnings) > MAX_WARNINGS_NOTED:
        notes.append(
            f"note: {len(r.warnings) - MAX_WARNINGS_NOTED} more warning(s) about rules.txt not listed — "
            "see `muse rules lint` or --json"
        )
    reg = report.registry
    if reg.outcome == "skipped":
        notes.append(f"note: chapter registry not updated: {reg.reason}")
    elif reg.outcome == "error":
        notes.append(f"warning[{reg.code}]: chapter registry not updated: {reg.reason}")
    return notes


def _not_listed(console: Console, hidden: int, what: str) -> None:
    if hidden > 0:
        console.print(f"  … {hidden} more {what} not listed: see --json")


_CHAPTERS_SLOT = "\x00chapters\x00"  # stands for the chapters while the rest of the document is dumped


def write_check_json(
    check: BookCheck,
    out: TextIO,
    *,
    pretty: bool = False,
    extra: Mapping[str, BaseModel | None] | None = None,
    outcome: Outcome | None = None,
) -> None:
    """`muse check --json`: the `CheckReport` document (same fields, order and values as its pydantic dump),
    then the `extra` fields (``normalize`` with --normalize) and, with `outcome`, how the command ends
    (``"exit": {"outcome", "code"}``, as every command's JSON says it). Streamed from the compact findings one
    chapter at a time — no object per hit, and the output is never held whole in memory. Compact unless `pretty`
    (then indented by 2).

    A chapter's hits are formatted in one `%` operation over its offsets; what is per rule (target, origin,
    …) is encoded once per rule, not once per finding. The garbage collector is paused meanwhile (see
    `rules.collector_paused`)."""
    with collector_paused():
        _write_check_json(check, out, pretty=pretty, extra=extra, outcome=outcome)


def _write_check_json(
    check: BookCheck,
    out: TextIO,
    *,
    pretty: bool,
    extra: Mapping[str, BaseModel | None] | None,
    outcome: Outcome | None,
) -> None:
    head = CheckReport(
        passed=check.passed,
        outcome=check.outcome,
        reason=check.reason,
        book=check.book,
        rules=check.rules,
        registry=check.registry,
        chapters=[],
        summary=check.summary,
        gaps=check.gaps,
        chapter_unit=check.chapter_unit,
    )
    doc = head.model_dump(mode="json")
    doc["chapters"] = _CHAPTERS_SLOT
    for name, value in (extra or {}).items():
        doc[name] = None if value is None else value.model_dump(mode="json")
    if outcome is not None:
        doc["exit"] = {"outcome": outcome, "code": exit_code(outcome)}
    indent = 2 if pretty else None
    text = json.dumps(doc, ensure_ascii=False, indent=indent, separators=None if pretty else (",", ":"))
    before, after = text.split(json.dumps(_CHAPTERS_SLOT))
    out.write(before)
    if not check.chapters:
        out.write("[]")
    elif pretty:
        out.write("[")
        for i, ch in enumerate(check.chapters):
            body = json.dumps(_chapter_doc(ch), ensure_ascii=False, indent=2).replace("\n", "\n    ")
            out.write(("," if i else "") + "\n    " + body)
        out.write("\n  ]")
    else:
        out.write("[")
        for i, chapter in enumerate(_chapters_json(check.chapters)):
            out.write(("," if i else "") + chapter)
        out.write("]")
    out.write(after)
    out.write("\n")
    out.flush()


def _chapter_doc(ch: ChapterCheck) -> dict[str, Any]:
    return {
        "number": ch.number,
        "title": ch.title,
        "path": ch.path,
        "sha256": ch.sha256,
        "chars": ch.chars,
        "paragraphs": ch.paragraphs,
        "length": ch.length.model_dump(mode="json"),
        "findings": [
            {
                "rule": f.rule,
                "target": f.target,
                "limit": f.limit,
                "actual": f.actual,
                "severity": f.severity,
                "origin": f.origin,
                "hits": [list(h) for h in f.hits()],
            }
            for f in ch.findings
        ],
        "errors": ch.errors,
        "warnings": ch.warnings,
    }


def _chapters_json(chapters: list[ChapterCheck]) -> Iterator[str]:
    """Each chapter as compact JSON, formatted by one `%` over all its hits (`rules.flat_hits`); what is
    per rule (target, origin, …) is encoded once per rule, as `%` template text."""
    dumps = json.dumps
    rule_parts: dict[tuple[object, ...], tuple[str, str]] = {}
    hit_formats: dict[int, str] = {}
    for ch in chapters:
        head = (
            f'{{"number":{ch.number},"title":{dumps(ch.title, ensure_ascii=False)},'
            f'"path":{dumps(ch.path, ensure_ascii=False)},"sha256":{dumps(ch.sha256)},"chars":{ch.chars},'
            f'"paragraphs":{ch.paragraphs},"length":{ch.length.model_dump_json()},"findings":['
        )
        template = [head.replace("%", "%%")]
        add = template.extend
        sep = ""
        for f in ch.findings:
            key = (f.rule, f.target, f.limit, f.severity, f.origin)
            encoded = rule_parts.get(key)
            if encoded is None:
                limit = "null" if f.limit is None else str(f.limit)
                target, origin = dumps(f.target, ensure_ascii=False), dumps(f.origin, ensure_ascii=False)
                encoded = rule_parts[key] = (
                    f'{{"rule":"{f.rule}","target":{target},"limit":{limit},"actual":'.replace("%", "%%"),
                    f',"severity":"{f.severity}","origin":{origin},"hits":['.replace("%", "%%"),
                )
            n = f.hit_count
            hits = hit_formats.get(n)
            if hits is None:
                hits = hit_formats[n] = ",".join(["[%d,%d,%d]"] * n)
            add((sep, encoded[0], str(f.actual), encoded[1], hits, "]}"))
            sep = ","
        template.append(f'],"errors":{ch.errors},"warnings":{ch.warnings}}}')
        yield "".join(template) % tuple(flat_hits(ch.findings))


def review_notes(book: Book, current_sha256: dict[int, str]) -> list[str]:
    """One line per chapter whose latest review, still bound to the file on disk, ended `finalized_with_issues`.

    Never creates a database and never fails the check: a book without one, or one that cannot be opened
    (read-only directory), simply has no review to show."""
    if not book.db_path.is_file():
        return []
    try:
        reviews = latest_reviews(book.db, current_sha256)
    except (MuseError, sqlite3.Error):
        return []
    return [
        f"note: chapter {r.chapter} was finalized with {r.open_issues} open issue(s) by `muse review`"
        f" (record {r.record_id}) — run `muse review {r.chapter}` to see them"
        for _, r in sorted(reviews.items())
        if r.current and r.status == "finalized_with_issues"
    ]


def render_lint(report: LintReport, console: Console) -> None:
    """Parsed rules, unparsed lines and problems of a rules file: at most MAX_ROWS_TOTAL rules and
    MAX_LINES_LISTED unparsed lines and problems (errors first), saying how many more --json has."""
    from rich.markup import escape
    from rich.table import Table

    console.print(f"{report.path} ({report.file})")
    rows: list[tuple[int, str, str, str]] = [(r.line, "禁止 forbidden", r.phrase, "-") for r in report.forbidden]
    rows += [(r.line, "疲劳词 fatigue", r.phrase, str(r.limit)) for r in report.fatigue]
    rows += [(p.line, "偏好 preference", p.text, "-") for p in report.preferences]
    if rows:
        table = Table(title="rules", title_justify="left")
        for col in ("line", "kind", "phrase / text", "limit"):
            table.add_column(col)
        for line, kind, text, limit in sorted(rows, key=lambda r: r[0])[:MAX_ROWS_TOTAL]:
            table.add_row(str(line), kind, escape(text), limit)
        console.print(table)
        _not_listed(console, len(rows) - MAX_ROWS_TOTAL, "rule(s)")
    for u in report.unparsed[:MAX_LINES_LISTED]:
        console.print(f"[yellow]unparsed[/yellow] line {u.line}: {escape(u.text)} — {escape(u.reason)}")
    _not_listed(console, len(report.unparsed) - MAX_LINES_LISTED, "unparsed line(s)")
    problems = sorted(report.problems, key=lambda p: p.severity != "error")  # stable: file order within each
    for p in problems[:MAX_LINES_LISTED]:
        color = "red" if p.severity == "error" else "yellow"
        console.print(f"[{color}]{p.severity}[{p.code}][/{color}] {escape(p.message)}")
    _not_listed(console, len(problems) - MAX_LINES_LISTED, "problem(s)")
    c = report.counts
    console.print(
        f"{c.forbidden} forbidden, {c.fatigue} fatigue, {c.preferences} preference(s), {c.unparsed} unparsed; "
        f"{c.errors} error(s), {c.warnings} warning(s)"
    )


def render_show(report: ShowReport, console: Console) -> None:
    """The effective rule set with each rule's origin (at most MAX_ROWS_TOTAL rows, forbidden first), and its
    sha256."""
    from rich.markup import escape
    from rich.table import Table

    eff = report.effective
    table = Table(title=f"effective rules ({len(eff.rules)})", title_justify="left")
    for col in ("kind", "phrase", "limit", "severity", "origin"):
        table.add_column(col)
    ordered = sorted(eff.rules, key=lambda r: (r.kind != "forbidden", r.origin.source != "book", r.phrase))
    for r in ordered[:MAX_ROWS_TOTAL]:
        table.add_row(r.kind, escape(r.phrase), "-" if r.limit is None else str(r.limit), r.severity, r.origin.label)
    console.print(table)
    _not_listed(console, len(ordered) - MAX_ROWS_TOTAL, "rule(s)")
    length = eff.length
    console.print(
        "length: "
        + (
            f"min_chars={length.min_chars}, max_chars={length.max_chars} (error outside; book.toml \\[chapters])"
            if length.configured
            else "not checked (no min_chars/max_chars in book.toml \\[chapters])"
        )
    )
    for p in eff.preferences[:MAX_LINES_LISTED]:
        console.print(f"preference (rules.txt line {p.line}): {escape(p.text)}")
    _not_listed(console, len(eff.preferences) - MAX_LINES_LISTED, "preference(s)")
    if eff.unparsed:
        console.print(f"{len(eff.unparsed)} unparsed line(s) not enforced — see `muse rules lint`")
    console.print(f"defaults: v{eff.defaults.version} ({eff.defaults.rules} rules, sha256 {eff.defaults.sha256})")
    console.print(f"rules.txt: {report.path} ({report.file})")
    console.print(f"sha256: {eff.sha256}")


def lint_notes(report: LintReport) -> list[str]:
    """Notes for stderr: a rules file that does not exist (only the built-in defaults apply)."""
    return (
        [f"note: no rules file at {report.path}: only the built-in defaults apply"] if report.file == "missing" else []
    )


def show_notes(report: ShowReport) -> list[str]:
    """Notes for stderr: rules.txt missing or empty (only the built-in defaults apply)."""
    return [] if report.file == "present" else [f"note: rules.txt is {report.file}: only the built-in defaults apply"]


def check_outcome(report: BookCheck | CheckReport) -> Outcome:
    """findings: an error finding (exit 1); not_evaluated: nothing was checked, or not every rule was enforced
    (exit 4 — a skip is not a pass); else ok."""
    if report.outcome == "failed":
        return "findings"
    return "ok" if report.outcome == "passed" else "not_evaluated"
