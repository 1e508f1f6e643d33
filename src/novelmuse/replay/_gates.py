"""Gate A and Gate B: pure functions of a GateInput and a pinned GateSpec (seed 003, issue 12 item 5).

The order is the seed's, the same in both gates:

1. any system / schema / hash / leak / judge anomaly anywhere in the run → ``failed``, each anomaly named
   (a sample that is not ok, an arm the run skipped for an item, an incomplete or inconsistent sample);
2. only when the run is clean and the pre-registered set itself is too small → ``insufficient``;
3. then the gate's thresholds → ``passed`` or ``failed``.

Verdicts are compared only for the same kind and the same id, and a verdict is never derived from a score:
Gate A uses verdicts only; Gate B's coverage, high-severity and oracle checks use verdicts only and its
dimension checks use scores only. Arm B (card-only, diagnostic) never enters Gate B's thresholds; it is
reported stratified by the outline's share of new characters (0 / ≤ 1/3 / > 1/3). All arithmetic is exact
(fractions), so the same input always gives the same report, byte for byte.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from ..text import canonical_json, sha256_hex
from ._input import AnomalyCategory, GateInput, Item, Mode, Sample, gate_input_sha256
from ._spec import Arm, GateSpec, exact

GateName = Literal["A", "B"]
Outcome = Literal["passed", "failed", "insufficient"]
Bucket = Literal["0", "<=1/3", ">1/3"]
BUCKETS: tuple[Bucket, ...] = ("0", "<=1/3", ">1/3")
REPORT_SCHEMA: Final = "gate-report-v1"
Figure = float | int | None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SpecRef(_Strict):
    id: str
    version: int
    sha256: str


class RubricRef(_Strict):
    id: str
    version: int
    sha256: str


class ReportAnomaly(_Strict):
    """An anomaly the gate found: a sample's own, or one the gate detected in the input's structure."""

    item_id: str | None
    arm: Arm | None
    category: AnomalyCategory
    code: str
    detail: str = ""


class SetSize(_Strict):
    """The pre-registered set's size against the spec (the only cause of `insufficient`)."""

    items: int
    min_items: int
    scene_types: dict[str, int]
    min_items_per_scene_type: int
    problems: list[str]


class Check(_Strict):
    """One threshold of the gate, with the exact figures it was decided on."""

    name: str
    passed: bool
    detail: str
    figures: dict[str, Figure]


class Stratum(_Strict):
    """Diagnostic arm vs baseline for the items of one new-character-share bucket (never a threshold)."""

    arm: Arm
    bucket: Bucket
    items: int
    mean_delta: dict[str, Figure]  # per dimension: mean (diagnostic − baseline)
    oracle_pass_rate: dict[str, Figure]  # per arm
    hard_constraint_coverage: dict[str, Figure]
    high_severity_per_chapter: dict[str, Figure]


class GateReport(_Strict):
    """The result of one gate on one gate input: deterministic, so it can be recomputed and compared."""

    schema_version: Literal["gate-report-v1"] = REPORT_SCHEMA
    gate: GateName
    outcome: Outcome
    summary: str
    mode: Mode
    run_id: str
    set_sha256: str
    gate_input_sha256: str
    gate_spec: SpecRef
    rubric: RubricRef
    anomalies: list[ReportAnomaly]
    set: SetSize
    checks: list[Check]  # empty unless the run was clean and the set sufficient
    diagnostic: list[Stratum]  # Gate B only: the diagnostic arms by new-character share


def report_sha256(report: GateReport) -> str:
    """sha256 of the report's canonical JSON (what a receipt binds)."""
    return sha256_hex(canonical_json(report.model_dump(mode="json")))


def evaluate_gate(gate: GateName, gate_input: GateInput, spec: GateSpec) -> GateReport:
    """Gate `gate` ("A" or "B") on `gate_input` under `spec`: failed (anomalies) → insufficient → thresholds."""
    anomalies = find_anomalies(gate, gate_input, spec)
    size = set_size(gate_input, spec)
    checks: list[Check] = []
    diagnostic: list[Stratum] = []
    if anomalies:
        outcome: Outcome = "failed"
        shown = "; ".join(_anomaly_text(a) for a in anomalies[:3])
        summary = f"failed: {len(anomalies)} anomal{'y' if len(anomalies) == 1 else 'ies'} ({shown}" + (
            ", …)" if len(anomalies) > 3 else ")"
        )
    elif size.problems:
        outcome = "insufficient"
        summary = "insufficient: " + "; ".join(size.problems)
    else:
        view = _View(gate_input, spec)
        checks = _gate_a_checks(view) if gate == "A" else _gate_b_checks(view)
        if gate == "B":
            diagnostic = _diagnostic(view)
        failed = [c for c in checks if not c.passed]
        outcome = "failed" if failed else "passed"
        summary = f"failed: {', '.join(c.name for c in failed)}" if failed else f"passed: all {len(checks)} checks"
    return GateReport(
        gate=gate,
        outcome=outcome,
        summary=summary,
        mode=gate_input.mode,
        run_id=gate_input.run_id,
        set_sha256=gate_input.set_sha256,
        gate_input_sha256=gate_input_sha256(gate_input),
        gate_spec=SpecRef(id=spec.id, version=spec.version, sha256=spec.sha256),
        rubric=RubricRef(id=gate_input.rubric.id, version=gate_input.rubric.version, sha256=gate_input.rubric.sha256),
        anomalies=anomalies,
        set=size,
        checks=checks,
        diagnostic=diagnostic,
    )


def evaluate_gate_a(gate_input: GateInput, spec: GateSpec) -> GateReport:
    """Gate A (is the detector trustworthy?): see `evaluate_gate`."""
    return evaluate_gate("A", gate_input, spec)


def evaluate_gate_b(gate_input: GateInput, spec: GateSpec) -> GateReport:
    """Gate B (is C better than A?): see `evaluate_gate`."""
    return evaluate_gate("B", gate_input, spec)


# ── 1. anomalies ────────────────────────────────────────────────────────────────────────────────────────


def _anomaly_text(a: ReportAnomaly) -> str:
    where = f"item {a.item_id} arm {a.arm}: " if a.item_id and a.arm else f"item {a.item_id}: " if a.item_id else ""
    return f"{where}{a.category}/{a.code}" + (f" ({a.detail})" if a.detail else "")


def _required_arms(gate: GateName, spec: GateSpec) -> list[Arm]:
    if gate == "A":
        return sorted(set(spec.gate_a.arms))
    return sorted({spec.gate_b.baseline, spec.gate_b.candidate})


def find_anomalies(gate: GateName, gate_input: GateInput, spec: GateSpec) -> list[ReportAnomaly]:
    """Every anomaly of the run, in canonical order: samples that are not ok (any arm — a compromised
    diagnostic arm compromises the run), arms the gate needs that the run did not have, items an arm
    skipped, and ok samples that are incomplete or inconsistent with their pre-registered item."""
    found: list[ReportAnomaly] = []
    for arm in _required_arms(gate, spec):
        if arm not in gate_input.arms:
            found.append(
                ReportAnomaly(item_id=None, arm=arm, category="schema", code="ARM_NOT_RUN", detail=f"gate {gate}")
            )
    samples = {(s.item_id, s.arm): s for s in gate_input.samples}
    known_kinds = spec.kinds.known
    for item in gate_input.items:
        unknown = sorted({t.kind for t in item.targets} - known_kinds)
        if unknown:
            found.append(
                ReportAnomaly(
                    item_id=item.item_id,
                    arm=None,
                    category="schema",
                    code="TARGET_KIND_UNKNOWN",
                    detail=",".join(unknown),
                )
            )
        for arm in gate_input.arms:
            sample = samples.get((item.item_id, arm))
            if sample is None:
                found.append(ReportAnomaly(item_id=item.item_id, arm=arm, category="system", code="ARM_SKIPPED"))
            elif sample.anomaly is not None:
                a = sample.anomaly
                found.append(
                    ReportAnomaly(item_id=item.item_id, arm=arm, category=a.category, code=a.code, detail=a.detail)
                )
            else:
                found.extend(_sample_anomalies(sample, item, gate_input, spec))
    return sorted(found, key=lambda a: (a.item_id or "", a.arm or "", a.category, a.code, a.detail))


def _sample_anomalies(sample: Sample, item: Item, gate_input: GateInput, spec: GateSpec) -> Iterable[ReportAnomaly]:
    def anomaly(category: AnomalyCategory, code: str, detail: str) -> ReportAnomaly:
        return ReportAnomaly(item_id=item.item_id, arm=sample.arm, category=category, code=code, detail=detail)

    dims = gate_input.rubric.dimensions
    if set(sample.scores) != dims:
        missing = sorted(dims - set(sample.scores))
        extra = sorted(set(sample.scores) - dims)
        yield anomaly("schema", "SCORES_INCOMPLETE", f"missing {missing} extra {extra}")
    if not sample.receipts:
        yield anomaly("schema", "RECEIPTS_MISSING", "an ok sample must rest on model-call receipts")
    for source, keys in (("detector", [d.key for d in sample.detector]), ("panel", [p.key for p in sample.panel])):
        dups = sorted(k for k, n in Counter(keys).items() if n > 1)
        if dups:
            yield anomaly("schema", "DUPLICATE_VERDICT", f"{source}: {_keys_text(dups)}")
    targets = {t.key for t in item.targets}
    oracle = set(spec.kinds.oracle_assertion)
    seen_oracle = sorted({d.key for d in sample.detector if d.kind in oracle})
    if seen_oracle:
        yield anomaly(
            "leak", "DETECTOR_SAW_ORACLE", f"detector verdicts on oracle assertions {_keys_text(seen_oracle)}"
        )
    constraint_kinds = set(spec.kinds.hard_constraint)
    stray = sorted({d.key for d in sample.detector if d.kind in constraint_kinds} - targets)
    stray_panel = sorted({p.key for p in sample.panel} - targets)
    if stray or stray_panel:
        yield anomaly("schema", "UNEXPECTED_VERDICT", f"not targets of the item: {_keys_text(stray + stray_panel)}")


def _keys_text(keys: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{k}:{i}" for k, i in keys[:5])
    return shown + (f" (+{len(keys) - 5} more)" if len(keys) > 5 else "")


# ── 2. the set's size ───────────────────────────────────────────────────────────────────────────────────


def set_size(gate_input: GateInput, spec: GateSpec) -> SetSize:
    """The pre-registered set's size and, when it is too small, why (the only cause of `insufficient`)."""
    per_type = Counter(i.scene_type for i in gate_input.items)
    problems: list[str] = []
    if len(gate_input.items) < spec.set.min_items:
        problems.append(f"{len(gate_input.items)} items < {spec.set.min_items}")
    for scene, n in sorted(per_type.items()):
        if n < spec.set.min_items_per_scene_type:
            problems.append(
                f"{n} item{'s' if n != 1 else ''} of scene type {scene} < {spec.set.min_items_per_scene_type}"
            )
    return SetSize(
        items=len(gate_input.items),
        min_items=spec.set.min_items,
        scene_types=dict(sorted(per_type.items())),
        min_items_per_scene_type=spec.set.min_items_per_scene_type,
        problems=problems,
    )


# ── 3. thresholds (only on a clean run over a sufficient set: every item has an ok sample per arm) ────────


class _View:
    """Verdict lookups of a clean gate input."""

    def __init__(self, gate_input: GateInput, spec: GateSpec):
        self.gi = gate_input
        self.spec = spec
        self.samples = {(s.item_id, s.arm): s for s in gate_input.samples}
        self.detector = {(s.item_id, s.arm): {d.key: d.verdict for d in s.detector} for s in gate_input.samples}
        self.panel = {(s.item_id, s.arm): {p.key: p.verdict for p in s.panel} for s in gate_input.samples}
        self.hard = set(spec.kinds.hard_constraint)

    def coverage(self, arm: Arm, items: list[Item]) -> tuple[int, int]:
        """(hard-constraint targets the detector passed, hard-constraint targets) over `items` for `arm`."""
        covered = total = 0
        for item in items:
            verdicts = self.detector[(item.item_id, arm)]
            for t in item.targets:
                if t.kind in self.hard:
                    total += 1
                    covered += verdicts.get(t.key) == "pass"
        return covered, total

    def high_findings(self, arm: Arm, items: list[Item]) -> int:
        """Detector items of a high severity that did not pass (fail or unknown), over `items` for `arm`."""
        high = set(self.spec.high_severity)
        return sum(
            1
            for item in items
            for d in self.samples[(item.item_id, arm)].detector
            if d.severity in high and d.verdict != "pass"
        )

    def oracle_passes(self, arm: Arm, items: list[Item]) -> int:
        """Samples whose panel passed every target of the item (unknown or a missing id fails the sample)."""
        return sum(
            1 for item in items if all(self.panel[(item.item_id, arm)].get(t.key) == "pass" for t in item.targets)
        )

    def score(self, item: Item, arm: Arm, dim: str) -> Fraction:
        return exact(self.samples[(item.item_id, arm)].scores[dim])

    def mean_delta(self, arm: Arm, base: Arm, dim: str, items: list[Item]) -> Fraction | None:
        if not items:
            return None
        return sum((self.score(i, arm, dim) - self.score(i, base, dim) for i in items), Fraction(0)) / len(items)


def _f(value: Fraction | None) -> Figure:
    return None if value is None else float(value)


def _rate(num: int, den: int) -> Fraction | None:
    return Fraction(num, den) if den else None


def _pct(value: Fraction | None) -> str:
    return "n/a" if value is None else f"{float(value) * 100:.1f}%"


def _pairs(view: _View) -> list[tuple[str, str, Item, Arm, str]]:
    """Every same-kind same-id pair of Gate A: (detector verdict, panel verdict, item, arm, kind:id); a verdict
    missing on either side is `unknown`."""
    out: list[tuple[str, str, Item, Arm, str]] = []
    for item in view.gi.items:
        for arm in sorted(set(view.spec.gate_a.arms)):
            det, pan = view.detector[(item.item_id, arm)], view.panel[(item.item_id, arm)]
            for t in item.targets:
                if t.kind in view.hard:
                    out.append((det.get(t.key, "unknown"), pan.get(t.key, "unknown"), item, arm, f"{t.kind}:{t.id}"))
    return out


def cohen_kappa(pairs: list[tuple[str, str]]) -> Fraction | None:
    """Cohen's κ of two raters over `pairs` of categories: (observed − chance agreement) / (1 − chance agreement),
    exact; None when chance agreement is 1 (both raters gave one and the same category throughout: agreement that
    tells nothing apart)."""
    n = len(pairs)
    if not n:
        return None
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    observed = Fraction(sum(1 for a, b in pairs if a == b), n)
    chance = sum((Fraction(left[c], n) * Fraction(right[c], n) for c in set(left) | set(right)), Fraction(0))
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


def _gate_a_v2_checks(view: _View) -> list[Check]:
    rule = view.spec.gate_a
    assert rule.min_kappa is not None and rule.min_fails_each_side is not None
    pairs = _pairs(view)
    kappa = cohen_kappa([(d, p) for d, p, *_ in pairs])
    floor = exact(rule.min_kappa)
    agreeing = sum(1 for d, p, *_ in pairs if d == p and d in ("pass", "fail"))
    figures: dict[str, Figure] = {"pairs": len(pairs), "agreeing": agreeing, "kappa": _f(kappa), "min": _f(floor)}
    if not pairs:
        detail = "no same-kind same-id pairs to compare"
    elif kappa is None:
        only = pairs[0][0]
        detail = f"every verdict on both sides is {only!r}: agreement that tells nothing apart has no κ"
    else:
        detail = (
            f"Cohen's κ {float(kappa):.3f} over {len(pairs)} same-kind same-id pairs (raw agreement {agreeing}/"
            f"{len(pairs)}), need ≥ {float(floor):.3f}"
        )
    agreement = Check(name="kappa", passed=kappa is not None and kappa >= floor, detail=detail, figures=figures)
    det_fails = sum(1 for d, *_ in pairs if d == "fail")
    pan_fails = sum(1 for _, p, *_ in pairs if p == "fail")
    need = rule.min_fails_each_side
    fails = Check(
        name="fails_each_side",
        passed=det_fails >= need and pan_fails >= need,
        detail=f"the detector failed {det_fails} pair(s), the panel {pan_fails}; need ≥ {need} on each side (a set "
        "where nothing fails shows nothing about telling broken drafts from good ones)",
        figures={"detector_fails": det_fails, "panel_fails": pan_fails, "min": need},
    )
    return [agreement, fails, _hard_event_check(pairs, view)]


def _hard_event_check(pairs: list[tuple[str, str, Item, Arm, str]], view: _View) -> Check:
    hard_event = set(view.spec.kinds.hard_event)
    violations = [
        f"{item.item_id}/{arm} {key}"
        for d, p, item, arm, key in pairs
        if key.split(":", 1)[0] in hard_event and p == "fail" and d == "pass"
    ]
    shown = ", ".join(violations[:5]) + (f" (+{len(violations) - 5} more)" if len(violations) > 5 else "")
    return Check(
        name="hard_events",
        passed=not violations,
        detail=(
            f"{len(violations)} hard-event id(s) failed by the panel but passed by the detector: {shown}"
            if violations
            else "no hard-event id failed by the panel but passed by the detector"
        ),
        figures={"violations": len(violations)},
    )


def _gate_a_checks(view: _View) -> list[Check]:
    """Gate A's thresholds: κ and fails on both sides (v2), or raw agreement (v1, kept to check its reports)."""
    spec = view.spec
    if spec.gate_a.min_kappa is not None:
        return _gate_a_v2_checks(view)
    pairs = _pairs(view)
    assert spec.gate_a.min_agreement is not None
    by_kind: Counter[str] = Counter()
    agree_by_kind: Counter[str] = Counter()
    for d, p, _item, _arm, key in pairs:
        kind = key.split(":", 1)[0]
        by_kind[kind] += 1
        agree_by_kind[kind] += d == p and d in ("pass", "fail")
    agreeing = sum(agree_by_kind.values())
    rate = _rate(agreeing, len(pairs))
    threshold = exact(spec.gate_a.min_agreement)
    figures: dict[str, Figure] = {"pairs": len(pairs), "agreeing": agreeing, "rate": _f(rate), "min": _f(threshold)}
    for kind in sorted(by_kind):
        figures[f"rate[{kind}]"] = _f(_rate(agree_by_kind[kind], by_kind[kind]))
    agreement = Check(
        name="agreement",
        passed=rate is not None and rate >= threshold,
        detail=(
            f"detector and panel agree on {agreeing}/{len(pairs)} same-kind same-id pairs ({_pct(rate)}, need ≥ "
            f"{_pct(threshold)}); a pair agrees only when both say pass or both say fail"
            if pairs
            else "no same-kind same-id pairs to compare"
        ),
        figures=figures,
    )
    return [agreement, _hard_event_check(pairs, view)]


def _gate_b_checks(view: _View) -> list[Check]:
    rule = view.spec.gate_b
    base, cand = rule.baseline, rule.candidate
    items = view.gi.items
    n = len(items)
    checks: list[Check] = []

    (cov_c, tot_c), (cov_a, tot_a) = view.coverage(cand, items), view.coverage(base, items)
    rate_c, rate_a = _rate(cov_c, tot_c), _rate(cov_a, tot_a)
    checks.append(
        Check(
            name="hard_constraint_coverage",
            passed=rate_c is not None and rate_a is not None and rate_c >= rate_a,
            detail=f"{cand} covers {cov_c}/{tot_c} ({_pct(rate_c)}), {base} {cov_a}/{tot_a} ({_pct(rate_a)}); "
            f"need {cand} ≥ {base}",
            figures={
                cand: _f(rate_c),
                base: _f(rate_a),
                f"{cand}_covered": cov_c,
                f"{base}_covered": cov_a,
                "total": tot_c,
            },
        )
    )
    high_c, high_a = view.high_findings(cand, items), view.high_findings(base, items)
    checks.append(
        Check(
            name="high_severity_per_chapter",
            passed=Fraction(high_c, n) <= Fraction(high_a, n),
            detail=f"{cand} {high_c}/{n} chapters, {base} {high_a}/{n}; need {cand} ≤ {base}",
            figures={cand: _f(Fraction(high_c, n)), base: _f(Fraction(high_a, n)), "chapters": n},
        )
    )
    pass_c, pass_a = view.oracle_passes(cand, items), view.oracle_passes(base, items)
    checks.append(
        Check(
            name="oracle_pass_rate",
            passed=pass_c >= pass_a,
            detail=f"{cand} {pass_c}/{n} samples pass every oracle target, {base} {pass_a}/{n}; need {cand} ≥ {base}",
            figures={cand: _f(Fraction(pass_c, n)), base: _f(Fraction(pass_a, n))},
        )
    )
    if rule.measures_improvement:
        checks.append(_improvement(view, items))
    floor = exact(rule.min_general_mean_delta)
    for dim in view.gi.rubric.general_dimensions:
        delta = view.mean_delta(cand, base, dim, items)
        checks.append(
            Check(
                name=f"general:{dim}",
                passed=delta is not None and delta >= floor,
                detail=f"mean {cand}−{base} {_num(delta)} over {n} items; need ≥ {_num(floor)}",
                figures={"mean_delta": _f(delta), "min": _f(floor), "items": n},
            )
        )
    scene_dim = view.gi.rubric.scene_dimension
    if scene_dim is None or rule.min_scene_mean_delta is None:  # a rubric without a scene dimension
        return checks
    scene_floor = exact(rule.min_scene_mean_delta)
    for scene in sorted({i.scene_type for i in items}):
        group = [i for i in items if i.scene_type == scene]
        delta = view.mean_delta(cand, base, scene_dim, group)
        checks.append(
            Check(
                name=f"scene:{scene}",
                passed=delta is not None and delta >= scene_floor,
                detail=f"mean {cand}−{base} {scene_dim} {_num(delta)} over {len(group)} {scene} items; "
                f"need ≥ {_num(scene_floor)}",
                figures={"mean_delta": _f(delta), "min": _f(scene_floor), "items": len(group)},
            )
        )
    return checks


def sign_test_p(positive: int, negative: int) -> Fraction:
    """One-sided exact sign test: P(X ≥ positive) for X ~ Binomial(positive + negative, 1/2) — the chance of at least
    this many items improving if improving and worsening were equally likely (1 when no item differs)."""
    n = positive + negative
    if n == 0:
        return Fraction(1)
    return Fraction(sum(math.comb(n, k) for k in range(positive, n + 1)), 2**n)


def _improvement(view: _View, items: list[Item]) -> Check:
    """The primary figure: per item, the mean C−A over the general dimensions; its mean must reach the spec's
    minimum effect and a sign test over the items must reject "no difference" (a tie is never an improvement)."""
    rule = view.spec.gate_b
    assert rule.min_effect is not None and rule.max_p_value is not None
    base, cand = rule.baseline, rule.candidate
    dims = view.gi.rubric.general_dimensions
    per_item = [
        sum((view.score(i, cand, d) - view.score(i, base, d) for d in dims), Fraction(0)) / len(dims) for i in items
    ]
    mean = sum(per_item, Fraction(0)) / len(per_item)
    up, down = sum(1 for d in per_item if d > 0), sum(1 for d in per_item if d < 0)
    p = sign_test_p(up, down)
    effect, level = exact(rule.min_effect), exact(rule.max_p_value)
    passed = mean >= effect and p <= level
    if up == 0 and down == 0:
        why = f"no detectable difference: {cand} and {base} score the same on every item"
    else:
        why = (
            f"mean per-item {cand}−{base} over the general dimensions {_num(mean)} (need ≥ {_num(effect)}); "
            f"{up} item(s) better, {down} worse, {len(per_item) - up - down} tied: sign test p = {float(p):.4f} "
            f"(need ≤ {float(level)})"
        )
    return Check(
        name="improvement",
        passed=passed,
        detail=why,
        figures={
            "mean_delta": _f(mean),
            "min_effect": _f(effect),
            "better": up,
            "worse": down,
            "tied": len(per_item) - up - down,
            "p_value": _f(p),
            "max_p_value": _f(level),
        },
    )


def _num(value: Fraction | None) -> str:
    return "n/a" if value is None else f"{float(value):+.3f}"


def new_character_bucket(item: Item) -> Bucket:
    """The item's bucket by the share of its outline's entities never mentioned before its chapter."""
    share = Fraction(item.new_characters, item.outline_entities) if item.outline_entities else Fraction(0)
    return "0" if share == 0 else "<=1/3" if share <= Fraction(1, 3) else ">1/3"


def _diagnostic(view: _View) -> list[Stratum]:
    rule = view.spec.gate_b
    base = rule.baseline
    dims = [*view.gi.rubric.general_dimensions, *view.gi.rubric.scene_dimensions]
    strata: list[Stratum] = []
    for arm in rule.diagnostic:
        if arm not in view.gi.arms:
            continue
        for bucket in BUCKETS:
            group = [i for i in view.gi.items if new_character_bucket(i) == bucket]
            pair = (arm, base)
            strata.append(
                Stratum(
                    arm=arm,
                    bucket=bucket,
                    items=len(group),
                    mean_delta={d: _f(view.mean_delta(arm, base, d, group)) for d in dims},
                    oracle_pass_rate={a: _f(_rate(view.oracle_passes(a, group), len(group))) for a in pair},
                    hard_constraint_coverage={a: _f(_rate(*view.coverage(a, group))) for a in pair},
                    high_severity_per_chapter={a: _f(_rate(view.high_findings(a, group), len(group))) for a in pair},
                )
            )
    return strata
