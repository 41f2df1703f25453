"""`python -m core report …` — reports over stored runs, one sub-command per report (a group, so more can join).

    python -m core report errors --run R [--run R2 …] --by COL[,COL…] --scoring strict|lenient --out F.csv|.json
        the SetLexSem error-analysis table, one row per group, with the reference's column names and formulas
        (core/analysis/error_table.py: reference_error_table); several runs are split by model (or run)
    python -m core report html --run R [--run R2 …] --out F.html [--title T] [--filter col=v1,v2 …] [--db PATH]
        one self-contained HTML file (Plotly inline, no server) with the runs, violins, error table, robustness
        profile and comparison of the selected runs (core/analysis/report.py) — to mail or attach to a paper

    python -m core report findings --run R [--run R2 …] --format json|md|html --out F   (report_findings.py)
    python -m core report table --run R --by FACTOR[,FACTOR…] --out F.csv|.json             (report_findings.py)
    python -m core report compare --run A --run B [--scoring …] --format json|md --out F     (report_compare.py)
    python -m core report thinking --run R [--out F.csv|.json]   what thinking buys per effort (report_thinking.py)

A report module adds itself to REPORTS: ``name -> register(subparsers)``.
"""

from __future__ import annotations

import argparse
import os

from core.cli.commands.options import add_db_option
from core.cli.commands.report_output import OUT_SUFFIXES, filters_arg, plain, runs_arg, table_args, write_table  # noqa: F401
from core.errors import UserError


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="reports over stored runs (see: python -m core report --help)",
                              description="Reports over stored runs.")
    sub = p.add_subparsers(dest="report", metavar="REPORT")
    for add in REPORTS.values():
        add(sub)
    p.set_defaults(func=lambda args: _no_report(p))


def _no_report(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


# ---------------------------------------------------------------------------------------------------- errors

def _register_errors(sub) -> None:
    from core.analysis import SCORINGS, UNPARSED

    p = sub.add_parser(
        "errors", help="the error-analysis table of the SetLexSem paper (reference column names and formulas)",
        description="One row per group of --by with the reference's columns: accuracy, accuracy_non_empty, "
                    "pct_nullset_correct, pct_nullset_wrong, pct_with_made_up_vals, n_comparisons, n_correct, "
                    "n_wrong, empty_set_equal_count, empty_set_mismatch_count, made_up_vals_sum, "
                    "did_not_follow_instruction, top1..3_mistake, top1..3_correct — in a CSV each top-k as two "
                    "columns, its label (\"G0 vs. L1\") and top1_mistake_pct etc. (57.07); in JSON a [label, share] "
                    "pair. Set-operation items only; failed calls are left out.")
    add_db_option(p)
    p.add_argument("--run", action="append", default=[],
                   help="run id or 'latest' (the default); repeat it or join ids by commas for several runs — "
                        "split by model, or by run when two share a model, unless --by holds model or run_id")
    p.add_argument("--by", default="members,operation",
                   help="group columns joined by commas (default: members,operation); '' for one overall row")
    p.add_argument("--scoring", choices=SCORINGS, default="strict",
                   help="whose verdict: strict = the reference's answer rule (default), lenient = our parser")
    p.add_argument("--unparsed", choices=tuple(UNPARSED), default="reference",
                   help="how an answer that did not follow counts: reference = one made-up member and 'L1' "
                        "(default), ours = 'L?' and nothing made up")
    p.add_argument("--filter", action="append", default=[], metavar="COL=V1,V2",
                   help="keep rows whose COL is one of the values (repeatable)")
    p.add_argument("--out", required=True, help="output file: .csv or .json (a list of row objects)")
    p.set_defaults(func=_errors)


def _errors(args: argparse.Namespace) -> int:
    from core import analysis, store
    from core.analysis import memo

    out, by, filters, run_ids = table_args(args)
    with store.connect(args.db) as con:
        table = memo.call(con, "reference_error_table", analysis.reference_error_table, run_ids, by=by,
                          filters=filters, scoring=args.scoring, unparsed=args.unparsed, cells="plain")
        rows = analysis.run_rows(con, run_ids)
    if table.empty:
        raise UserError(f"run {', '.join(run_ids)} has no answered set-operation items"
                        + (" in this slice" if filters else "") + "; nothing to report")
    write_table(table, out)
    split = analysis.split_note(rows, by, analysis.run_split(rows, by))
    print(f"wrote {len(table)} group(s) of run {', '.join(run_ids)} ({args.scoring} scoring, unparsed answers "
          f"counted the {args.unparsed} way) to {out}" + (f"\n{split}" if split else ""))
    return 0


# ------------------------------------------------------------------------------------------------------ html
def _register_html(group) -> None:
    p = group.add_parser(
        "html", help="one self-contained HTML file: violins, error table, robustness, comparison",
        description="Write a static, self-contained HTML report (Plotly inline, no server) of one or more runs: the "
                    "runs, violins of per-configuration accuracy, the error-analysis table (set operations) or "
                    "quantifier metrics, the robustness profile and, with two or more runs, their comparison.")
    p.add_argument("--run", action="append", required=True, metavar="RUN",
                   help="run id or 'latest'; repeat for several runs (compared in this order: the first is A)")
    p.add_argument("--out", required=True, help="output file (.html)")
    p.add_argument("--scoring", choices=("strict", "lenient"), default="strict",
                   help="whose verdict: strict = the reference's answer rule (default), lenient = our parser")
    p.add_argument("--title", default=None, help="title of the report (default: the runs' names)")
    p.add_argument("--filter", action="append", default=[], metavar="COL=V1,V2",
                   help="keep only rows whose column holds one of the values (repeatable), as the pages' slice")
    add_db_option(p)
    p.set_defaults(func=html_main)


def html_main(args: argparse.Namespace) -> int:
    from core import store
    from core.analysis import filters_from_pairs
    from core.analysis.report import html_report
    from core.files import check_output_path

    out = check_output_path(args.out, (".html", ".htm"), flag="--out")
    bad = [f for f in args.filter if "=" not in f]
    if bad:
        raise UserError(f"--filter {bad[0]!r}: write it as column=value1,value2")
    filters = filters_from_pairs(args.filter)
    with store.connect(args.db) as con:
        run_ids = [store.resolve_run_id(con, r) for r in args.run]
        text = html_report(con, run_ids, title=args.title, filters=filters or None, scoring=args.scoring)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:   # disk full, read-only, the folder gone
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    print(f"wrote a report of {len(run_ids)} run(s) to {out} ({len(text.encode('utf-8')) / 1e6:.1f} MB)")
    return 0


def _register_findings(sub) -> None:
    from core.cli.commands.report_findings import register_findings

    register_findings(sub)


def _register_table(sub) -> None:
    from core.cli.commands.report_findings import register_table

    register_table(sub)


def _register_thinking(sub) -> None:
    from core.cli.commands.report_thinking import register

    register(sub)


def _register_compare(sub) -> None:
    from core.cli.commands.report_compare import register_compare

    register_compare(sub)


REPORTS = {"errors": _register_errors, "html": _register_html, "findings": _register_findings,
           "table": _register_table, "compare": _register_compare, "thinking": _register_thinking}
