"""Parse throughput of core.tasks.setops.parse.parse_set (lenient) and parse_strict (the reference's rule) on a
realistic mix of model responses.

    python bench/parse_speed.py [--n 200000] [--seed 0]

Builds responses the way chat models answer SetLexSem prompts — baseline answers in <answer> tags, chain-of-thought
in <thinking> blocks that mention the input sets, answers without tags, empty-set phrasings, truncated outputs —
parses each once and prints responses per second overall and per shape. Every parse is checked against the set the
response was built from, so the figure is for correct work. Then the same responses through the strict parser: its
throughput and, per shape, the share it reads as the built set (lenient reads them all).
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.tasks.setops.operations import OPERATIONS, SYMBOLS, apply_operation, canonical  # noqa: E402
from core.tasks.setops.parse import parse_set  # noqa: E402
from core.tasks.setops.parse_strict import parse_strict  # noqa: E402


def _words(rng, k):
    return ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(k)]


def _fmt(members, kind, rng):
    if kind == "words":
        q = rng.choice(["'", '"', ""])
        return "{" + ", ".join(f"{q}{m}{q}" for m in members) + "}"
    return "{" + ", ".join(str(m) for m in members) + "}"


def _cot(a, b, op, kind, rng):
    steps = []
    for m in a + b:
        where = "A" if m in a else "B"
        steps.append(f"- {m!s} is in {where}; checking whether it belongs in the result of the {op.replace('_', ' ')}.")
    rng.shuffle(steps)
    return (f"Set A = {_fmt(a, kind, rng)} and set B = {_fmt(b, kind, rng)}.\n"
            f"I need A {SYMBOLS[op]} B. Let me go through every member step by step.\n" + "\n".join(steps) +
            "\nNow I reflect on whether I missed any member or added one that should not be there. "
            "Everything checks out.")


SHAPES = ("baseline_tag", "cot_thinking_tag", "label_no_tag", "empty_phrase", "truncated")


def make(rng, shape):
    kind = rng.choice(["numbers", "words"])
    size = rng.choice([2, 4, 8, 16])
    pool = rng.sample(range(1000), 2 * size) if kind == "numbers" else _words(rng, 2 * size)
    a, b = pool[:size], pool[size // 2: size // 2 + size]
    op = rng.choice(OPERATIONS)
    truth = list(apply_operation(op, a, b))
    rng.shuffle(truth)
    if shape == "baseline_tag":
        return kind, f"<answer>{_fmt(truth, kind, rng)}</answer>", canonical(truth)
    if shape == "cot_thinking_tag":
        return kind, f"<thinking>\n{_cot(a, b, op, kind, rng)}\n</thinking>\n<answer>{_fmt(truth, kind, rng)}</answer>", \
            canonical(truth)
    if shape == "label_no_tag":
        return kind, f"{_cot(a, b, op, kind, rng)}\n\nFinal answer: {_fmt(truth, kind, rng)}", canonical(truth)
    if shape == "empty_phrase":
        return kind, f"<thinking>{_cot(a, b, op, kind, rng)}</thinking>\n<answer>The empty set.</answer>", ()
    text = f"<thinking>\n{_cot(a, b, op, kind, rng)}\n</thinking>\n<answer>{_fmt(truth, kind, rng)}"
    return kind, text[: len(text) - rng.randint(2, 6)], None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    weights = (0.45, 0.25, 0.15, 0.1, 0.05)
    data = [(shape, *make(rng, shape)) for shape in rng.choices(SHAPES, weights=weights, k=args.n)]
    chars = sum(len(r) for _, _, r, _ in data)
    per_shape: dict = {s: [0, 0.0] for s in SHAPES}
    t0 = time.perf_counter()
    for shape, kind, response, expected in data:
        t = time.perf_counter()
        got = parse_set(response, kind)
        per_shape[shape][1] += time.perf_counter() - t
        per_shape[shape][0] += 1
        if got.members != expected:
            raise SystemExit(f"wrong parse for {shape}: {response!r} -> {got}")
    total = time.perf_counter() - t0
    print(f"parsed {args.n:,} responses ({chars / 1e6:.1f} M chars, mean {chars / args.n:.0f} chars) "
          f"in {total:.2f} s: {args.n / total:,.0f} responses/s, {chars / total / 1e6:.2f} M chars/s (all correct)")
    for s, (n, secs) in per_shape.items():
        print(f"  {s:<18} {n:>8,}  {n / secs:>10,.0f} responses/s")
    strict_ok: dict = {s: [0, 0] for s in SHAPES}
    t0 = time.perf_counter()
    for shape, kind, response, expected in data:
        got = parse_strict(response)
        strict_ok[shape][1] += 1
        if expected is not None and got.members is not None and canonical(got.members) == expected:
            strict_ok[shape][0] += 1
    total = time.perf_counter() - t0
    print(f"strict: {args.n / total:,.0f} responses/s; share of each shape read as the built set "
          "(truncated: none expected):")
    for s, (ok, n) in strict_ok.items():
        print(f"  {s:<18} {n:>8,}  {100 * ok / n:6.1f} %")
    print(f"(single process; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} — a busy machine slows this)")


if __name__ == "__main__":
    main()
