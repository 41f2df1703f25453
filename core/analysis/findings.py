"""The SetLexSem paper's findings as tested verdicts, from any stored runs (issue 18).

Each finding is one of the reference's hypotheses (``configs/post_hypothesis/hypothesis.json`` of
github:amazon-science/SetLexSem-Challenge; ``id`` = its ``hypo_name``) or a figure the paper draws from its runs
(Fig 6a / Table 7: length 5 − 3 per decile; precision, recall and Jaccard). A finding names the reference's filter in
our factor names, the factor it contrasts and the level pairs, how the design pairs them, and the paper's figure,
claim and numbers. ``report(con, run_ids)`` computes every finding from the stored results:

- the unit is **per-configuration accuracy** (as in the paper's violins: one point = the accuracy over the samples
  of one prompt configuration), except where the design pairs samples (deceptive conditions: the same draw, index
  and operation, swapped or not) — there the unit is the sample's verdict (0 or 100) and the test is paired;
- a **directional contrast** per level pair: estimate = mean(a) − mean(b) in accuracy points, its confidence
  interval, p (paired t-test on the differences where the design pairs — configurations equal in every other factor,
  or samples —, Welch's t-test otherwise), n per side, and **Holm-adjusted p across every contrast of the report**;
- a **test of spread** beside the test of means (the paper's figure of merit is the variance of accuracy):
  Brown–Forsythe (Levene's test around the median) and the two standard deviations;
- the reference's table (mean / std / min / max / N of per-configuration accuracy per operation × token type,
  its ``get_stats``), and the paper's numbers beside ours;
- "not answerable" with the missing levels when the runs lack what a finding contrasts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis import aggregated
from core.analysis.queries import VIEW, _quote, _src, _where, check_scoring, factor_columns, view_columns
from core.analysis.summaries import config_accuracy, group_summary

DESIGN = ("operation", "size_a", "size_b", "members", "length", "pos", "decile", "decile_mode", "condition",
          "swap_count", "overlap", "phrasing", "approach", "shots")
TABLE_BY = ("operation", "members")
WORDLIKE = ("words", "deciles", "deceptive")


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    factor: str                                   # the column the finding contrasts
    pairs: tuple = ()                             # (a, b) level pairs; empty = adjacent levels present
    filters: Mapping[str, Sequence] = field(default_factory=dict)   # the reference's filter, our names
    pairing: str = "config"                       # "config" | "sample" | "none"
    within: tuple[str, ...] = ()                  # contrasts computed separately per level of these columns
    ignore: tuple[str, ...] = ()                  # factors that change with ``factor`` (left out of the pairing key)
    source: str = ""                              # the paper's figure / table
    claim: str = ""                               # what the paper says
    paper: Mapping[tuple, float] = field(default_factory=dict)   # paper's estimate per (a, b[, within]) in points
    paper_table: str | None = None                # data/reference_figures.json table beside ours
    kind: str = "contrast"                        # "contrast" | "metrics"


FINDINGS: tuple[Finding, ...] = (
    Finding("which_prompt_language_is_better_formal_vs_plain", "Formal vs plain demonstration phrasing", "phrasing",
            (("formal", "plain"),), {"members": ["numbers", "words"]},
            source="Fig 9, Appendix Table 10 (demonstration phrasing)",
            claim="formal phrasing is better than plain (76.8 vs 72.2, seven LLMs pooled)",
            paper={("formal", "plain"): 4.6}, paper_table="setlexsem_by_phrasing"),
    Finding("operation_types", "Set operations", "operation",
            (("union", "intersection"), ("union", "difference"), ("union", "symmetric_difference"),
             ("intersection", "difference"), ("difference", "symmetric_difference"),
             ("intersection", "symmetric_difference")),
            {"members": ["numbers", "words"]}, source="Fig 4a, Appendix Table 4 (operation)",
            claim="union is easiest; symmetric difference hardest (88.9 / 71.2 / 73.0 / 65.3)",
            paper={("union", "intersection"): 17.71, ("union", "difference"): 15.9,
                   ("union", "symmetric_difference"): 23.63, ("intersection", "difference"): -1.81,
                   ("difference", "symmetric_difference"): 7.73, ("intersection", "symmetric_difference"): 5.92},
            paper_table="setlexsem_by_operation"),
    Finding("numbers_vs_words", "Numbers vs words", "members", (("numbers", "words"),),
            {"members": ["numbers", "words"]}, ignore=("pos", "length"), source="Fig 5, Appendix Table 6 (operation × token type)",
            claim="numbers are easier than words for most operations",
            paper_table="setlexsem_by_operation_members"),
    Finding("operand_size", "Operand size", "size_a", (),
            {"members": ["numbers", "words"], "phrasing": ["formal"], "shots": [0]}, ignore=("size_b",),
            source="Fig 4b, Appendix Table 5 (operand size)",
            claim="accuracy falls as sets grow (90.4 / 80.6 / 70.5 / 54.4 for 2 / 4 / 8 / 16)",
            paper={(2, 4): 9.78, (4, 8): 10.14, (8, 16): 16.06}, paper_table="setlexsem_by_size"),
    Finding("llm_comparison", "Models compared", "model", (),
            {"members": ["numbers", "words"], "phrasing": ["formal"], "shots": [0], "length": [1, 2, 3, 4],
             "approach": ["baseline_allow_empty", "composite_allow_empty"]},
            source="Fig 3, Appendix Table 3 (LLMs)", claim="models differ in mean and, more, in spread",
            paper_table="setlexsem_by_model"),
    Finding("compare_deciles", "Token frequency deciles", "decile", (), {"members": ["deciles"],
                                                                       "phrasing": ["formal"]},
            source="Fig 6 (token frequency)", claim="rarer words are not uniformly harder: the effect depends "
                                                       "on length (Fig 6a)"),
    Finding("deceptiveness_swapping_effect", "Swapping hyponyms between the sets", "condition",
            (("swapped", "not_swapped"),), {"members": ["deceptive"], "phrasing": ["formal"]}, pairing="sample",
            ignore=("swap_count",), source="Fig 7, Appendix Table 8 (deceptive words)",
            claim="swapping lowers accuracy (Claude Haiku 71.9 vs 91.8; −41 points on intersections)",
            paper={("swapped", "not_swapped"): -19.96}, paper_table="setlexsem_deceptive"),
    Finding("deceptiveness_effect", "Deceptive vs random words", "condition", (("swapped", "random"),),
            {"members": ["deceptive"], "phrasing": ["formal"]}, pairing="none", ignore=("swap_count",),
            source="Fig 7, Appendix Table 8", claim="swapped deceptive sets are harder than a random baseline (71.9 vs 81.1)",
            paper={("swapped", "random"): -9.18}, paper_table="setlexsem_deceptive"),
    Finding("deceptiveness_effect_k_shots", "Swapping effect by number of demonstrations", "condition",
            (("swapped", "not_swapped"),), {"members": ["deceptive"], "phrasing": ["formal"]}, pairing="sample",
            within=("shots",), ignore=("swap_count",), source="Fig 8 (demonstrations × relationship between A and B)",
            claim="demonstrations do not remove the swapping effect"),
    Finding("effect_of_deceptive_words_when_sampled_for_word_and_overlap_samplers",
            "Deceptive sets vs plainly sampled words", "sampler",
            (("words", "deceptive not_swapped"), ("words", "deceptive swapped")),
            {"members": ["words", "deceptive"], "phrasing": ["formal"]}, pairing="none",
            ignore=("condition", "swap_count", "pos", "length"), source="Fig 7, Appendix Table 8 (words vs deceptive)",
            claim="deceptive (swapped) sets are harder than words sampled plainly"),
    Finding("effect_of_deceptive_words_when_sampled_for_word_and_overlap_samplers_for_each_set_operation",
            "Deceptive sets vs plainly sampled words, per operation", "sampler",
            (("words", "deceptive not_swapped"), ("words", "deceptive swapped")),
            {"members": ["words", "deceptive"], "phrasing": ["formal"]}, pairing="none", within=("operation",),
            ignore=("condition", "swap_count", "pos", "length"), source="Appendix Table 9 (deceptive, per operation)",
            claim="the gap is largest for intersections", paper_table="setlexsem_deceptive_by_operation"),
    Finding("is_overlap_important_only_haiku_numbers", "Overlap between the sets (numbers)", "overlapping",
            (("overlap", "independent"),), {"members": ["numbers"], "phrasing": ["formal"]}, pairing="none",
            ignore=("overlap",), source="Appendix (overlap samplers)",
            claim="a controlled overlap changes accuracy on numbers"),
    Finding("is_overlap_important_only_haiku_words", "Overlap between the sets (words)", "overlapping",
            (("overlap", "independent"),), {"members": ["words"], "phrasing": ["formal"]}, pairing="none",
            ignore=("overlap",), source="Appendix (overlap samplers)",
            claim="a controlled overlap changes accuracy on words"),
    Finding("length_5_minus_3_per_decile", "Word length 5 vs 3, per frequency decile (Fig 6a)", "length",
            ((5, 3),), {"members": ["deciles"]}, within=("decile",), source="Fig 6a, Appendix Table 7",
            claim="longer words are easier, most in rare deciles (+16.6 points in decile 2, +1.7 in decile 5)",
            paper={(5, 3, 2): 16.6, (5, 3, 3): 11.2, (5, 3, 4): 6.4, (5, 3, 5): 1.7, (5, 3, 6): 4.9,
                   (5, 3, 7): 4.2, (5, 3, 8): 2.5, (5, 3, 9): 3.8},
            paper_table="setlexsem_len5_minus_len3_by_decile"),
    Finding("precision_recall_jaccard", "Precision, recall and Jaccard of the answers", "operation",
            source="§3 metrics (per-item precision, recall, Jaccard)", kind="metrics",
            claim="partial credit: how far wrong answers are from the truth"),
)
BY_ID = {f.id: f for f in FINDINGS}

# columns made from others for a finding (the reference groups by them; we store their parts): ``sampler`` =
# words, or "deceptive <condition>"; ``overlapping`` = "overlap" when a fraction of the smaller set is shared by
# design, else "independent" (see _derive)


# ---------------------------------------------------------------------------------------------------- statistics

def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error), NaN kept as NaN."""
    idx = [i for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    order = sorted(idx, key=lambda i: pvalues[i])
    m = len(order)
    out = [float("nan")] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def mean_difference(a: Sequence[float], b: Sequence[float], paired: bool, confidence: float = 0.95) -> dict:
    """mean(a) − mean(b) with its interval and p (paired t on a − b, or Welch's t)."""
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    out = {"estimate": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "p": float("nan"),
           "paired": paired, "n_a": int(len(a)), "n_b": int(len(b)), "caveat": None}
    if len(a) == 0 or len(b) == 0:
        return out
    out["estimate"] = float(a.mean() - b.mean())
    q = 0.5 + confidence / 2
    if paired:
        d = a - b
        n = len(d)
        if n < 2:
            out["caveat"] = "one pair: no interval"
            return out
        sd = d.std(ddof=1)
        if sd == 0:
            out.update(ci_low=out["estimate"], ci_high=out["estimate"], p=1.0 if out["estimate"] == 0 else 0.0,
                       caveat="every pair differs by the same amount: no sampling variation to test")
            return out
        se = sd / math.sqrt(n)
        t = stats.t.ppf(q, n - 1)
        out.update(ci_low=out["estimate"] - t * se, ci_high=out["estimate"] + t * se,
                   p=float(stats.ttest_1samp(d, 0.0).pvalue))
        return out
    if len(a) < 2 or len(b) < 2:
        out["caveat"] = "fewer than two configurations on a side: no interval"
        return out
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        out.update(ci_low=out["estimate"], ci_high=out["estimate"], p=1.0 if out["estimate"] == 0 else 0.0,
                   caveat="no variation on either side: no test")
        return out
    df = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1) if va else 0) + (vb ** 2 / (len(b) - 1) if vb else 0))
    t = stats.t.ppf(q, df)
    out.update(ci_low=out["estimate"] - t * se, ci_high=out["estimate"] + t * se,
               p=float(stats.ttest_ind(a, b, equal_var=False).pvalue))
    return out


def spread_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Standard deviations and the Brown–Forsythe test of equal spread (Levene around the median)."""
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    out = {"std_a": float(a.std(ddof=1)) if len(a) > 1 else float("nan"),
           "std_b": float(b.std(ddof=1)) if len(b) > 1 else float("nan"), "p": float("nan"),
           "test": "Brown–Forsythe"}
    if len(a) > 1 and len(b) > 1 and (np.ptp(a) > 0 or np.ptp(b) > 0):
        out["p"] = float(stats.levene(a, b, center="median").pvalue)
    return out


# ----------------------------------------------------------------------------------------------------- the data

def _design(con, view: str) -> list[str]:
    have = set(view_columns(con, view))
    return [c for c in DESIGN if c in have]


def _points(con, run_ids, f: Finding, scoring: str, view: str) -> pd.DataFrame:
    """Per-configuration accuracy with every design factor, the model and the finding's derived column."""
    # a column that changes inside a configuration (a deceptive sample's part of speech) is not a design factor:
    # grouping configurations by it would split them (issue 18)
    if aggregated.usable(con, view, run_ids, ()):
        inside = aggregated.inside_columns(con, run_ids)["varies"]
    else:
        inside = set(factor_columns(con, run_ids, view, per_sample=True)) - set(factor_columns(con, run_ids, view))
    design = [c for c in _design(con, view) if c not in inside]
    pts = config_accuracy(con, run_ids, ["model", *design], f.filters, view, scoring)
    return _derive(pts, f)


def _derive(df: pd.DataFrame, f: Finding) -> pd.DataFrame:
    if df.empty:
        return df
    if f.factor == "sampler" or "sampler" in f.within:
        cond = df["condition"].fillna("") if "condition" in df else ""
        df["sampler"] = np.where(df["members"] == "deceptive", "deceptive " + cond, df["members"])
    if f.factor == "overlapping":
        ov = pd.to_numeric(df["overlap"], errors="coerce").fillna(0) if "overlap" in df else 0
        df["overlapping"] = np.where(ov > 0, "overlap", "independent")
    return df


def _samples(con, run_ids, f: Finding, scoring: str, view: str) -> pd.DataFrame:
    """One row per answered item (verdict 0/100) with the design factors, model and sample index."""
    design = _design(con, view)
    cols = ["model", "run_id", "seed", "sample", *design]
    where, params = _where(con, run_ids, f.filters, view=view)
    sel = ", ".join(_quote(c) for c in cols)
    df = con.execute(f"SELECT {sel}, 100.0 * CAST(correct AS INTEGER) AS accuracy FROM {_src(con, view, scoring)} "
                     f"{where}", params).df()
    return _derive(df, f)


def _level_eq(series: pd.Series, level) -> pd.Series:
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        return pd.to_numeric(series, errors="coerce") == level
    return series.astype(str) == str(level)


def _levels(df: pd.DataFrame, column: str) -> list:
    vals = [v for v in df[column].dropna().unique().tolist()] if column in df else []
    try:
        return sorted(vals)
    except TypeError:
        return sorted(vals, key=str)


def _pair_key(df: pd.DataFrame, f: Finding) -> list[str]:
    """The columns two observations must share to be a pair: every design factor but the contrasted one (and those
    that change with it), the model (except when models are contrasted), and for samples the seed and index."""
    skip = {f.factor, "accuracy", "n", "n_correct", "config_id", "run_id", "sampler", "overlapping",
            *f.ignore, *f.within}
    if f.factor == "sampler":
        skip |= {"members", "condition"}
    return [c for c in df.columns if c not in skip]


def _pair_ids(side_a: pd.DataFrame, side_b: pd.DataFrame, key: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One integer per row of each side, equal where the rows agree on every ``key`` column (a missing value
    matches a missing value): the pairing key, numbered over both sides at once."""
    if not key:
        return np.zeros(len(side_a), dtype=np.int64), np.zeros(len(side_b), dtype=np.int64)
    both = pd.concat([side_a[key], side_b[key]], ignore_index=True)
    ids = both.groupby(key, dropna=False, sort=False).ngroup().to_numpy()
    return ids[:len(side_a)], ids[len(side_a):]


def _contrast(df: pd.DataFrame, f: Finding, a, b, unit: str) -> dict:
    side_a, side_b = df[_level_eq(df[f.factor], a)], df[_level_eq(df[f.factor], b)]
    paired = False
    if f.pairing in ("config", "sample"):
        key = _pair_key(df, f)
        if f.pairing == "config":
            key = [c for c in key if c not in ("seed", "sample")]
        ka, kb = _pair_ids(side_a, side_b, key)
        ma = side_a["accuracy"].groupby(ka).mean()
        mb = side_b["accuracy"].groupby(kb).mean()
        common = ma.index.intersection(mb.index)
        if len(common) >= 2:
            paired = True
            stats = mean_difference(ma[common].to_numpy(), mb[common].to_numpy(), paired=True)
            stats["n_pairs"] = int(len(common))
    if not paired:
        stats = mean_difference(side_a["accuracy"].to_numpy(), side_b["accuracy"].to_numpy(), paired=False)
        stats["n_pairs"] = 0
    spread = spread_test(side_a["accuracy"].to_numpy(), side_b["accuracy"].to_numpy())
    return {"a": _plain(a), "b": _plain(b), **{k: _plain(v) for k, v in stats.items()}, "unit": unit,
            "mean_a": _plain(side_a["accuracy"].mean()) if len(side_a) else None,
            "mean_b": _plain(side_b["accuracy"].mean()) if len(side_b) else None,
            "spread": {k: _plain(v) for k, v in spread.items()}}


def _plain(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _get_stats(points: pd.DataFrame) -> list[dict]:
    """The reference's get_stats: mean / std / min / max / N of per-configuration accuracy per operation × type."""
    by = [c for c in TABLE_BY if c in points]
    table = group_summary(points, by)
    return [{k: _plain(v) for k, v in row.items()} for row in table.to_dict("records")]


def _paper_rows(f: Finding) -> list[dict]:
    if not f.paper_table:
        return []
    from core.analysis.reference import reference_table

    try:
        return [{k: _plain(v) for k, v in row.items()} for row in reference_table(f.paper_table).to_dict("records")]
    except Exception:   # a table missing from the shipped file: the finding still stands
        return []


def _metrics(con, run_ids, f: Finding, scoring: str, view: str) -> dict:
    where, params = _where(con, run_ids, f.filters, view=view)
    have = set(view_columns(con, view))
    if not {"precision", "recall", "jaccard"} <= have:
        return {"applicable": False, "missing": ["precision/recall/jaccard columns"], "table": []}
    by = [c for c in ("model", *TABLE_BY) if c in have]
    sel = ", ".join(_quote(c) for c in by)
    if aggregated.usable(con, view, run_ids, [*by, "task", *f.filters]):
        where, params = _where(con, run_ids, f.filters, answered=False, view=view)
        cond = f"{where} AND task = 'setops' AND n > 0" if where else "WHERE task = 'setops' AND n > 0"
        df = con.execute(
            f"SELECT {sel}, CAST(sum(n) AS BIGINT) AS n, 100 * (sum(precision_sum) / sum(precision_n)) AS precision, "
            f"100 * (sum(recall_sum) / sum(recall_n)) AS recall, 100 * (sum(jaccard_sum) / sum(jaccard_n)) AS jaccard, "
            f"100.0 * (sum(n_correct) / sum(n)) AS accuracy FROM {aggregated.relation(con, scoring)} {cond} "
            f"GROUP BY {sel} ORDER BY {sel}", params).df()
        rows = [{k: _plain(v) for k, v in r.items()} for r in df.to_dict("records")]
        return {"applicable": bool(rows), "missing": [] if rows else ["set-operation results"], "table": rows}
    cond = f"{where} AND task = 'setops'" if where else "WHERE task = 'setops'"
    df = con.execute(
        f"SELECT {sel}, count(*) AS n, 100 * avg(precision) AS precision, 100 * avg(recall) AS recall, "
        f"100 * avg(jaccard) AS jaccard, 100.0 * avg(CAST(correct AS INTEGER)) AS accuracy "
        f"FROM {_src(con, view, scoring)} {cond} GROUP BY {sel} ORDER BY {sel}", params).df()
    rows = [{k: _plain(v) for k, v in r.items()} for r in df.to_dict("records")]
    return {"applicable": bool(rows), "missing": [] if rows else ["set-operation results"], "table": rows}


def evaluate(con, run_ids: Sequence[str] | None, f: Finding, scoring: str = "strict", view: str = VIEW) -> dict:
    """One finding from the stored runs (p values not yet adjusted: ``report`` adjusts across all)."""
    out: dict[str, Any] = {"id": f.id, "title": f.title, "factor": f.factor, "filters": dict(f.filters),
                           "pairing": f.pairing, "within": list(f.within), "source": f.source, "claim": f.claim,
                           "paper": _paper_rows(f), "contrasts": [], "spread": [], "table": [],
                           "applicable": True, "missing": []}
    if f.kind == "metrics":
        out.update(_metrics(con, run_ids, f, scoring, view))
        return out
    points = _points(con, run_ids, f, scoring, view)
    if points.empty or f.factor not in points:
        out.update(applicable=False, missing=[f"results matching {_describe(f.filters)}"])
        return out
    out["table"] = _get_stats(points)
    data = _samples(con, run_ids, f, scoring, view) if f.pairing == "sample" else points
    unit = "samples (paired by draw, index and operation)" if f.pairing == "sample" else "per-configuration accuracy"
    present = _levels(points, f.factor)
    pairs = list(f.pairs) or [(present[i], present[i + 1]) for i in range(len(present) - 1)]
    if not f.pairs and f.factor == "model":
        pairs = [(x, y) for i, x in enumerate(present) for y in present[i + 1:]]
    groups = [((), data)] if not f.within else list(data.groupby(list(f.within), dropna=False))
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        for a, b in pairs:
            if not (_level_eq(part[f.factor], a).any() and _level_eq(part[f.factor], b).any()):
                continue
            c = _contrast(part, f, a, b, unit)
            if f.within:
                c["within"] = {w: _plain(v) for w, v in zip(f.within, key)}
            paper_key = (a, b, *key) if f.within else (a, b)
            c["paper_estimate"] = f.paper.get(paper_key)
            out["contrasts"].append(c)
    if not out["contrasts"]:
        wanted = sorted({str(x) for p in pairs for x in p}) if pairs else []
        have = {str(x) for x in present}
        missing = [w for w in wanted if w not in have] or ([f"two levels of {f.factor}"] if len(present) < 2 else
                                                           ["levels of the contrast within the same split"])
        out.update(applicable=False, missing=missing)
    out["spread"] = [dict(c["spread"], a=c["a"], b=c["b"], **({"within": c["within"]} if "within" in c else {}))
                     for c in out["contrasts"]]
    return out


def _describe(filters: Mapping[str, Sequence]) -> str:
    return ", ".join(f"{k} in {list(v)}" for k, v in filters.items()) or "any results"


def report(con, run_ids: Sequence[str] | None, scoring: str = "strict", alpha: float = 0.05,
           only: Sequence[str] | None = None, view: str = VIEW) -> dict:
    """Every finding (or ``only`` those ids) with Holm-adjusted p values across all contrasts of the report."""
    scoring = check_scoring(scoring)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        from core.errors import UserError

        raise UserError(f"alpha must be between 0 and 1, got {alpha!r}")
    chosen = [BY_ID[i] for i in only] if only else list(FINDINGS)
    found = [evaluate(con, run_ids, f, scoring, view) for f in chosen]
    contrasts = [c for fd in found for c in fd["contrasts"]]
    adjusted = holm([c["p"] if c["p"] is not None else float("nan") for c in contrasts])
    for c, p in zip(contrasts, adjusted):
        c["p_adjusted"] = _plain(p)
        c["significant"] = c["p_adjusted"] is not None and c["p_adjusted"] < alpha
    for fd in found:
        fd["verdicts"] = [verdict(fd, c, alpha) for c in fd["contrasts"]] if fd["applicable"] else [
            f"Not answerable from these runs: missing {', '.join(map(str, fd['missing']))}."]
    return {"alpha": alpha, "scoring": scoring, "correction": "Holm, across every contrast in the report",
            "runs": list(run_ids) if run_ids is not None else None, "findings": found}


# -------------------------------------------------------------------------------------------------------- words

def _level_text(factor: str, v) -> str:
    from core.analysis.figures import level_text

    if factor in ("sampler", "overlapping"):
        return str(v).replace("_", " ")
    return level_text(factor, v)


def _p_text(p) -> str:
    if p is None:
        return "p not defined"
    return "adjusted p < 0.001" if p < 0.001 else f"adjusted p = {p:.3f}"


def verdict(fd: dict, c: dict, alpha: float) -> str:
    """One sentence a person can read: direction, size, interval, pairing, adjusted significance, the paper."""
    factor = fd["factor"]
    a, b = _level_text(factor, c["a"]), _level_text(factor, c["b"])
    where = ""
    if c.get("within"):
        where = " (" + ", ".join(f"{_level_text(k, v)}" if k != "decile" else f"decile {v}"
                                 for k, v in c["within"].items()) + ")"
    est = c.get("estimate")
    if est is None:
        return f"{a} vs {b}{where}: no estimate ({c.get('caveat') or 'no data'})."
    if abs(est) < 0.05:
        size = f"{a} and {b} score the same on average"
    else:
        size = f"{a} {'beats' if est > 0 else 'trails'} {b} by {abs(est):.1f} points"
    ci = (f" [{c['ci_low']:.1f}, {c['ci_high']:.1f}]" if c.get("ci_low") is not None and c.get("ci_high") is not None
          else "")
    if c.get("paired"):
        unit = "samples" if "samples" in c.get("unit", "") else "matched configurations"
        how = f"paired over {c['n_pairs']} {unit}"
    else:
        how = f"unpaired, {c['n_a']} vs {c['n_b']} {'samples' if 'samples' in c.get('unit', '') else 'configurations'}"
    sig = "significant" if c.get("significant") else "not significant"
    text = f"{size}{where}{ci}, {how}, {_p_text(c.get('p_adjusted'))} ({sig} at α = {alpha:g})"
    sp = c.get("spread") or {}
    if sp.get("std_a") is not None and sp.get("std_b") is not None:
        text += f"; spread (std) {sp['std_a']:.1f} vs {sp['std_b']:.1f}"
        if sp.get("p") is not None:
            text += ", Brown–Forsythe p " + ("< 0.001" if sp["p"] < 0.001 else f"= {sp['p']:.3f}")
    if c.get("paper_estimate") is not None:
        text += f" — paper: {c['paper_estimate']:+.1f} points"
    if c.get("caveat"):
        text += f" ({c['caveat']})"
    return text[:1].upper() + text[1:] + "."
