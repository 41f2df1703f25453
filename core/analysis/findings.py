"""The SetLexSem paper's findings (core/analysis/findings_catalogue.py) as tested verdicts, from any stored runs.

``report(con, run_ids)`` computes every finding, **one verdict per series**: a model's runs made here (pooled and
named), or one uploaded run alone — a file's claims, labelled so, never pooled with the runs made here nor with
another upload whose replies to the same prompts may disagree (``series_sql``; the report's ``series`` lists them).
Series are never pooled with each other. How a contrast of levels a and b of a factor is computed (docs/FIDELITY.md,
"How verdicts are computed", gives the reasons):

1. **Unit = the independent draw.** The grid reuses each drawn (A, B) across operations, phrasings, approaches,
   shots and deceptive conditions (``findings_catalogue.DRAW`` names the columns that identify a draw). Item verdicts
   (0 / 100) are averaged per (stratum, draw, level) — repeated items of pooled runs included — and tested at the
   level of draws, never of items or configurations.
2. **Matched strata.** A stratum = one value of every other design factor (the model fixed). Only strata that hold
   both levels are kept; the rest are dropped and counted ("matched 12 of 20 strata"). None kept → not answerable.
3. **Test and interval** (core/analysis/stats.py). A factor that varies within a draw, or two models that answered
   the same draws: per draw, the mean over its matched strata of (a − b); sign-flip permutation test over draws and a
   percentile bootstrap interval. A factor that varies between draws (size, token type, length, decile, overlap):
   per draw, the mean over its matched configurations; the stratified difference of means, stratified on the
   other draw-level factors, label permutation within strata, stratified bootstrap.
4. **Too few to test** (``stats.too_few``): below ``stats.MIN_UNITS`` draws, or with too few label arrangements to
   ever reach p ≤ 0.05, a contrast has its estimate and "too few draws to test" — no interval, no p, not in a Holm
   family. Declared only when the adjusted p is below α *and* the interval lies on the estimate's side of zero.
5. **Families.** Holm within one finding and model (its pre-specified contrasts), named in the output;
   ``family="report"`` makes every primary contrast of the report one family. A finding that splits another's pooled
   contrast (``secondary_to``) is secondary: its own family, never the pooled one's.
6. **Spread** (the paper's figure of merit): standard deviation of per-configuration accuracy (over the matched
   configurations of each level) and the Brown–Forsythe test, reported beside the verdict, not part of the family
   (configurations share draws, so its p is optimistic); no test from fewer than ``stats.MIN_SPREAD`` configurations
   a side.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis import aggregated, reasoning, stats
from core.analysis.draw_contrasts import between_units, cells_table, items_table, key_sql, paired_units, strata_counts
from core.analysis.findings_catalogue import BY_ID, DESIGN, DRAW, FINDINGS, WITHIN_DRAW, Finding
from core.analysis.findings_text import verdict, verdict_lines, verdicts
from core.analysis.sql import VIEW, check_scoring, quote, relation, series_label, series_sql, view_columns, where_clause
from core.analysis.summaries import config_accuracy

__all__ = ["BY_ID", "FINDINGS", "FAMILIES", "Finding", "VIEW", "check_scoring", "evaluate", "filter_sql", "points",
           "report", "rows", "strata_candidates", "verdict"]

FAMILIES = ("finding", "report")
TABLE_BY = ("model", "operation", "members", "condition")


# ----------------------------------------------------------------------------------------------------- the data

def _design(con, view: str) -> list[str]:
    have = set(view_columns(con, view))
    return [c for c in DESIGN if c in have]


def points(con, run_ids, f: Finding, scoring: str = "strict", view: str = VIEW) -> pd.DataFrame:
    """Per-configuration accuracy with every design factor, the model and the finding's derived column (the
    reference's unit for its tables and violins)."""
    # a column that changes inside a configuration (a deceptive sample's part of speech) is not a design factor:
    # grouping configurations by it would split them
    facts = aggregated.column_facts(con, run_ids, _design(con, view), view=view, values=False)
    design = [c for c, got in facts.items() if not got.varies]
    pts = config_accuracy(con, run_ids, ["model", *design], f.filters, view, scoring)
    if not pts.empty and "runs" in {t[0] for t in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}:
        # the series, as the verdicts have them: an upload's configurations are never drawn with the runs made here
        label = {r["run_id"]: series_label(r["model"], r["run_id"], r["provenance"] == "uploaded")
                 for r in run_provenance(con, sorted(set(pts["run_id"])))}
        pts["model"] = pts["run_id"].map(label).fillna(pts["model"])
    return _derive(pts, f)


def _derive(df: pd.DataFrame, f: Finding) -> pd.DataFrame:
    if df.empty:
        return df
    if f.factor == "overlapping":
        ov = pd.to_numeric(df["overlap"], errors="coerce").fillna(0) if "overlap" in df else 0
        df["overlapping"] = np.where(ov > 0, "overlap", "independent")
    return df


def rows(con, run_ids, scoring: str = "strict", view: str = VIEW) -> pd.DataFrame:
    """One row per answered set-operation item of the runs: ``model`` (the series: a model's runs made here, or one
    uploaded run as its own series, ``series_sql``), ``model_name``, run, configuration, the design factors, the
    verdict as 0 / 100 (``accuracy``) and ``draw`` (an integer naming the draw, numbered in DuckDB from the draw's
    columns, which stay there). One query per report; each finding keeps its slice (``keep``)."""
    have = set(view_columns(con, view))
    design = _design(con, view)
    cols = list(dict.fromkeys(["run_id", "config_id", *design]))
    deceptive = "CASE WHEN members = 'deceptive' THEN NULL ELSE {} END"

    def col(c: str) -> str:
        # for deceptive items ``pos`` and the sets are outcomes of the condition, not of the draw
        return deceptive.format(quote(c)) if c in ("pos", "set_a", "set_b") and "members" in have else quote(c)

    draw_cols = [c for c in DRAW if c in have]
    draw = (f"dense_rank() OVER (ORDER BY {', '.join(col(c) + ' NULLS FIRST' for c in draw_cols)}) - 1"
            if draw_cols else "0")
    sel = [f"{col(c)} AS {quote(c)}" for c in cols]
    where, params = where_clause(con, run_ids, {"task": ["setops"]} if "task" in have else None, view=view)
    import pyarrow as pa
    import pyarrow.compute as pc

    table = con.sql(f"SELECT {series_sql(con)} AS model, model AS model_name, {', '.join(sel)}, "
                    f"CAST(100 * CAST(correct AS INTEGER) AS DOUBLE) AS accuracy, {draw} AS draw "
                    f"FROM {relation(con, view, scoring)} {where}", params=params).to_arrow_table()
    for i, field in enumerate(table.schema):   # text as categories: grouping and slicing work on integer codes
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            table = table.set_column(i, field.name, pc.dictionary_encode(table.column(i)))
    df = table.to_pandas()
    for c in df.columns:   # categories in sorted order (not the order rows arrived in): groupings sort as the values
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].cat.reorder_categories(sorted(df[c].cat.categories))
    return df


def filter_sql(columns: Sequence[str], filters: Mapping[str, Sequence]) -> tuple[str, list] | None:
    """WHERE clause (parameters apart) of a finding's filters over the configurations of
    ``draw_contrasts.items_table``: a number matches by its value (4 and 4.0 are one level), a text by its text, None
    matches NULL; None when a filtered column is missing (the finding does not apply)."""
    parts, params = [], []
    for col, values in filters.items():
        if col not in columns:
            return None
        values = list(values)
        q = quote(col)
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        texts = [str(v) for v in values if v is not None and v not in numbers]
        sub = []
        if numbers:
            sub.append(f"TRY_CAST({q} AS DOUBLE) IN ({', '.join('?' * len(numbers))})")
            params += [float(v) for v in numbers]
        if texts:
            sub.append(f"CAST({q} AS VARCHAR) IN ({', '.join('?' * len(texts))})")
            params += texts
        if any(v is None for v in values):
            sub.append(f"{q} IS NULL")
        parts.append("(" + (" OR ".join(sub) or "FALSE") + ")")
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def _matches(level, raw) -> bool:
    """Whether a stored value ``raw`` is the finding's ``level``: numbers by value, texts by text."""
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        try:
            return float(raw) == float(level)
        except (TypeError, ValueError):
            return False
    return str(raw) == str(level)


def _sorted(values) -> list:
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def plain(v):
    """A value as plain JSON: numpy scalars unwrapped, NaN → None."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


# ----------------------------------------------------------------------------------------------------- contrasts

def strata_candidates(columns: Sequence[str], f: Finding) -> list[str]:
    """The design factors a contrast of ``f`` holds equal: every design factor of the items but the contrasted one,
    those that change with it (``ignore``) and the split (``within``); a contrast names those its items have a
    value of (``matched_on``). The model is held equal by computing per series."""
    skip = {f.factor, *f.ignore, *f.within}
    return [c for c in DESIGN if c in columns and c not in skip]


class _Slice:
    """One finding's items, grouped: per group (the series and the ``within`` split; the split alone for the model
    comparison) the levels present, and per level the series and runs behind it and which strata columns hold a
    value — one statement over the items table."""

    def __init__(self, con, table: str, where: str, params: list, f: Finding, groups: list[str],
                 strata: list[str]):
        q = quote(f.factor)
        counts = "".join(f", count({quote(c)})" for c in strata)
        gsel = "".join(f", {quote(g)}" for g in groups)
        cond = f"{where} {'AND' if where else 'WHERE'} {q} IS NOT NULL"
        got = con.execute(f"SELECT {key_sql(groups)} AS _gid{gsel}, {q}, CAST({q} AS VARCHAR), model, run_id"
                          f"{counts} FROM {table} {cond} GROUP BY ALL", params).fetchall()
        ng = len(groups)
        self.groups: dict[int, tuple] = {}
        self.rows: dict[tuple[int, str], list[tuple]] = {}   # (gid, level text) -> (series, run, non-null counts)
        self.raw: dict[int, dict[str, Any]] = {}              # gid -> level text -> stored value
        for r in got:
            gid, key, raw, lvl, series, run = r[0], tuple(r[1:1 + ng]), r[1 + ng], r[2 + ng], r[3 + ng], r[4 + ng]
            self.groups[gid] = key
            self.raw.setdefault(gid, {})[lvl] = raw
            self.rows.setdefault((gid, lvl), []).append((series, run, r[5 + ng:]))
        self.strata = strata

    def ordered(self) -> list[int]:
        """The groups in sorted order of their values (missing values last)."""
        return sorted(self.groups, key=lambda g: tuple((v is None, "" if v is None else v) for v in self.groups[g]))

    def levels(self, gid: int | None = None) -> list:
        raws = (self.raw[gid].values() if gid is not None else [v for d in self.raw.values() for v in d.values()])
        return _sorted(set(raws))

    def key(self, gid: int, level) -> str | None:
        """The text of the stored level that is ``level`` in group ``gid`` (None: absent)."""
        return next((lvl for lvl, raw in self.raw[gid].items() if _matches(level, raw)), None)

    def part(self, gid: int, *levels: str) -> dict:
        """Series, runs, pooled runs and the strata columns with a value, over the group's rows at ``levels``."""
        rows = [r for lvl in levels for r in self.rows.get((gid, lvl), [])]
        per: dict[str, set] = {}
        for series, run, _ in rows:
            per.setdefault(str(series), set()).add(str(run))
        filled = [c for i, c in enumerate(self.strata) if any(r[2][i] for r in rows)]
        return {"runs": sorted({str(r[1]) for r in rows}), "models": sorted(per),
                "pooled": {m: sorted(rs) for m, rs in sorted(per.items()) if len(rs) > 1}, "matched_on": filled}


def _unmatched_reasons(con, table: str, where: str, params: list, f: Finding, groups: list[str],
                       todo: list[dict], sl: "_Slice") -> dict[int, str]:
    """Why no stratum holds both levels of each of ``todo``'s contrasts: the factors whose values on the two sides
    never meet (compared through each side's distinct values, as text) — one statement for all of them."""
    strata = sl.strata
    q = quote(f.factor)
    sel = "".join(f", coalesce(CAST({quote(c)} AS VARCHAR), '')" for c in strata)
    gids = sorted({t["gid"] for t in todo})
    cond = (f"{where} {'AND' if where else 'WHERE'} {key_sql(groups)} IN ({', '.join('?' * len(gids))}) "
            f"AND {q} IS NOT NULL")
    seen: dict[tuple[int, str], list[set]] = {}
    for r in con.execute(f"SELECT DISTINCT {key_sql(groups)}, CAST({q} AS VARCHAR){sel} FROM {table} {cond}",
                         [*params, *gids]).fetchall():
        sets = seen.setdefault((r[0], r[1]), [set() for _ in strata])
        for i, v in enumerate(r[2:]):
            sets[i].add(v)
    out = {}
    for t in todo:
        on = set(sl.part(t["gid"], t["ka"], t["kb"])["matched_on"])
        xa, xb = seen.get((t["gid"], t["ka"])), seen.get((t["gid"], t["kb"]))
        differ = ([c for i, c in enumerate(strata) if c in on and not xa[i] & xb[i]] if xa and xb else [])
        why = f" ({', '.join(differ)} never equal)" if differ else ""
        out[t["idx"]] = (f"{stats.TOO_FEW}: no stratum holds both {t['a']} and {t['b']} with every other factor "
                         f"equal{why}")
    return out


def _paired_result(units: dict, confidence: float) -> tuple[dict, dict]:
    d = np.array([u[1] for u in units["draws"]], dtype=float)
    res = stats.paired_contrast(d, confidence)
    out = {"design": "paired by draw", "n": res["n"], "n_a": res["n"], "n_b": res["n"],
           "strata_matched": len(units["strata"]),
           "mean_a": plain(np.mean([u[2] for u in units["draws"]])),
           "mean_b": plain(np.mean([u[3] for u in units["draws"]]))}
    spread = stats.spread_test(np.array([s[1] for s in units["strata"]], dtype=float),
                               np.array([s[2] for s in units["strata"]], dtype=float))
    return {**out, **{k: res[k] for k in _RESULT if k in res}}, spread


def _between_result(units: dict, draw_level: list[str], confidence: float) -> tuple[dict, dict]:
    rows = units["units"]
    side = np.array([u[1] for u in rows], dtype=bool)
    t = np.array([u[2] for u in rows], dtype=np.int64)
    values = np.array([u[3] for u in rows], dtype=float)
    both = set(t[side].tolist()) & set(t[~side].tolist())
    kept = np.isin(t, list(both))
    values, side, t = values[kept], side[kept], t[kept]
    res = stats.stratified_contrast(values, side, t, confidence)
    out = {"design": "between draws" + (f", stratified on {', '.join(draw_level)}" if draw_level else ""),
           "n": res["n"], "n_a": res["n_a"], "n_b": res["n_b"], "draw_strata": len(both),
           "strata_matched": units["matched"],
           "mean_a": plain(values[side].mean()) if side.any() else None,
           "mean_b": plain(values[~side].mean()) if (~side).any() else None}
    conf_a = np.array([s[2] for s in units["strata"] if s[1]], dtype=float)
    conf_b = np.array([s[2] for s in units["strata"] if not s[1]], dtype=float)
    return {**out, **{k: res[k] for k in _RESULT if k in res}}, stats.spread_test(conf_a, conf_b)


_RESULT = ("estimate", "ci_low", "ci_high", "p", "test", "exact", "caveat", "testable")


def _model_pairs(present: list) -> list[tuple]:
    return [(x, y) for i, x in enumerate(present) for y in present[i + 1:]]


def evaluate(con, run_ids: Sequence[str] | None, f: Finding, scoring: str = "strict", view: str = VIEW,
             confidence: float = 0.95) -> dict:
    """One finding from the stored runs, per series (p values not yet adjusted: ``report`` adjusts per family)."""
    if f.kind == "metrics":
        return _evaluate(con, None, (), f, run_ids, scoring, view, confidence)()
    with items_table(con, run_ids, DESIGN, scoring, view) as (table, configs, design):
        return _evaluate(con, (table, configs), design, f, run_ids, scoring, view, confidence)()


def _evaluate(con, tables: tuple[str, str] | None, design: Sequence[str], f: Finding, run_ids, scoring: str,
              view: str, confidence: float, pool=None, tables_memo: dict | None = None) -> Callable[[], dict]:
    """One finding over the report's items and configurations (``draw_contrasts.items_table``); see the module
    docstring. Runs the finding's queries and returns what finishes it (its resampling, on ``pool`` when given —
    already started — else on the machine's cores when called). ``tables_memo``: the report's ``_get_stats``
    tables by filter, shared by the findings that filter alike."""
    out: dict[str, Any] = {"id": f.id, "title": f.title, "factor": f.factor, "filters": dict(f.filters),
                           "within": list(f.within), "secondary_to": f.secondary_to, "source": f.source,
                           "claim": f.claim, "paper": _paper_rows(f), "contrasts": [], "unanswered": [],
                           "table": [], "applicable": True, "missing": [], "models": []}
    if f.kind == "metrics":
        out.update(_metrics(con, run_ids, f, scoring, view))
        return lambda: out
    columns = [*design, "model", "overlapping"]
    filt = filter_sql(columns, f.filters)
    groups = list(f.within) if f.factor == "model" else ["model", *f.within]
    if filt is None or f.factor not in columns or any(g not in columns for g in groups):
        out.update(applicable=False, missing=[f"results matching {_describe(f.filters)}"])
        return lambda: out
    where, params = filt
    strata = strata_candidates(design, f)
    table, configs = tables
    sl = _Slice(con, configs, where, params, f, groups, strata)
    if not sl.groups:
        out.update(applicable=False, missing=[f"results matching {_describe(f.filters)}"])
        return lambda: out
    memo = tables_memo if tables_memo is not None else {}
    if (where, tuple(params)) not in memo:
        memo[where, tuple(params)] = _get_stats(con, configs, columns, where, params)
    out["table"] = [dict(row) for row in memo[where, tuple(params)]]   # rows of plain values: each finding its own
    per_series: dict[str, set] = {}
    for (_, _), rows_ in sl.rows.items():
        for series, run, _ in rows_:
            per_series.setdefault(str(series), set()).add(str(run))
    out["models"] = [{"model": m, "runs": sorted(rs)} for m, rs in sorted(per_series.items())]
    todo: list[dict] = []   # the contrasts asked, in the order they are reported
    for gid in sl.ordered():
        values = sl.groups[gid]
        model = None if f.factor == "model" else str(values[0])
        key = values if f.factor == "model" else values[1:]
        present = sl.levels(gid)
        pairs = list(f.pairs) or (_model_pairs(present) if f.factor == "model" else
                                  [(present[i], present[i + 1]) for i in range(len(present) - 1)])
        where_ = {w: plain(v) for w, v in zip(f.within, key)} if f.within else None
        for a, b in pairs:
            ka, kb = sl.key(gid, a), sl.key(gid, b)
            if ka is None or kb is None:
                if not f.within:
                    lack = [str(x) for x, k in ((a, ka), (b, kb)) if k is None]
                    out["unanswered"].append({"model": model, "a": plain(a), "b": plain(b),
                                              "reason": f"{stats.TOO_FEW}: no results at {' or '.join(lack)}"})
                continue
            todo.append({"idx": len(todo), "gid": gid, "ka": ka, "kb": kb, "a": a, "b": b, "model": model,
                         "within": where_, "paper": f.paper.get((a, b, *key) if f.within else (a, b))})
    draw_level = [c for c in strata if c not in WITHIN_DRAW]
    pairs_ = [(t["idx"], t["gid"], t["ka"], t["kb"]) for t in todo]
    with cells_table(con, table, configs, where, params, f.factor, groups, strata, draw_level) as (cells, classes):
        totals = strata_counts(con, classes, pairs_)
        paired = paired_units(con, cells, pairs_) if f.factor in WITHIN_DRAW else {}
        between = between_units(con, cells, [p for p in pairs_ if p[0] not in paired])
    def compute(t: dict):
        if t["idx"] in paired:
            return _paired_result(paired[t["idx"]], confidence)
        if t["idx"] in between:
            part = sl.part(t["gid"], t["ka"], t["kb"])
            return _between_result(between[t["idx"]], [x for x in part["matched_on"] if x in draw_level], confidence)
        return None, None

    unmatched = [t for t in todo if t["idx"] not in paired and t["idx"] not in between]
    reasons = _unmatched_reasons(con, configs, where, params, f, groups, unmatched, sl) if unmatched else {}
    # every query is done: the resampling runs on the pool while the next finding queries DuckDB
    jobs = [pool.submit(compute, t) for t in todo] if pool is not None else None
    return lambda: _assemble(out, f, sl, todo, totals, reasons,
                             [j.result() for j in jobs] if jobs is not None else stats.in_parallel(compute, todo))


def _assemble(out: dict, f: Finding, sl: "_Slice", todo: list[dict], totals: dict, reasons: dict,
              results: list) -> dict:
    """A finding's contrasts, unanswered contrasts and spreads from its resampled ``results`` (one per ``todo``)."""
    for t, (res, spread) in zip(todo, results):
        part = sl.part(t["gid"], t["ka"], t["kb"])
        c: dict[str, Any] = {"a": plain(t["a"]), "b": plain(t["b"]), "strata_total": totals.get(t["idx"], 0),
                             "strata_matched": 0, **part}
        if res is None:
            c.update(estimate=None, reason=reasons[t["idx"]])
        else:
            c.update({k: plain(v) for k, v in res.items()})
            c["unit"] = "draws"
            c["spread"] = {k: plain(v) for k, v in spread.items()}
        c["model"] = t["model"]
        if t["within"]:
            c["within"] = t["within"]
        c["paper_estimate"] = t["paper"]
        if c.get("estimate") is None:
            out["unanswered"].append({"model": t["model"], "a": plain(t["a"]), "b": plain(t["b"]),
                                      "reason": c.get("reason") or c.get("caveat") or stats.TOO_FEW,
                                      **({"within": t["within"]} if t["within"] else {})})
        else:
            out["contrasts"].append(c)
    if not out["contrasts"]:
        present = sl.levels()
        wanted = sorted({str(x) for p in f.pairs for x in p})
        have = {str(x) for x in present}
        missing = [w for w in wanted if w not in have]
        if not missing:
            missing = ([f"two levels of {f.factor}"] if len(present) < 2 else
                       sorted({u["reason"] for u in out["unanswered"]}) or ["levels of the contrast"])
        out.update(applicable=False, missing=missing)
    out["spread"] = [dict(c["spread"], a=c["a"], b=c["b"], model=c["model"],
                          **({"within": c["within"]} if "within" in c else {})) for c in out["contrasts"]]
    return out


def _describe(filters: Mapping[str, Sequence]) -> str:
    return ", ".join(f"{k} in {list(v)}" for k, v in filters.items()) or "any results"


def _get_stats(con, table: str, columns: Sequence[str], where: str, params: list) -> list[dict]:
    """The reference's get_stats: mean / std / min / max / N of per-configuration accuracy (a configuration = one
    run's cell of the grid) per series × operation × token type (× deceptive condition: the three conditions are
    never pooled); ``items`` = the answered items behind them. ``table``: the configurations of ``draw_contrasts.items_table``."""
    present = [c for c in TABLE_BY if c in columns]
    if not present:
        return []
    filled = con.execute(f"SELECT {', '.join(f'count({quote(c)})' for c in present)} FROM {table} {where}",
                         params).fetchone()
    by = [c for c, n in zip(present, filled) if n]
    if not by:
        return []
    firsts = ", ".join(f"any_value({quote(c)}) AS {quote(c)}" for c in by)
    per_config = con.execute(f"SELECT run_id, config_id, sum(s) / sum(n) AS accuracy, sum(n) AS n, {firsts} "
                             f"FROM {table} {where} GROUP BY run_id, config_id ORDER BY run_id, config_id",
                             params).df()
    # pandas over the configurations, in a fixed order: the same digits on every run
    got = (per_config.groupby(by, dropna=False, sort=True)
           .agg(mean=("accuracy", "mean"), std=("accuracy", "std"), min=("accuracy", "min"),
                max=("accuracy", "max"), N=("accuracy", "size"), items=("n", "sum")).reset_index())
    return [{k: plain(v) if k not in ("N", "items") else int(v) for k, v in row.items()}
            for row in got.to_dict("records")]


def _paper_rows(f: Finding) -> list[dict]:
    if not f.paper_table:
        return []
    from core.analysis.reference import reference_table

    try:
        return [{k: plain(v) for k, v in row.items()} for row in reference_table(f.paper_table).to_dict("records")]
    except (KeyError, ValueError, OSError):   # a table missing from the shipped file: the finding still stands
        return []


def _metrics(con, run_ids, f: Finding, scoring: str, view: str) -> dict:
    from core.analysis.findings_metrics import metrics_table

    rows_ = metrics_table(con, run_ids, f.filters, scoring, view)
    if rows_ is None:
        return {"applicable": False, "missing": ["precision/recall/jaccard columns"], "table": []}
    return {"applicable": bool(rows_), "missing": [] if rows_ else ["set-operation results"], "table": rows_}


# ------------------------------------------------------------------------------------------------------- report

def significant(c: Mapping, alpha: float) -> bool:
    """A contrast is declared only when it was testable, its adjusted p is below ``alpha`` and its interval lies on
    the estimate's side of zero — so the verdict's words never contradict its own numbers."""
    p, est, lo, hi = (c.get(k) for k in ("p_adjusted", "estimate", "ci_low", "ci_high"))
    if not c.get("testable", True) or p is None or est is None or not p < alpha or est == 0:
        return False
    if lo is None or hi is None:
        return False
    return lo > 0 if est > 0 else hi < 0


def _family(fd: dict, c: dict, family: str) -> str:
    if family == "report" and not fd.get("secondary_to"):
        return "every primary contrast of this report"
    who = f" for {c['model']}" if c.get("model") else ""
    return f"{fd['id']}{who}"


def report(con, run_ids: Sequence[str] | None, scoring: str = "strict", alpha: float = 0.05,
           only: Sequence[str] | None = None, view: str = VIEW, family: str = "finding") -> dict:
    """Every finding (or ``only`` those ids), p values Holm-adjusted within each family: one finding and model
    (``family="finding"``, the default) or every primary contrast of the report (``family="report"``)."""
    from core.errors import UserError

    scoring = check_scoring(scoring)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise UserError(f"alpha must be between 0 and 1, got {alpha!r}")
    if family not in FAMILIES:
        raise UserError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    chosen = [BY_ID[i] for i in only if i in BY_ID] if only else list(FINDINGS)
    with contextlib.ExitStack() as stack:
        table, configs, design = (stack.enter_context(items_table(con, run_ids, DESIGN, scoring, view))
                                  if any(f.kind == "contrast" for f in chosen) else (None, None, ()))
        tables = (table, configs) if table is not None else None
        pool = stack.enter_context(stats.pool())
        memo: dict = {}
        finish = [_evaluate(con, tables, design, f, run_ids, scoring, view, 0.95, pool, memo) for f in chosen]
        efforts = (con.execute(f"SELECT count(DISTINCT reasoning) FROM {configs}").fetchone()[0]
                   if table is not None and "reasoning" in design else 0)
        found = [done() for done in finish]
    members: dict[str, list[dict]] = {}
    for fd in found:
        for c in fd["contrasts"]:
            c["family"] = _family(fd, c, family)
            members.setdefault(c["family"], []).append(c)
    for name, cs in members.items():
        adjusted = stats.holm([c["p"] if c["p"] is not None else float("nan") for c in cs])
        for c, p in zip(cs, adjusted):
            c["p_adjusted"] = plain(p)
            c["family_size"] = sum(1 for x in cs if x["p"] is not None)   # what was tested, not what was too few
            c["significant"] = significant(c, alpha)
    for fd in found:
        fd["verdicts"] = verdicts(fd, alpha)
        fd["lines"] = verdict_lines(fd, alpha)
    # what thinking buys reads the items themselves, and only when the runs hold two efforts or more
    if (not only or reasoning.FINDING_ID in only) and (table is None or efforts >= 2):
        extra = reasoning.as_finding(rows(con, run_ids, scoring, view), alpha)
        found += [extra] if extra is not None else []
    prov = run_provenance(con, run_ids)
    correction = ("Holm within each finding and model (its pre-specified contrasts)" if family == "finding" else
                  "Holm across every primary contrast of the report (splits of a pooled contrast: their own family)")
    return {"alpha": alpha, "scoring": scoring, "family": family, "correction": correction,
            "unit": "the independent draw of (A, B)", "runs": list(run_ids) if run_ids is not None else None,
            "provenance": prov, "series": series(prov), "findings": found}


def series(provenance: Sequence[Mapping]) -> list[dict]:
    """The series the verdicts are given for (``run_provenance``'s runs grouped as ``series_sql`` groups rows): a
    model's runs made here pooled; each uploaded run alone, labelled as a file's claims (``claim``)."""
    out: dict[str, dict] = {}
    for r in provenance:
        upload = r["provenance"] == "uploaded"
        label = series_label(r["model"], r["run_id"], upload)
        s = out.setdefault(label, {"series": label, "model": r["model"], "provenance": r["provenance"],
                                   "claim": upload, "runs": []})
        s["runs"].append(r["run_id"])
    return sorted(out.values(), key=lambda s: (s["model"], s["claim"], s["series"]))


def run_provenance(con, run_ids: Sequence[str] | None) -> list[dict]:
    """Each run the report reads, its model and where its answers came from (made here / uploaded)."""
    from core.store import provenance

    where, params = ("WHERE run_id IN (SELECT unnest(?))", [list(run_ids)]) if run_ids is not None else ("", [])
    got = con.execute(f"SELECT run_id, model, source FROM runs {where} ORDER BY run_id", params).fetchall()
    return [{"run_id": r, "model": m, "provenance": provenance.of_source(s)} for r, m, s in got]
