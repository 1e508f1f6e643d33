"""Benchmark: a forbidden phrase of one repeated character compiles and matches in time linear in its length.

Issue 18 item 5: `muse check` with one 禁止 phrase of 10,000 repeated characters took 37 s, 100,000 more than
300 s — the automaton library's DFA construction grows with the square of a phrase's length. For a phrase of
1,000, 10,000 and 100,000 × 哈 (with the 41 built-in defaults, as `muse check` compiles them) this measures:

- "engine": `CompiledRules(...)` (parse + merge + automaton; rules.txt caps a phrase at 10,000 characters, so
  the 100,000 one is put in the rule set directly) and `check_texts` over 三国演义's 120 chapters plus
  one chapter holding the phrase twice inside a longer run of 哈 (so the self-overlapping phrase is matched);
- "naive": `body.count(phrase)` for every chapter and rule, the same texts — linear by construction;
- the growth ratio per tenfold length: linear is ≈ 10× (less while fixed costs dominate), quadratic ≈ 100×;
- as the baseline of the old behaviour, the DFA the library builds for this phrase alone, at 1,000 and 3,000
  characters (at 10,000 it takes tens of seconds; pass --old-at 10000 to see it).

Figures are the best of --repeat runs in process CPU time (wall time beside). Targets: each tenfold step grows
the engine's time at most 20× (linear with noise); the 100,000-character phrase compiles and checks in < 2 s.

    python benchmarks/bench_rules_phrase.py [--repeat 3] [--old-at 1000 3000]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, as bench_rules does
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import ahocorasick_rs  # noqa: E402

from bench_rules import best_of, chapters_of  # noqa: E402
from novelmuse.limits import MAX_PHRASE_CHARS  # noqa: E402
from novelmuse.rules import (  # noqa: E402
    CompiledRules,
    ForbiddenRule,
    LengthLimits,
    RuleSet,
    build_effective,
    load_defaults,
    parse_rules,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import CACHE as CORPUS  # noqa: E402

LENGTHS = (1_000, 10_000, 100_000)
TARGET_GROWTH = 20.0
TARGET_100K_SECONDS = 2.0


def engine(phrase: str, bodies: list[str]) -> int:
    """What `muse check` does with the rules: parse, merge over the defaults, compile, check every chapter. A
    phrase over rules.txt's cap (limits.MAX_PHRASE_CHARS) is put in the rule set directly: the engine below the
    parser must stay linear whatever it is given."""
    if len(phrase) <= MAX_PHRASE_CHARS:
        ruleset = parse_rules(f"禁止:{phrase}\n")
    else:
        ruleset = RuleSet(forbidden=(ForbiddenRule(phrase=phrase, line=1),))
    effective = build_effective(ruleset, load_defaults(), LengthLimits(), "bench")
    findings = CompiledRules(effective).check_texts(bodies)
    return sum(f.actual for per in findings for f in per if f.target == phrase)


def naive(phrase: str, bodies: list[str]) -> int:
    phrases = [phrase, *(p for p, _ in load_defaults().fatigue)]
    counts = [[body.count(p) for p in phrases] for body in bodies]
    return sum(row[0] for row in counts)


def old_dfa_build(phrase: str) -> float:
    """Seconds to build the DFA the library chose before the fix (one phrase, UTF-16), one run."""
    c0 = time.process_time()
    ahocorasick_rs.BytesAhoCorasick([phrase.encode("utf-16-le")], implementation=ahocorasick_rs.Implementation.DFA)
    return time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept (default 3)")
    parser.add_argument("--old-at", type=int, nargs="*", default=[1_000, 3_000], help="lengths for the old DFA")
    args = parser.parse_args(argv)
    sanguo = chapters_of((CORPUS / "sanguo_yanyi.txt").read_text(encoding="utf-8"))
    print(
        f"machine: {os.cpu_count()} core(s), load average {os.getloadavg()[0]:.2f}; one core used; "
        f"best of {args.repeat}; texts: 三国演义 ({len(sanguo)} chapters) + one chapter holding the phrase"
    )
    print(f"  {'phrase':>10}{'engine cpu ms':>15}{'wall ms':>10}{'naive cpu ms':>15}{'growth':>9}")
    ok = True
    previous: float | None = None
    for n in LENGTHS:
        phrase = "哈" * n
        bodies = [*sanguo, f"开头{phrase}哈哈哈{phrase}结尾"]
        found = engine(phrase, bodies)
        if found != naive(phrase, bodies) or found != 2:  # 哈×(2n+3) holds it twice (str.count, no overlap)
            raise SystemExit(f"{n}: engine count {found} differs from str.count")
        e_cpu, e_wall = best_of(args.repeat, lambda: engine(phrase, bodies))  # noqa: B023
        n_cpu, _ = best_of(args.repeat, lambda: naive(phrase, bodies))  # noqa: B023
        growth = "" if previous is None else f"{e_cpu / previous:.1f}x"
        if previous is not None and e_cpu / previous > TARGET_GROWTH:
            ok = False
        previous = e_cpu
        print(f"  {n:>10,}{e_cpu * 1000:15.1f}{e_wall * 1000:10.1f}{n_cpu * 1000:15.1f}{growth:>9}")
    met = previous is not None and previous < TARGET_100K_SECONDS
    ok &= met
    verdict = "met" if met else "MISSED"
    print(f"  100,000 characters: {previous:.3f} s cpu (target < {TARGET_100K_SECONDS:.0f} s: {verdict})")
    print(f"  targets: growth per tenfold length ≤ {TARGET_GROWTH:.0f}x (linear ≈ 10x, quadratic ≈ 100x)")
    old = [(n, old_dfa_build("哈" * n)) for n in args.old_at]
    shown = ", ".join(f"{n:,}: {s * 1000:,.0f} ms" for n, s in old)
    print(f"baseline, the DFA built before the fix (automaton only): {shown}")
    if len(old) >= 2:
        (n1, s1), (n2, s2) = old[0], old[-1]
        print(f"  {n2 / n1:.0f}x the length took {s2 / s1:.0f}x the time (quadratic would be {(n2 / n1) ** 2:.0f}x)")
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
