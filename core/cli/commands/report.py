"""`python -m core report …` — reports on stored runs. A command group: each report kind is a subcommand.

    python -m core report html --run R [--run R2 …] --out F.html [--title T] [--filter col=v1,v2 …] [--db PATH]

``html``: one self-contained HTML file (Plotly inline, no server) with the runs, violins, error table, robustness
profile and comparison of the selected runs (``core.analysis.report``) — to mail or attach to a paper.
To add a kind, write ``_register_<kind>(group)`` and call it from ``register``.
"""

from __future__ import annotations

import argparse
import os
import sys


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="reports on stored runs (html: a self-contained HTML report)",
                              description="Reports on stored runs. Choose a kind: html.")
    group = p.add_subparsers(dest="report_kind", metavar="KIND")
    _register_html(group)
    p.set_defaults(func=lambda args: _no_kind(p))


def _no_kind(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _register_html(group) -> None:
    p = group.add_parser(
        "html", help="one self-contained HTML file: violins, error table, robustness, comparison",
        description="Write a static, self-contained HTML report (Plotly inline, no server) of one or more runs: the "
                    "runs, violins of per-configuration accuracy, the error-analysis table (set operations) or "
                    "quantifier metrics, the robustness profile and, with two or more runs, their comparison.")
    p.add_argument("--run", action="append", required=True, metavar="RUN",
                   help="run id or 'latest'; repeat for several runs (compared in this order: the first is A)")
    p.add_argument("--out", required=True, help="output file (.html)")
    p.add_argument("--title", default=None, help="title of the report (default: the runs' names)")
    p.add_argument("--filter", action="append", default=[], metavar="COL=V1,V2",
                   help="keep only rows whose column holds one of the values (repeatable), as the pages' slice")
    p.add_argument("--db", default=None, help="DuckDB file (default: $STUDIO_DB or .studio/studio.duckdb)")
    p.set_defaults(func=html_main)


def html_main(args: argparse.Namespace) -> int:
    from core import store
    from core.analysis import filters_from_pairs
    from core.analysis.report import html_report
    from core.errors import UserError
    from core.files import check_output_path

    out = check_output_path(args.out, (".html", ".htm"), flag="--out")
    bad = [f for f in args.filter if "=" not in f]
    if bad:
        raise UserError(f"--filter {bad[0]!r}: write it as column=value1,value2")
    filters = filters_from_pairs(args.filter)
    with store.connect(args.db) as con:
        run_ids = [store.resolve_run_id(con, r) for r in args.run]
        text = html_report(con, run_ids, title=args.title, filters=filters or None)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    print(f"wrote a report of {len(run_ids)} run(s) to {out} ({len(text.encode('utf-8')) / 1e6:.1f} MB)")
    return 0
