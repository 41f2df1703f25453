"""`python -m core report compare` — run B against run A at the independent unit (core/analysis/comparison.py), the
same numbers as the Compare page.

    python -m core report compare --run A --run B [--scoring strict|lenient] [--by FACTOR[,FACTOR…]]
        [--filter COL=V1,V2 …] [--alpha 0.05] --format json|md --out F
"""

from __future__ import annotations

import argparse
import json
import os

from core.cli.commands.options import add_db_option
from core.errors import UserError


def register_compare(sub) -> None:
    from core.analysis import SCORINGS
    from core.analysis.comparison import BY

    p = sub.add_parser(
        "compare", help="run B against run A: a paired (or matched) contrast over independent draws",
        description="B − A in points of accuracy, tested at the independent unit, the drawn pair of sets: paired by "
                    "draw when the runs share draws (sign-flip permutation test, or the exact McNemar test when "
                    "each draw is one item; percentile bootstrap interval), else between draws matched on the "
                    "configuration and stratified on the draw-level factors. Per-level rows of --by with Holm's "
                    "correction; per-configuration statistics as description, never the test. Each --run is one "
                    "run (runs are never pooled); an upload is labelled as a file's claims.")
    add_db_option(p)
    p.add_argument("--run", action="append", default=[], metavar="RUN",
                   help="run id or 'latest'; exactly two: the first is A (the baseline), the second B")
    p.add_argument("--scoring", choices=SCORINGS, default="strict",
                   help="whose verdict: strict = the reference's answer rule (default), lenient = our parser")
    p.add_argument("--by", default=",".join(BY),
                   help=f"factors with a row per level, joined by commas (default: {','.join(BY)}); '' for none")
    p.add_argument("--filter", action="append", default=[], metavar="COL=V1,V2",
                   help="keep rows whose COL is one of the values (repeatable)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05; Holm for the rows)")
    p.add_argument("--format", choices=("json", "md"), default=None,
                   help="output format (default: from the --out suffix)")
    p.add_argument("--out", required=True, help="output file (.json or .md)")
    p.set_defaults(func=_compare)


def _compare(args: argparse.Namespace) -> int:
    from core import store
    from core.analysis import comparison, view_columns
    from core.cli.commands.report_output import filters_arg, runs_arg, write_text
    from core.files import check_output_path

    fmt = args.format or {".json": "json", ".md": "md", ".markdown": "md"}.get(
        os.path.splitext(str(args.out))[1].lower())
    if fmt is None:
        raise UserError("--format: json or md (or an --out ending in .json or .md)")
    out = check_output_path(args.out, {"json": (".json",), "md": (".md", ".markdown")}[fmt], flag="--out")
    if not 0 < args.alpha < 1:
        raise UserError(f"--alpha {args.alpha:g}: a level between 0 and 1, e.g. 0.05")
    if len(args.run) != 2 or any("," in r for r in args.run):
        raise UserError("--run: name exactly two runs, --run A --run B (each one run: runs are never pooled)")
    filters = filters_arg(args.filter)
    by = [c.strip() for c in str(args.by).split(",") if c.strip()]
    run_a, run_b = runs_arg(args.db, [args.run[0]])[0], runs_arg(args.db, [args.run[1]])[0]
    with store.connect(args.db) as con:
        have = set(view_columns(con))
        unknown = [c for c in by if c not in have]
        if unknown:
            raise UserError(f"--by: unknown column {unknown[0]!r}")
        res = comparison.compare_pair(con, [run_a, run_b], scoring=args.scoring, filters=filters, by=by,
                                        alpha=args.alpha)
    text = (json.dumps(res, ensure_ascii=False, indent=1, default=str) + "\n" if fmt == "json"
            else comparison.to_markdown(res))
    write_text(out, text)
    h = res["headline"]
    a, b = res["a"], res["b"]
    print(f"wrote the comparison of run {b['run_id']} (B) against run {a['run_id']} (A) to {out} "
          f"({args.scoring} scoring): "
          + comparison.headline_text(h, a["name"] or a["run_id"], b["name"] or b["run_id"]))
    for s in (a, b):
        if s["contradicted"]:
            print(f"note: {comparison.series_line(s)}")
    return 0
