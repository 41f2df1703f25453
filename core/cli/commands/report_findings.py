"""`python -m core report findings` and `report table` — the SetLexSem paper's findings as tested verdicts, and the
reference's get_stats table (core/analysis/findings.py).

    python -m core report findings --run R [--run R2 …] [--scoring strict|lenient] [--alpha 0.05]
        [--only ID[,ID…]] [--family finding|report] --format json|md|html --out F
    python -m core report table --run R [--run R2 …] --by FACTOR[,FACTOR…] [--scoring …] [--filter COL=V…] --out F
"""

from __future__ import annotations

import argparse
import json
import os

from core.cli.commands.options import add_db_option
from core.cli.commands.report_output import write_text
from core.errors import UserError


def _runs(args) -> list[str]:
    from core.cli.commands.report_output import runs_arg

    return runs_arg(args.db, args.run or ["latest"])


def register_findings(sub) -> None:
    from core.analysis import SCORINGS
    from core.analysis.findings import FINDINGS

    p = sub.add_parser(
        "findings", help="every hypothesis and figure of the SetLexSem paper as a tested verdict",
        description="For each finding (the reference's hypo_name as id) and each model: directional contrasts "
                    "between levels (estimate = accuracy of a minus b, in points, over independent draws of (A, B); "
                    "levels compared only where every other factor is equal; permutation p; bootstrap 95 % "
                    "interval; Holm-adjusted p within the finding's family), the spread over configurations "
                    "(Brown–Forsythe), the reference's get_stats table and the paper's numbers. Ids: "
                    + ", ".join(f.id for f in FINDINGS))
    add_db_option(p)
    p.add_argument("--run", action="append", default=[], help="run id or 'latest' (repeatable, or joined by commas)")
    p.add_argument("--scoring", choices=SCORINGS, default="strict",
                   help="whose verdict: strict = the reference's answer rule (default), lenient = our parser")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm's correction (0.05)")
    p.add_argument("--only", default=None, help="finding ids joined by commas (default: all)")
    p.add_argument("--family", choices=("finding", "report"), default="finding",
                   help="Holm family: each finding and model (default: its pre-specified contrasts), or every "
                        "primary contrast of the report")
    p.add_argument("--format", choices=("json", "md", "html"), default=None,
                   help="output format (default: from the --out suffix)")
    p.add_argument("--out", required=True, help="output file (.json, .md or .html)")
    p.set_defaults(func=_findings)


def _findings(args: argparse.Namespace) -> int:
    from core import store
    from core.analysis import findings, findings_report, findings_view
    from core.files import check_output_path

    fmt = args.format or {".json": "json", ".md": "md", ".html": "html", ".htm": "html"}.get(
        os.path.splitext(str(args.out))[1].lower())
    if fmt is None:
        raise UserError("--format: json, md or html (or an --out ending in .json, .md or .html)")
    out = check_output_path(args.out, {"json": (".json",), "md": (".md", ".markdown"),
                                       "html": (".html", ".htm")}[fmt], flag="--out")
    only = [i.strip() for i in (args.only or "").split(",") if i.strip()] or None
    known = [*findings.BY_ID, findings.reasoning.FINDING_ID]
    unknown = [i for i in only or () if i not in known]
    if unknown:
        raise UserError(f"--only: unknown finding {unknown[0]!r}; known: {', '.join(known)}")
    run_ids = _runs(args)
    with store.connect(args.db) as con:
        rep = findings_report(con, run_ids, scoring=args.scoring, alpha=args.alpha, only=only, family=args.family)
        if fmt == "html":
            text = findings_view.to_html(con, rep, run_ids)
    if fmt == "json":
        text = json.dumps(rep, ensure_ascii=False, indent=1, default=str) + "\n"
    elif fmt == "md":
        text = findings_view.to_markdown(rep)
    write_text(out, text)
    answered = sum(1 for f in rep["findings"] if f["applicable"])
    significant = sum(1 for f in rep["findings"] for c in f["contrasts"] if c.get("significant"))
    print(f"wrote {len(rep['findings'])} finding(s) of run {', '.join(run_ids)} to {out}: {answered} answerable, "
          f"{significant} significant contrast(s) after Holm ({args.family} family) at α = {args.alpha:g} "
          f"({args.scoring} scoring)")
    return 0


def register_table(sub) -> None:
    from core.analysis import SCORINGS

    p = sub.add_parser(
        "table", help="mean / std / min / max / N of per-configuration accuracy by factors (the reference's "
                      "get_stats)",
        description="One row per group of --by: mean, std, min and max of per-configuration accuracy (%), N "
                    "configurations and the items behind them. Several runs are split by model (by run when two "
                    "share a model) unless --by holds model or run_id; a column that changes inside a "
                    "configuration (a deceptive item's parts of speech) is refused, never split into pieces.")
    add_db_option(p)
    p.add_argument("--run", action="append", default=[], help="run id or 'latest' (repeatable, or joined by commas)")
    p.add_argument("--by", default="operation,members", help="factors joined by commas (default: operation,members)")
    p.add_argument("--scoring", choices=SCORINGS, default="strict", help="strict (default) or lenient")
    p.add_argument("--filter", action="append", default=[], metavar="COL=V1,V2",
                   help="keep rows whose COL is one of the values (repeatable)")
    p.add_argument("--out", required=True, help="output file: .csv or .json")
    p.set_defaults(func=_table)


def _table(args: argparse.Namespace) -> int:
    from core import analysis, store
    from core.analysis.summaries import accuracy_table
    from core.cli.commands.report_output import table_args, write_table

    out, by, filters, run_ids = table_args(args)
    with store.connect(args.db) as con:
        have = set(analysis.view_columns(con))
        unknown = [c for c in by if c not in have]
        if unknown:
            raise UserError(f"--by: unknown column {unknown[0]!r}")
        try:
            table, split = accuracy_table(con, run_ids, by, filters or None, scoring=args.scoring)
        except UserError as exc:
            raise UserError(f"--by: {exc}") from None
        rows = analysis.run_rows(con, run_ids)
    if table.empty:
        raise UserError(f"run {', '.join(run_ids)} has no answered items" + (" in this slice" if filters else ""))
    write_table(table, out)
    note = analysis.split_note(rows, by, split)
    print(f"wrote {len(table)} group(s) of run {', '.join(run_ids)} ({args.scoring} scoring) to {out}"
          + (f"\n{note}" if note else ""))
    return 0
