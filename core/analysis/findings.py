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

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis import aggregated, reasoning, stats
from core.analysis.findings_catalogue import BY_ID, DESIGN, DRAW, FINDINGS, WITHIN_DRAW, Finding
from core.analysis.findings_text import verdict, verdict_lines, verdicts
from core.analysis.queries import factor_columns
from core.analysis.sql import VIEW, check_scoring, quote, relation, series_label, series_sql, view_columns, where_clause
from core.analysis.summaries import config_accuracy

__all__ = ["BY_ID", "FINDINGS", "FAMILIES", "Finding", "VIEW", "check_scoring", "evaluate", "keep", "points",
           "report", "rows", "verdict"]

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
    if aggregated.usable(con, view, run_ids, ()):
        inside = aggregated.inside_columns(con, run_ids)["varies"]
    else:
        inside = set(factor_columns(con, run_ids, view, per_sample=True)) - set(factor_columns(con, run_ids, view))
    design = [c for c in _design(con, view) if c not in inside]
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
                    f"100.0 * CAST(correct AS INTEGER) AS accuracy, {draw} AS draw "
                    f"FROM {relation(con, view, scoring)} {where}", params=params).to_arrow_table()
    for i, field in enumerate(table.schema):   # text as categories: grouping and slicing work on integer codes
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            table = table.set_column(i, field.name, pc.dictionary_encode(table.column(i)))
    df = table.to_pandas()
    for c in df.columns:   # categories in sorted order (not the order rows arrived in): groupings sort as the values
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].cat.reorder_categories(sorted(df[c].cat.categories))
    return df


def keep(df: pd.DataFrame, f: Finding) -> pd.DataFrame:
    """The finding's slice of ``rows``: its filters (a level written 4 or 4.0 is one level), its derived column."""
    mask = pd.Series(True, index=df.index)
    for col, values in f.filters.items():
        if col not in df:
            return df.iloc[:0].copy()
        values = list(values)
        hit = pd.Series(False, index=df.index)
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers:
            hit |= pd.to_numeric(df[col], errors="coerce").isin(numbers)
        texts = [str(v) for v in values if v is not None and v not in numbers]
        if texts:
            hit |= _text_in(df[col], texts)
        if any(v is None for v in values):
            hit |= df[col].isna()
        mask &= hit
    return _derive(df[mask].copy(), f)


def _text_in(series: pd.Series, texts: Sequence[str]) -> pd.Series:
    """Which values of ``series`` (not missing) read as one of ``texts``; a categorical column compares its few
    categories, not its rows."""
    texts = set(texts)
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.isin([c for c in series.cat.categories if str(c) in texts])
    return series.astype(str).isin(texts) & series.notna()


def _level_eq(series: pd.Series, level) -> pd.Series:
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        return pd.to_numeric(series, errors="coerce") == level
    return _text_in(series, [str(level)])


def _levels(df: pd.DataFrame, column: str) -> list:
    vals = [v for v in df[column].dropna().unique().tolist()] if column in df else []
    try:
        return sorted(vals)
    except TypeError:
        return sorted(vals, key=str)


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

def strata_columns(df: pd.DataFrame, f: Finding) -> list[str]:
    """The design factors a contrast holds equal: every design factor present but the contrasted one, those that
    change with it (``ignore``) and the split (``within``). The model is held equal by computing per model."""
    skip = {f.factor, *f.ignore, *f.within}
    return [c for c in DESIGN if c in df.columns and c not in skip and df[c].notna().any()]


def _codes(df: pd.DataFrame, cols: list[str]) -> np.ndarray:
    if not cols or df.empty:
        return np.zeros(len(df), dtype=np.int64)
    return df.groupby(cols, dropna=False, sort=True).ngroup().to_numpy()


def _unmatched_reason(part: pd.DataFrame, strata: list[str], is_a: pd.Series, a, b) -> str:
    """Why no stratum holds both levels: the factors whose values on the two sides never meet (compared through
    each side's distinct values, as text)."""
    def distinct(side: pd.DataFrame, c: str) -> set:
        return {str(v) for v in pd.unique(side[c])}

    side_a, side_b = part[is_a.to_numpy()], part[~is_a.to_numpy()]
    differ = [c for c in strata if not distinct(side_a, c) & distinct(side_b, c)]
    why = f" ({', '.join(differ)} never equal)" if differ else ""
    return f"{stats.TOO_FEW}: no stratum holds both {a} and {b} with every other factor equal{why}"


def contrast(df: pd.DataFrame, f: Finding, a, b, confidence: float = 0.95) -> dict:
    """The contrast a − b of ``df`` (one model's items, or two models' for the model comparison): estimate in
    points, interval, p (unadjusted), units, matched strata, spread. See the module docstring for the method."""
    sa, sb = _level_eq(df[f.factor], a), _level_eq(df[f.factor], b)
    part = df[sa | sb].copy()
    part["_a"] = sa[sa | sb].to_numpy()
    strata = strata_columns(part, f)
    part["_s"] = _codes(part, strata)
    total = int(part["_s"].nunique())
    sides = part.groupby("_s")["_a"].agg(["any", "all"])
    keep = sides.index[sides["any"] & ~sides["all"]]
    out: dict[str, Any] = {"a": plain(a), "b": plain(b), "strata_total": total, "strata_matched": int(len(keep)),
                           "matched_on": strata, "runs": sorted(map(str, part["run_id"].unique())),
                           "models": sorted(map(str, part["model"].unique())),
                           "pooled": {str(m): sorted(map(str, g.unique())) for m, g in part.groupby("model")["run_id"]
                                      if g.nunique() > 1}}
    if not len(keep):
        out.update(estimate=None, reason=_unmatched_reason(part, strata, part["_a"], a, b))
        return out
    part = part[part["_s"].isin(keep)]
    cells = part.groupby(["_s", "draw", "_a"])["accuracy"].mean().unstack("_a")
    both = cells.dropna()
    within = f.factor in WITHIN_DRAW and len(both) > 0
    if within:
        diff = (both[True] - both[False]).groupby(level="draw").mean()
        res = stats.paired_contrast(diff.to_numpy(), confidence)
        out.update(design="paired by draw", n=res["n"], n_a=res["n"], n_b=res["n"],
                   strata_matched=int(both.index.get_level_values("_s").nunique()),
                   mean_a=plain(both[True].groupby(level="draw").mean().mean()),
                   mean_b=plain(both[False].groupby(level="draw").mean().mean()))
        used = both.reset_index()
        conf = pd.concat([used.groupby("_s")[True].mean().rename("a"), used.groupby("_s")[False].mean().rename("b")],
                         axis=1)
        spread = stats.spread_test(conf["a"].to_numpy(), conf["b"].to_numpy())
    else:
        long = part.groupby(["_s", "draw", "_a"], sort=True)["accuracy"].mean().rename("acc").reset_index()
        units = long.groupby(["draw", "_a"], sort=True)["acc"].mean().reset_index()   # one unit per draw (and level)
        draw_level = [c for c in strata if c not in WITHIN_DRAW]
        if draw_level:
            units = units.merge(part.drop_duplicates(["draw", "_a"])[["draw", "_a", *draw_level]],
                                on=["draw", "_a"], how="left")
        units["_t"] = _codes(units, draw_level)
        sides_t = units.groupby("_t")["_a"].agg(["any", "all"])
        units = units[units["_t"].isin(sides_t.index[sides_t["any"] & ~sides_t["all"]])]
        res = stats.stratified_contrast(units["acc"].to_numpy(), units["_a"].to_numpy(), units["_t"].to_numpy(),
                                        confidence)
        out.update(design="between draws" + (f", stratified on {', '.join(draw_level)}" if draw_level else ""),
                   n=res["n"], n_a=res["n_a"], n_b=res["n_b"], draw_strata=int(units["_t"].nunique()),
                   mean_a=plain(units.loc[units["_a"], "acc"].mean()),
                   mean_b=plain(units.loc[~units["_a"], "acc"].mean()))
        conf = long.groupby(["_s", "_a"])["acc"].mean().unstack("_a")
        spread = stats.spread_test(conf[True].dropna().to_numpy(), conf[False].dropna().to_numpy())
    out.update({k: plain(res[k]) for k in ("estimate", "ci_low", "ci_high", "p", "test", "exact", "caveat",
                                          "testable")})
    out["unit"] = "draws"
    out["spread"] = {k: plain(v) for k, v in spread.items()}
    return out


def _model_pairs(present: list) -> list[tuple]:
    return [(x, y) for i, x in enumerate(present) for y in present[i + 1:]]


def evaluate(con, run_ids: Sequence[str] | None, f: Finding, scoring: str = "strict", view: str = VIEW,
             data: pd.DataFrame | None = None) -> dict:
    """One finding from the stored runs, per model (p values not yet adjusted: ``report`` adjusts per family).
    ``data``: the runs' ``rows`` when the caller has them."""
    out: dict[str, Any] = {"id": f.id, "title": f.title, "factor": f.factor, "filters": dict(f.filters),
                           "within": list(f.within), "secondary_to": f.secondary_to, "source": f.source,
                           "claim": f.claim, "paper": _paper_rows(f), "contrasts": [], "unanswered": [],
                           "table": [], "applicable": True, "missing": [], "models": []}
    if f.kind == "metrics":
        out.update(_metrics(con, run_ids, f, scoring, view))
        return out
    data = keep(rows(con, run_ids, scoring, view) if data is None else data, f)
    if data.empty or f.factor not in data or data[f.factor].isna().all():
        out.update(applicable=False, missing=[f"results matching {_describe(f.filters)}"])
        return out
    out["table"] = _get_stats(data)
    out["models"] = [{"model": str(m), "runs": sorted(map(str, g["run_id"].unique()))}
                     for m, g in data.groupby("model", sort=True)]
    groups = [(None, data)] if f.factor == "model" else [(str(m), g) for m, g in data.groupby("model", sort=True)]
    for model, part_m in groups:
        present = _levels(part_m, f.factor)
        pairs = list(f.pairs) or (_model_pairs(present) if f.factor == "model" else
                                  [(present[i], present[i + 1]) for i in range(len(present) - 1)])
        splits = [((), part_m)] if not f.within else list(part_m.groupby(list(f.within), dropna=False, sort=True))
        for key, part in splits:
            key = key if isinstance(key, tuple) else (key,)
            for a, b in pairs:
                has_a, has_b = _level_eq(part[f.factor], a).any(), _level_eq(part[f.factor], b).any()
                where = {w: plain(v) for w, v in zip(f.within, key)} if f.within else None
                if not (has_a and has_b):
                    if not f.within:
                        lack = [str(x) for x, h in ((a, has_a), (b, has_b)) if not h]
                        out["unanswered"].append({"model": model, "a": plain(a), "b": plain(b),
                                                  "reason": f"{stats.TOO_FEW}: no results at {' or '.join(lack)}"})
                    continue
                c = contrast(part, f, a, b)
                c["model"] = model
                if where:
                    c["within"] = where
                c["paper_estimate"] = f.paper.get((a, b, *key) if f.within else (a, b))
                if c.get("estimate") is None:
                    out["unanswered"].append({"model": model, "a": plain(a), "b": plain(b), "reason": c["reason"],
                                              **({"within": where} if where else {})})
                else:
                    out["contrasts"].append(c)
    if not out["contrasts"]:
        present = _levels(data, f.factor)
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


def _get_stats(data: pd.DataFrame) -> list[dict]:
    """The reference's get_stats: mean / std / min / max / N of per-configuration accuracy (a configuration = one
    run's cell of the grid) per model × operation × token type (× deceptive condition: the three conditions are
    never pooled); ``items`` = the answered items behind them."""
    by = [c for c in TABLE_BY if c in data and data[c].notna().any()]
    per_config = (data.groupby(["run_id", "config_id"], sort=True)
                  .agg(accuracy=("accuracy", "mean"), n=("accuracy", "size"), **{c: (c, "first") for c in by})
                  .reset_index())
    table = (per_config.groupby(by, dropna=False, sort=True)
             .agg(mean=("accuracy", "mean"), std=("accuracy", "std"), min=("accuracy", "min"),
                  max=("accuracy", "max"), N=("accuracy", "size"), items=("n", "sum")).reset_index())
    return [{k: plain(v) for k, v in row.items()} for row in table.to_dict("records")]


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
    data = rows(con, run_ids, scoring, view) if any(f.kind == "contrast" for f in chosen) else None
    found = [evaluate(con, run_ids, f, scoring, view, data) for f in chosen]
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
    if data is not None and not only or only and reasoning.FINDING_ID in only:
        extra = reasoning.as_finding(data if data is not None else rows(con, run_ids, scoring, view), alpha)
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
