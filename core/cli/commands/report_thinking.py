"""`python -m core report thinking --run R [--run R2 …] [--out F.csv|.json]` — what thinking buys, per model and
effort level (core/analysis/effort.py: ``thinking_buys``).

Prints one table per model — accuracy, the spread across configurations (std, the paper's robustness score),
reasoning tokens and US$ per item — then each level against the next one asked, paired on the same draws, and the
deceptive swap effect at each level with its change (the interaction), from the statistics engine. ``--out`` writes
the levels table (``F.csv`` / ``F.json``) and the contrasts beside it (``F.contrasts.csv`` / ``.json``).
"""

from __future__ import annotations

import argparse
import math

from core.cli.commands.options import add_db_option
from core.cli.commands.report_output import OUT_SUFFIXES, filters_arg, runs_arg, write_table
from core.errors import UserError


def register(sub) -> None:
    from core.analysis import SCORINGS

    p = sub.add_parser(
        "thinking", help="what thinking buys: accuracy, spread, reasoning tokens and cost per effort level",
        description="Per model and reasoning effort: accuracy, the spread across configurations (std of "
                    "per-configuration accuracy), reasoning tokens and US$ per item; then each level against the "
                    "next, paired on the same draws (sign-flip p, bootstrap interval, Holm), and the deceptive "
                    "swap effect at each level with its change between levels.")
    add_db_option(p)
    p.add_argument("--run", action="append", default=[],
                   help="run id or 'latest' (the default); repeat it or join ids by commas for several runs")
    p.add_argument("--scoring", choices=SCORINGS, default="strict",
                   help="whose verdict: strict = the reference's answer rule (default), lenient = our parser")
    p.add_argument("--filter", action="append", default=[], metavar="COL=V1,V2",
                   help="keep rows whose COL is one of the values (repeatable)")
    p.add_argument("--out", default=None, help="also write the tables: .csv or .json (contrasts beside it)")
    p.set_defaults(func=main)


def _num(v, fmt: str) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def text_tables(result: dict) -> list[str]:
    """The printed form of ``thinking_buys``: a levels table per series (a model and a provenance; the runs made
    here it pools named), then one line per contrast."""
    from core.analysis.reasoning import describe_levels, who

    levels, contrasts = result["levels"], result["contrasts"]
    lines = []
    for _, rows in levels.groupby("series", sort=False):
        lines += [who(rows.iloc[0]), f"  {'effort':<8} {'configs':>7} {'answered':>8} {'accuracy %':>10} "
                              f"{'spread (std)':>12} {'reasoning tok/item':>18} {'US$/item':>10}"]
        for r in rows.to_dict("records"):
            lines.append(f"  {r['reasoning'] or 'none':<8} {r['configs']:>7} {r['answered']:>8} "
                         f"{_num(r['accuracy'], '.1f'):>10} {_num(r['spread'], '.1f'):>12} "
                         f"{_num(r['reasoning_tokens_per_item'], ',.0f'):>18} {_num(r['cost_per_item'], '.5f'):>10}")
    if len(contrasts):
        lines += ["", "paired on the same draws (points; interval 95 % bootstrap; p sign-flip, Holm-adjusted):"]
        lines += [f"  {x}" for x in describe_levels(contrasts)]
    return lines


def main(args: argparse.Namespace) -> int:
    from core import store
    from core.analysis.effort import thinking_buys
    from core.files import check_output_path

    out = check_output_path(args.out, OUT_SUFFIXES, flag="--out") if args.out else None
    filters = filters_arg(args.filter)
    run_ids = runs_arg(args.db, args.run or ["latest"])
    with store.connect(args.db) as con:
        result = thinking_buys(con, run_ids, filters=filters or None, scoring=args.scoring)
    if result["levels"].empty:
        raise UserError(f"run {', '.join(run_ids)} has no answered items with a reasoning effort"
                        + (" in this slice" if filters else "") + "; nothing to report")
    print("\n".join(text_tables(result)))
    if out is not None:
        write_table(result["levels"], out)
        beside = out.with_name(f"{out.stem}.contrasts{out.suffix}")
        write_table(result["contrasts"], beside)
        print(f"wrote {len(result['levels'])} level(s) to {out} and {len(result['contrasts'])} contrast(s) to "
              f"{beside}")
    return 0
