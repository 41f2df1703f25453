"""Two runs compared at the independent unit: the headline of the Compare page, of ``python -m core report compare``
and of the HTML report's comparison.

    compare_two(con, run_a, run_b, scoring, filters, by, alpha) -> dict   (plain JSON; B − A in points)
    headline_text(headline, a_name, b_name) -> str                        the verdict in words
    to_markdown(result) -> str                                            the CLI's Markdown
    testable(res, rule) -> bool                                           "too few draws to test" guard

How (docs/FIDELITY.md, "Comparing two runs", says the same for a reader):

1. **Cells and draws.** An item belongs to a *draw* — the drawn pair of sets, named by ``findings_catalogue.DRAW``
   (seed, sample, the sampler's factors and the sets themselves; for deceptive items the condition's outcomes — the
   parts of speech and the sets — are left out, as the findings do) — and to a *cell*: its values of every design
   factor the two runs have. A factor constant in each run but different between them (one run at one reasoning
   effort, the other at another) is what tells the runs apart, not a cell factor: it is named in ``differ_on``.
   DuckDB averages the item verdicts (0 / 100, repeated items included) per (run, draw, cell): what reaches Python is
   draws × levels, never items.
2. **Paired** when the runs share draws (two models on one grid and seed, an upload of a run made here): per shared
   draw, the mean over its cells answered by both of (B − A); the sign-flip permutation test and percentile
   bootstrap over the draws (``stats.paired_contrast``); n = shared draws. Draws only one run answered are left
   out and counted. When every shared draw holds exactly one shared cell with one item on each side, the items
   *are* the draws: the per-draw differences are 0 / ±100 and the headline is the exact McNemar test with its exact
   interval (``stats.paired_proportion_difference``) — the same p as the sign-flip test, an exact interval.
3. **Between draws** when they share none: per draw, the mean over its cells that both runs have (matched cells);
   the two runs' draws compared stratified on the draw-level factors (``stats.stratified_contrast``: label
   permutation within strata, stratified bootstrap); n = draws.
4. **Too few to test**: the engine's one rule (``stats.too_few``: fewer than ``stats.MIN_UNITS`` draws, or too few
   arrangements for a two-sided test to reach 0.05; never fewer than two draws, or two on a side between draws):
   the estimate is shown, no interval and no p.
5. **Per-factor rows** (``by``, default operation, members, condition): the same test within each level, Holm over
   all the rows (one family), labelled so.
6. **Description** (never a test): per-configuration accuracy of each run over the compared cells — mean, std, min,
   max, N — and the item-by-item agreement counts. Configurations that reuse a draw are repeated measures, so
   nothing here is tested.
7. **Provenance.** Each series is one run: runs are never pooled. Each carries its provenance (made here /
   uploaded); an upload is a file's claims, and an upload that is contradicted — its re-scoring flagged rows, or its
   replies to prompts the other run (same model) answered differ — is labelled a contradicted claim.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from core.analysis import stats
from core.analysis.draw_contrasts import draw_column, draw_sql as draw_sql_of, exact
from core.analysis.findings import plain  # a value as plain JSON: one home
from core.analysis.findings_catalogue import DRAW, WITHIN_DRAW
from core.analysis.queries import RUN_FACTORS, factor_columns
from core.analysis.sql import VIEW, check_scoring, quote, relation, scored, view_columns, where_clause
from core.errors import UserError
from core.store.scratch import temp_table

BY = ("operation", "members", "condition")
TOO_FEW = stats.TOO_FEW   # the engine's one wording of its one rule (stats.too_few)
DESCRIPTION_NOTE = ("description, not a test: configurations that reuse a draw are repeated measures, so their "
                    "per-configuration accuracies are not independent")


def testable(res: Mapping, rule: bool) -> bool:
    """Whether a contrast may show an interval and a p: ``rule`` (at least two draws; at least two on each side
    between draws) and the statistics' own ``testable`` when they give one — never looser than the rule."""
    return bool(rule and res.get("testable", rule))


# ------------------------------------------------------------------------------------------------------ the runs

def _series(con, run_ids: Sequence[str]) -> dict[str, dict]:
    from core.store.provenance import UPLOADED, of_source
    from core.store.rescore import disagreements

    rows = con.execute(f"SELECT run_id, name, model, task, source, run_json FROM runs WHERE run_id IN "
                       f"({', '.join('?' * len(run_ids))})", list(run_ids)).fetchall()
    out = {}
    for run_id, name, model, task, source, run_json in rows:
        kind = of_source(source)
        flagged = disagreements(run_json) if kind == UPLOADED else 0
        out[run_id] = {"run_id": run_id, "name": name or "", "model": model, "task": task, "provenance": kind,
                       "claim": kind == UPLOADED, "flagged_rows": int(flagged), "contradicted": bool(flagged),
                       "notes": ([f"its re-scoring flags {flagged} row(s) or more"] if flagged else [])}
    missing = [r for r in run_ids if r not in out]
    if missing:
        raise UserError(f"no run {missing[0]!r} in the database")
    return out


def _item_pairs(con, run_a: str, run_b: str, filters, scoring: str, view: str) -> dict:
    """The items both runs answered (same configuration, sample and prompt), counted in one statement: the four
    agreement counts (description) and, of the pairs where both replies are stored, how many differ."""
    rel = scored(con, view, scoring, view)
    has_reply = "response" in view_columns(con, view)
    reply = "response" if has_reply else "CAST(NULL AS VARCHAR) AS response"
    wa, pa = where_clause(con, [run_a], filters, view=view)
    wb, pb = where_clause(con, [run_b], filters, view=view)
    got = con.execute(
        f"WITH a AS (SELECT config_id, sample, prompt, correct, {reply} FROM {rel} {wa}), "
        f"b AS (SELECT config_id, sample, prompt, correct, {reply} FROM {rel} {wb}) "
        "SELECT count(*), count(*) FILTER (WHERE a.correct AND b.correct), "
        "count(*) FILTER (WHERE a.correct AND NOT b.correct), count(*) FILTER (WHERE NOT a.correct AND b.correct), "
        "count(*) FILTER (WHERE NOT a.correct AND NOT b.correct), "
        "count(*) FILTER (WHERE a.response IS NOT NULL AND b.response IS NOT NULL), "
        "count(*) FILTER (WHERE a.response IS NOT NULL AND b.response IS NOT NULL AND a.response <> b.response) "
        "FROM a JOIN b ON a.config_id = b.config_id AND a.sample IS NOT DISTINCT FROM b.sample "
        "AND a.prompt = b.prompt", pa + pb).fetchone()
    n, both, only_a, only_b, neither, replied, differ = (int(v or 0) for v in got)
    return {"items": n, "both_right": both, "only_a": only_a, "only_b": only_b, "both_wrong": neither,
            "agreement": plain((both + neither) / n) if n else None, "replied": replied, "differ": differ,
            "note": "description: items that share a draw are not independent; the headline tests the draws"}


# ------------------------------------------------------------------------------------------------------ the data

def _columns(con, run_a: str, run_b: str, view: str) -> tuple[list[str], list[str], dict]:
    """(cell factors, draw columns, differ_on) of the two runs."""
    have = set(view_columns(con, view))
    in_b = set(factor_columns(con, [run_b], view))   # a factor one run lacks cannot match a cell: averaged over
    factors = [c for c in factor_columns(con, [run_a], view) if c not in RUN_FACTORS and c in in_b]
    draw = [c for c in DRAW if c in have]
    differ: dict[str, list] = {}
    if factors:
        sel = ", ".join(f"list(DISTINCT CAST({quote(c)} AS VARCHAR))" for c in factors)
        where, params = where_clause(con, [run_a, run_b], None, view=view)
        per_run = {r[0]: r[1:] for r in con.execute(
            f"SELECT run_id, {sel} FROM {relation(con, view)} {where} GROUP BY run_id", params).fetchall()}
        if len(per_run) == 2:
            va, vb = per_run[run_a], per_run[run_b]
            for c, x, y in zip(factors, va, vb):
                x, y = [v for v in x if v is not None], [v for v in y if v is not None]
                if len(x) == 1 and len(y) == 1 and x != y:
                    differ[c] = [x[0], y[0]]
    return [c for c in factors if c not in differ], draw, differ


def _cells_sql(con, run_a, run_b, cells, draw, filters, scoring, view) -> tuple[str, list]:
    """One row per (side, draw, cell): side 0 = A, 1 = B, the draw's hash, the cell's factors, the draw-level
    strata columns (``_t_<col>``), the mean verdict (0 – 100) and the items behind it."""
    have = view_columns(con, view)
    draw_sql = draw_sql_of(have) if draw else "0"
    strata = [c for c in cells if c in DRAW and c not in WITHIN_DRAW]
    where, params = where_clause(con, [run_a, run_b], filters, view=view)
    cell_sel = "".join(f", {quote(c)}" for c in cells)
    strata_sel = "".join(f", {draw_column(c, have)} AS {quote('_t_' + c)}" for c in strata)
    sql = (f"SELECT CASE WHEN run_id = ? THEN 1 ELSE 0 END AS _side, {draw_sql} AS _draw{cell_sel}{strata_sel}, "
           f"{exact('100.0 * avg(CAST(correct AS INTEGER))')} AS y, count(*) AS items "
           f"FROM {relation(con, view, scoring)} {where} GROUP BY ALL")
    return sql, [run_b, *params]


def _on(cols: Sequence[str], left: str, right: str) -> str:
    return " AND ".join([f"{left}._draw = {right}._draw",
                         *(f"{left}.{quote(c)} IS NOT DISTINCT FROM {right}.{quote(c)}" for c in cols)])


# ------------------------------------------------------------------------------------------------------ contrasts

def _paired(d: np.ndarray, counts: tuple[int, int, int, int] | None, confidence: float) -> dict:
    n = int(d.size)
    if counts is not None and n:
        res = stats.paired_proportion_difference(*counts, confidence=confidence)
        out = {"estimate": res["difference"], "ci_low": res["ci_low"], "ci_high": res["ci_high"], "p": res["p"],
               "n": n, "test": "exact McNemar (one item per draw)", "exact": True, "caveat": None,
               "mean_a": res["a"], "mean_b": res["b"], "testable": res.get("testable")}
        if out["testable"] is None:
            out.pop("testable")
    else:
        out = dict(stats.paired_contrast(d, confidence))
    out["design"] = "paired by draw"
    out["n_a"] = out["n_b"] = n
    ok = testable(out, n >= 2)
    return _finish(out, ok)


def _between(values: np.ndarray, is_b: np.ndarray, strata: np.ndarray, confidence: float) -> dict:
    n_a, n_b = int((~is_b).sum()), int(is_b.sum())
    if n_a and n_b:
        out = dict(stats.stratified_contrast(values, is_b, strata, confidence))   # B − A: B is the first level
    else:
        out = {"estimate": None, "ci_low": None, "ci_high": None, "p": None, "n": n_a + n_b,
               "test": "label permutation within strata", "exact": False, "caveat": "a run has no draw here"}
    out["design"] = "between draws, stratified on the draw-level factors"
    out["n_a"], out["n_b"] = n_a, n_b
    return _finish(out, testable(out, min(n_a, n_b) >= 2))


def _finish(out: dict, ok: bool) -> dict:
    out = {k: plain(v) for k, v in out.items()}
    out["unit"] = "draws"
    out["testable"] = bool(ok)
    if not ok:
        why = out.get("caveat") if str(out.get("caveat") or "").startswith(TOO_FEW) else None
        out.update(ci_low=None, ci_high=None, p=None, caveat=TOO_FEW, why=why or TOO_FEW)
    return out


def _units(con, base_sql: str, params: list, cells: list[str], strata: list[str], paired: bool,
           factors: list[str]) -> dict:
    """The units of every contrast in one DuckDB statement (GROUPING SETS: the whole comparison, and each level of
    each of ``factors``): {None or (factor, level): rows}. Paired: one row per shared draw (draw, mean of B − A over
    its shared cells, mean of A, mean of B, shared cells, most items of a cell on A, on B). Between draws: one row
    per (side, draw) over the cells both runs have (side, draw, strata…, mean, cells)."""
    flags = ", ".join(quote(f) for f in factors)
    grouping = f", GROUPING({flags}) AS _g" if factors else ", 0 AS _g"
    fsel = "".join(f", {quote(f)}" for f in factors)
    cte = f"WITH c AS ({base_sql}), a AS (SELECT * FROM c WHERE _side = 0), b AS (SELECT * FROM c WHERE _side = 1)"
    if paired:
        keys = ["_draw"]
        src = (f"(SELECT a.*, b.y - a.y AS d, b.y AS yb, b.items AS ib FROM a JOIN b ON {_on(cells, 'a', 'b')}) AS p")
        aggs = "avg(d), avg(y), avg(yb), count(*), max(items), max(ib)"
    else:
        key = " AND ".join(f"x.{quote(c)} IS NOT DISTINCT FROM y.{quote(c)}" for c in cells) or "TRUE"
        keys = ["_side", "_draw", *(quote("_t_" + c) for c in strata)]
        src = (f"(SELECT * FROM c x WHERE EXISTS (SELECT 1 FROM a y WHERE {key}) "
               f"AND EXISTS (SELECT 1 FROM b y WHERE {key})) AS m")
        aggs = "avg(y), count(*)"
    sets = ", ".join(f"({', '.join([*keys, *extra])})" for extra in [[], *([quote(f)] for f in factors)])
    rows = con.execute(f"{cte} SELECT {', '.join(keys)}{fsel}{grouping}, {aggs} FROM {src} "
                       f"GROUP BY GROUPING SETS ({sets}) ORDER BY ALL", params).fetchall()
    out: dict = {}
    nk, nf = len(keys), len(factors)
    for r in rows:
        g = r[nk + nf]
        which = None
        for i, f in enumerate(factors):
            if not g & (1 << (nf - 1 - i)):   # this factor is grouped on: a per-level row
                which = (f, r[nk + i])
        out.setdefault(which, []).append((*r[:nk], *r[nk + nf + 1:]))
    return out


def _contrast(rows: list, paired: bool, confidence: float) -> dict:
    """The contrast over the units of one grouping set (``_units``)."""
    if paired:
        d = np.array([r[1] for r in rows], dtype=float)
        single = bool(rows) and all(r[4] == 1 and r[5] == 1 and r[6] == 1 for r in rows)
        counts = None
        if single:   # every draw is one item on each side: the items are the draws
            ya = np.array([r[2] for r in rows]) > 50
            yb = np.array([r[3] for r in rows]) > 50
            counts = (int(np.sum(ya & yb)), int(np.sum(ya & ~yb)), int(np.sum(~ya & yb)), int(np.sum(~ya & ~yb)))
        out = _paired(d, counts, confidence)
        if rows:
            out.setdefault("mean_a", float(np.mean([r[2] for r in rows])))
            out.setdefault("mean_b", float(np.mean([r[3] for r in rows])))
        out["cells"] = int(sum(r[4] for r in rows))
        return out
    side = np.array([r[0] for r in rows], dtype=bool)
    values = np.array([r[-2] for r in rows], dtype=float)
    codes = stats.pd_codes([tuple(r[2:-2]) for r in rows]) if rows else np.zeros(0, dtype=np.int64)
    both = {c for c in set(codes.tolist()) if side[codes == c].any() and (~side[codes == c]).any()}
    keep = np.array([c in both for c in codes], dtype=bool)
    out = _between(values[keep], side[keep], codes[keep], confidence)
    out["mean_a"] = plain(values[keep & ~side].mean()) if (keep & ~side).any() else None
    out["mean_b"] = plain(values[keep & side].mean()) if (keep & side).any() else None
    out["cells"] = int(sum(r[-1] for r, k in zip(rows, keep) if k))
    out["strata"] = len(both)
    return out


# ------------------------------------------------------------------------------------------------------ the report

def compare_two(con, run_a: str, run_b: str, scoring: str = "strict", filters: Mapping[str, Sequence] | None = None,
                by: Sequence[str] = BY, alpha: float = 0.05, confidence: float = 0.95, view: str = VIEW) -> dict:
    """Run B against run A (see the module docstring): ``series`` (a, b: provenance, claim, contradicted),
    ``replies`` (shared prompts and differing replies), ``differ_on``, ``headline`` {design, estimate (B − A,
    points), ci_low, ci_high, p, test, n, unit, exact, testable, significant, mean_a, mean_b, n_a, n_b, caveat},
    ``factors`` (per level of ``by``: the same test, ``p_holm`` over all rows), ``description``
    (per-configuration accuracy of each run, not a test) and ``agreement`` (item-by-item counts, description).
    Plain JSON."""
    check_scoring(scoring)
    if run_a == run_b:
        raise UserError("compare two different runs (A and B are the same run)")
    filters = dict(filters or {})
    info = _series(con, [run_a, run_b])
    pairs = _item_pairs(con, run_a, run_b, filters, scoring, view)
    shared_prompts, differ_replies = pairs.pop("replied"), pairs.pop("differ")
    a, b = info[run_a], info[run_b]
    if a["model"] == b["model"] and differ_replies:
        for me in (a, b):
            if me["claim"]:
                me["contradicted"] = True
                me["notes"].append(f"{differ_replies} of its {shared_prompts} replies differ from the other "
                                   "run's replies to the same prompts (same model)")
    cells, draw, differ = _columns(con, run_a, run_b, view)
    strata = [c for c in cells if c in DRAW and c not in WITHIN_DRAW]
    cells_sql, cells_params = _cells_sql(con, run_a, run_b, cells, draw, filters, scoring, view)
    with temp_table(con, cells_sql, cells_params) as table:   # computed once, read by every statement below
        return _compare_cells(con, f"SELECT * FROM {table}", a, b, scoring, filters, by, alpha, confidence, cells,
                              draw, differ, strata, pairs, shared_prompts, differ_replies)


def _compare_cells(con, base_sql, a, b, scoring, filters, by, alpha, confidence, cells, draw, differ, strata, pairs,
                   shared_prompts, differ_replies) -> dict:
    params: list = []
    got = con.execute(   # items and draws of each side, and the draws both answered in a cell: one statement
        f"WITH c AS ({base_sql}), s AS (SELECT _side, sum(items) AS items, count(DISTINCT _draw) AS draws FROM c "
        "GROUP BY _side) SELECT (SELECT items FROM s WHERE _side = 0), (SELECT items FROM s WHERE _side = 1), "
        "(SELECT draws FROM s WHERE _side = 0), (SELECT draws FROM s WHERE _side = 1), "
        f"(SELECT count(DISTINCT a._draw) FROM c a JOIN c b ON a._side = 0 AND b._side = 1 AND {_on(cells, 'a', 'b')})",
        params).fetchone()
    sides = {0: int(got[0] or 0), 1: int(got[1] or 0)}
    draws = {0: int(got[2] or 0), 1: int(got[3] or 0)}
    shared_draws = int(got[4] or 0)
    paired = bool(shared_draws)
    out: dict[str, Any] = {
        "a": a, "b": b, "scoring": scoring, "filters": filters, "alpha": alpha, "confidence": confidence,
        "replies": {"shared_prompts": shared_prompts, "differ": differ_replies},
        "differ_on": differ, "matched_on": cells, "draw_columns": draw, "strata_columns": strata,
        "items": {"a": sides[0], "b": sides[1]}, "draws": {"a": draws[0], "b": draws[1], "shared": shared_draws},
        "unit": "the independent draw of (A, B)", "factors": [], "description": [], "agreement": None}
    if not sides[0] or not sides[1]:
        missing = a if not sides[0] else b
        out["headline"] = _finish({"estimate": None, "n": 0, "design": None, "test": None, "exact": False,
                                   "n_a": draws[0], "n_b": draws[1]}, False)
        out["headline"]["reason"] = f"run {missing['run_id']} has no answered items in this selection"
        return out
    factors = [c for c in by if c in cells]
    units = _units(con, base_sql, params, cells, strata, paired, factors)
    h = _contrast(units.get(None, []), paired, confidence)
    if not h.get("cells"):
        h["reason"] = "no configuration is in both runs: nothing to compare like with like"
        h["estimate"] = None
    if paired:
        h["left_out"] = {"a": draws[0] - shared_draws, "b": draws[1] - shared_draws}
    h["significant"] = bool(h["testable"] and h.get("p") is not None and h["p"] < alpha)
    out["headline"] = h
    if h.get("cells"):
        out["factors"] = _factor_rows(units, factors, paired, alpha, confidence)
        out["description"] = _description(con, base_sql, params, cells)
        out["agreement"] = pairs
    return out


def _factor_rows(units: dict, factors: list[str], paired: bool, alpha: float, confidence: float) -> list[dict]:
    asked = []
    for f in factors:
        levels = sorted((k[1] for k in units if k is not None and k[0] == f), key=lambda v: (v is None, str(v)))
        if len(levels) >= 2:
            asked += [(f, lv) for lv in levels]
    results = stats.in_parallel(lambda key: _contrast(units[key], paired, confidence), asked)
    rows = [{"factor": f, "level": plain(lv), **res} for (f, lv), res in zip(asked, results) if res.get("cells")]
    adjusted = stats.holm([r["p"] if r["testable"] and r["p"] is not None else math.nan for r in rows])
    family = f"Holm over the {sum(1 for x in adjusted if not math.isnan(x))} testable per-level rows"
    for r, p in zip(rows, adjusted):
        r["p_holm"] = plain(p)
        r["significant"] = bool(r["p_holm"] is not None and r["p_holm"] < alpha)
        r["family"] = family
    return rows


def _description(con, base_sql, params, cells) -> list[dict]:
    """Per-configuration accuracy of each run over the cells both runs have (a cell = a configuration here)."""
    key = ", ".join(quote(c) for c in cells) or "1"
    on = " AND ".join(f"x.{quote(c)} IS NOT DISTINCT FROM y.{quote(c)}" for c in cells) or "TRUE"
    rows = con.execute(
        f"WITH c AS ({base_sql}), conf AS (SELECT _side, {key}, sum(y * items) / sum(items) AS acc, "
        f"sum(items) AS items FROM c GROUP BY _side, {key}), "
        f"m AS (SELECT * FROM conf x WHERE EXISTS (SELECT 1 FROM conf y WHERE y._side <> x._side AND {on})) "
        "SELECT _side, avg(acc), stddev_samp(acc), min(acc), max(acc), count(*), sum(items) FROM m "
        "GROUP BY _side ORDER BY _side", params).fetchall()
    return [{"series": "AB"[r[0]], "mean": plain(r[1]), "std": plain(r[2]), "min": plain(r[3]),
             "max": plain(r[4]), "configurations": int(r[5]), "items": int(r[6]), "note": DESCRIPTION_NOTE}
            for r in rows]


def compare_pair(con, run_ids: Sequence[str], scoring: str = "strict",
                 filters: Mapping[str, Sequence] | None = None, by: Sequence[str] = BY, alpha: float = 0.05) -> dict:
    """compare_two of ``run_ids`` = [A, B], computed once per state of the two runs whichever process asks
    (core/analysis/memo.py): the Compare page, the CLI and the HTML report read the same result."""
    from core.analysis import memo

    run_a, run_b = run_ids

    def compute(con, run_a, run_b, scoring, filters, by, alpha):
        return compare_two(con, run_a, run_b, scoring=scoring, filters=filters, by=by, alpha=alpha)

    return memo.call(con, "compare_two", compute, run_a, run_b, scoring, dict(filters or {}), list(by), float(alpha),
                     persist=True, reads=[run_a, run_b])


# ------------------------------------------------------------------------------------------------------ words

def _num(v, fmt: str = "+.1f") -> str:
    return "–" if v is None else format(v, fmt)


def interval_text(h: Mapping) -> str:
    """``[lo, hi]`` of a contrast, or why there is none."""
    if not h.get("testable"):
        return TOO_FEW
    if h.get("ci_low") is None:
        return "no interval (no discordant draw)"
    return f"[{_num(h['ci_low'])}, {_num(h['ci_high'])}]"


def p_words(h: Mapping, key: str = "p") -> str:
    from core.analysis.views import p_text

    if not h.get("testable") or h.get(key) is None:
        return "–"
    return p_text(h[key])


def headline_text(h: Mapping, a_name: str, b_name: str) -> str:
    """The headline in words: direction (agreeing with the sign), size, interval, p, test, n and unit."""
    if h.get("estimate") is None:
        return h.get("reason") or "nothing to compare"
    est = h["estimate"]
    if est > 0:
        direction = f"{b_name} is more accurate than {a_name} by {abs(est):.1f} points"
    elif est < 0:
        direction = f"{b_name} is less accurate than {a_name} by {abs(est):.1f} points"
    else:
        direction = f"{b_name} and {a_name} are equally accurate"
    def count(k: int) -> str:
        return f"{k} {h['unit'][:-1] if k == 1 else h['unit']}"

    unit = count(h["n"]) if h.get("design", "").startswith("paired") else \
        f"{h['n_a']} and {count(h['n_b'])}"
    if not h.get("testable"):
        return f"{direction} ({h['design']}, {unit}): {TOO_FEW}."
    if h.get("significant"):
        verdict = "a significant difference"
    else:
        verdict = "not a significant difference"
    return (f"{direction} — {verdict}: B − A = {_num(est, '+.1f')} points, 95 % interval {interval_text(h)}, "
            f"p {'= ' if not p_words(h).startswith(('<', '>')) else ''}{p_words(h)} ({h['test']}, {h['design']}, "
            f"n = {unit}).")


def series_line(s: Mapping, name: str | None = None) -> str:
    """One series: name, model, provenance; an upload is a claim, a contradicted one says so. ``name`` (a page's
    label for the run) replaces the run's name and id."""
    from core.store.provenance import badge

    head = name if name is not None else f"{s['name'] or s['run_id']} (run {s['run_id']},"
    text = f"{head} {'(' if name is not None else ''}model {s['model']}, {badge(s['provenance'])}"
    if s.get("contradicted"):
        text += "; a contradicted claim: " + "; ".join(s["notes"])
    return text + ")"


def to_markdown(res: Mapping) -> str:
    a, b, h = res["a"], res["b"], res["headline"]
    an, bn = a["name"] or a["run_id"], b["name"] or b["run_id"]
    lines = [f"# {bn} vs {an}", "", f"- A: {series_line(a)}", f"- B: {series_line(b)}",
             f"- Scoring: {res['scoring']}" + (f"; slice: {res['filters']}" if res["filters"] else ""),
             "- Each series is one run: runs are never pooled."]
    if res["differ_on"]:
        lines.append("- The runs differ in: " + ", ".join(f"{k} ({v[0]} vs {v[1]})"
                                                          for k, v in res["differ_on"].items()))
    lines += ["", "## Headline", "", headline_text(h, an, bn), ""]
    if h.get("estimate") is not None:
        lines += ["| design | B − A (points) | 95 % interval | p | test | n | unit | exact |",
                  "|---|---|---|---|---|---|---|---|",
                  f"| {h['design']} | {_num(h['estimate'], '+.2f')} | {interval_text(h)} | {p_words(h)} | "
                  f"{h['test']} | {h['n']} | {h['unit']} | {'yes' if h.get('exact') else 'no'} |", ""]
        if h.get("left_out") and any(h["left_out"].values()):
            lines.append(f"Draws answered by one run only (left out): A {h['left_out']['a']}, "
                         f"B {h['left_out']['b']}.")
            lines.append("")
    if res["factors"]:
        lines += ["## Per level", "", f"The same test within each level; {res['factors'][0]['family']}.", "",
                  "| factor | level | B − A | 95 % interval | p | p (Holm) | n | design |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in res["factors"]:
            n = r["n"] if r["design"].startswith("paired") else f"{r['n_a']} + {r['n_b']}"
            lines.append(f"| {r['factor']} | {r['level']} | {_num(r['estimate'], '+.2f')} | {interval_text(r)} | "
                         f"{p_words(r)} | {p_words(r, 'p_holm')} | {n} | {r['design']} |")
        lines.append("")
    if res["description"]:
        lines += ["## Description (not a test)", "", DESCRIPTION_NOTE[0].upper() + DESCRIPTION_NOTE[1:] + ".", "",
                  "| series | mean % | std | min | max | configurations | items |", "|---|---|---|---|---|---|---|"]
        for d in res["description"]:
            lines.append(f"| {d['series']} | {_num(d['mean'], '.1f')} | {_num(d['std'], '.1f')} | "
                         f"{_num(d['min'], '.1f')} | {_num(d['max'], '.1f')} | {d['configurations']} | {d['items']} |")
        ag = res.get("agreement")
        if ag and ag["items"]:
            lines += ["", f"Items both runs answered: {ag['items']} (both right {ag['both_right']}, only A right "
                          f"{ag['only_a']}, only B right {ag['only_b']}, both wrong {ag['both_wrong']}); "
                          f"{ag['note']}."]
        lines.append("")
    return "\n".join(lines)
