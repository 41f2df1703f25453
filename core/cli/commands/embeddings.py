"""`python -m core embeddings …` — set-like compositionality of sentence encoders (SetLike, features E1–E5).

  embeddings score --encoder minilm|local|openai[:model] [--data FILE] --out REPORT.json [--samples-out SAMPLES.csv]
  embeddings fuse  --model local/smollm2 --data TRIPLES.csv --out TUPLES.csv
  embeddings encoders
"""

from __future__ import annotations

import sys
from pathlib import Path

from core.errors import UserError
from core.files import check_output_path


def _floats(text: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UserError(f"--eps expects comma-separated numbers, got {text!r}") from None
    if not vals:
        raise UserError("--eps needs at least one value")
    return vals


DATA_SUFFIXES = (".csv", ".tsv", ".txt")


def _check_data(path: str) -> None:
    if Path(path).suffix.lower() not in DATA_SUFFIXES:
        raise UserError(f"--data expects a CSV file (columns s_prev,s_curr,s_next,s1,s2 or operator,a,b,target), "
                        f"got {path!r}")


def _write(writer, data, path: str) -> None:
    try:
        writer(data, path)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def _progress(label: str):
    state = {"last": -1}

    def cb(done: int, total: int) -> None:
        pct = int(100 * done / total) if total else 100
        if pct != state["last"] and (pct % 10 == 0 or done == total):
            state["last"] = pct
            print(f"{label}: {done}/{total} ({pct}%)", file=sys.stderr, flush=True)
    return cb


def cmd_score(args) -> int:
    from core.embeddings.pipeline import score
    from core.embeddings.report import write_report, write_samples_csv
    from core.embeddings.samples import build_samples, demo_path, load_any, load_demo

    if args.grid < 2:
        raise UserError("--grid must be at least 2")
    eps = tuple(sorted({0.0, *_floats(args.eps)}))      # ε = 0 always reported (the headline keys)
    check_output_path(args.out, (".json",), flag="--out")
    if args.samples_out:
        check_output_path(args.samples_out, (".csv",), flag="--samples-out")
    if args.data:
        _check_data(args.data)
        kind, samples, tuples = load_any(args.data)
        source = str(args.data)
    else:
        tuples = load_demo()
        samples, kind, source = build_samples(tuples), "tuples", f"demo ({demo_path().name})"
    result = score(samples, args.encoder, tuples=tuples, source=source, db_path=args.db,
                   use_cache=not args.no_cache, diff_max_cos=args.diff_max_cos, eps=eps,
                   grid_size=args.grid, progress=_progress(f"embedding ({args.encoder})"))
    r = result.report
    _write(write_report, r, args.out)
    if args.samples_out:
        _write(write_samples_csv, result.rows, args.samples_out)
    counts = r["data"]["counts"]
    print(f"encoder {r['encoder']} ({r['encoder_label']}, dim {r['dim']}); data {source}: {kind}, "
          f"{counts['overlap']} overlap / {counts['difference']} difference / {counts['union']} union samples; "
          f"texts embedded {r['embedding']['embedded']}, from cache {r['embedding']['cached']}")
    ref = r["paper"]
    twin = ref.get("counterpart")

    def pct(x):
        return "n/a" if x is None else f"{x:.2f}"
    print(f"{'cosine':<14}{'eps=0':>9}{'grid avg':>10}   paper ({twin or 'n/a'}; LLM encoders)")
    for key, pkey, llm in (("C1_both", "C1_both_cosine", "C1_TT"), ("C3_both", "C3_both_cosine", "C3_TT"),
                           ("C4", "C4_cosine", "C4_cosine")):
        lo, hi = ref["llm_range"][llm]
        print(f"{key:<14}{pct(r[f'{key}_cosine_eps0']):>9}{pct(r[f'{key}_cosine_grid']):>10}   "
              f"{pct(ref.get(pkey)) if twin else 'n/a'}; {lo:g}–{hi:g}")
    print(f"C2 between (tol 0.05) {pct(r['C2_between_tol0.05'])} · C5 near A (θ 0.25) "
          f"{pct(r['C5_near_a_theta0.25'])} · C6 met (θ 0.25) {pct(r['C6_met_theta0.25'])}, comparable norms "
          f"{pct(r['C6_case_comparable'])}")
    print(f"wrote {args.out}" + (f" and {args.samples_out}" if args.samples_out else ""))
    return 0


def cmd_fuse(args) -> int:
    from core.embeddings.fusion import fuse_tuples, max_words
    from core.embeddings.samples import load_triples, write_tuples

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, got {args.limit}")
    check_output_path(args.out, (".csv",), flag="--out")
    _check_data(args.data)
    triples = load_triples(args.data)
    if args.limit:
        triples = triples[: args.limit]
    out = fuse_tuples(triples, args.model, base_url=args.base_url, db_path=args.db, use_cache=not args.no_cache,
                      progress=_progress(f"fusing ({args.model})"))
    empty = sum(1 for t in out for s in (t.s1, t.s2) if not s)
    over = sum(1 for t in out for s, x, y in ((t.s1, t.s_prev, t.s_curr), (t.s2, t.s_curr, t.s_next))
               if s and len(s.split()) > max_words(x, y))
    _write(write_tuples, out, args.out)
    print(f"fused {2 * len(out)} pairs with {args.model}: {empty} empty replies, {over} over the word budget; "
          f"wrote {args.out}")
    return 0


def cmd_encoders(args) -> int:
    from core.embeddings.encoders import available_encoders

    for info in available_encoders():
        print(f"{info.name:<8}{'yes' if info.available else 'no ':<5}{info.label} — {info.reason}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("embeddings", help="set-like compositionality of sentence encoders (SetLike)",
                              description="Set-like compositionality of sentence encoders: score criteria C1–C6 on "
                                          "the shipped demo set or your CSV, fuse sentence triples with a chat "
                                          "model, list the encoders available here.")
    sub = p.add_subparsers(dest="embeddings_command", metavar="SUBCOMMAND")

    s = sub.add_parser("score", help="embed samples and evaluate criteria C1–C6",
                       description="Embed the samples with an encoder (cached in the DuckDB store) and write every "
                                   "criterion per measure and margin to REPORT.json (headline keys "
                                   "C1_both_cosine_eps0, C3_both_cosine_eps0, C4_cosine_eps0, in %) and one row per "
                                   "sample to SAMPLES.csv (operator, a, b, target, cos_ab, cos_at, cos_bt …).")
    s.add_argument("--encoder", default="minilm", help="minilm | local | openai[:model] (default minilm)")
    s.add_argument("--data", help="CSV of sentence tuples (s_prev,s_curr,s_next,s1,s2) or samples "
                                  "(operator,a,b,target); default: the shipped demo set")
    s.add_argument("--out", required=True, help="REPORT.json path")
    s.add_argument("--samples-out", help="SAMPLES.csv path (one row per sample)")
    s.add_argument("--eps", default="0,0.01,0.02,0.05,0.1", help="margins ε reported individually (comma list)")
    s.add_argument("--grid", type=int, default=132, help="ε grid size for the paper-style average (default 132)")
    s.add_argument("--diff-max-cos", type=float, default=None,
                   help="paper's filter: keep difference samples only if their source pair has cosine below this "
                        "(e.g. 0.25)")
    s.add_argument("--db", help="DuckDB file for the embedding cache (default $STUDIO_DB or .studio/studio.duckdb)")
    s.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    s.set_defaults(func=cmd_score)

    f = sub.add_parser("fuse", help="make S1/S2 fusions of consecutive-sentence triples with a chat model",
                       description="Ask a chat model (through the cached runner) to fuse S_prev+S_curr into S1 and "
                                   "S_curr+S_next into S2 with the paper's paraphraser instruction and word budget; "
                                   "writes a tuples CSV that embeddings score --data reads.")
    f.add_argument("--model", default="local/smollm2", help="model spec, e.g. local/smollm2, openai/gpt-4o-mini")
    f.add_argument("--base-url", help="for openai-compatible/<model>")
    f.add_argument("--data", required=True, help="CSV with s_prev,s_curr,s_next (id, topic optional)")
    f.add_argument("--out", required=True, help="tuples CSV to write (with s1, s2)")
    f.add_argument("--limit", type=int, default=None, help="only the first N triples")
    f.add_argument("--db", help="DuckDB file for the response cache")
    f.add_argument("--no-cache", action="store_true")
    f.set_defaults(func=cmd_fuse)

    e = sub.add_parser("encoders", help="list encoders and whether they can run here")
    e.set_defaults(func=cmd_encoders)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
