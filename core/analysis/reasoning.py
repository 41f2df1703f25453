"""Finding (ours, beyond the SetLexSem paper): does thinking remove the deceptive-set failure? The effect of reasoning
effort on accuracy, on the deceptive swap effect, and on the spread across phrasings and approaches — model by model.

The paper measured models that answer at once; whether a model that reasons first still falls for sets whose
members were swapped between two semantic groups is a question the paper could not ask. The same draws are asked
at every effort (the ``reasoning`` factor of a config crosses the grid; core/tasks/setops/grid.py), so every
contrast here is *within draw* and tested at the level of draws, the independent unit:

* **effort** — per draw, the mean over its matched strata (operation, phrasing, approach, shots, condition, swap
  count: every other factor held equal) of accuracy at the higher effort minus the lower;
* **swap effect at each effort** — per draw, the mean over matched strata of accuracy not swapped minus swapped
  (the paper's deceptive-set failure, in points);
* **interaction** — per draw, swap effect at the higher effort minus swap effect at the lower: negative when
  thinking shrinks the failure, zero when it leaves it as it was;
* **spread** — per draw and stratum, the range (max − min) of accuracy across the phrasing × approach levels
  asked; per draw, its mean at the higher effort minus at the lower (negative: more consistent when thinking).

Each contrast is the mean of the per-draw values with the sign-flip permutation test over draws and a percentile
bootstrap interval (``stats.paired_contrast``); the p-values of one contrast across the series are adjusted
together (``stats.holm``) and a verdict is declared only below ``ALPHA`` after adjustment. Models, provenances
and efforts are never pooled: one row per (series, contrast), a series being one model and one provenance
(``with_series``: runs made here of one model pool and are named in ``runs``; an upload is a file's claims and a
series of its own; rows without a ``provenance`` column keep each run apart); levels are compared two at a time
(the lowest and the highest effort asked, or the two given). ``level_contrasts(rows)`` walks every level asked instead: each level against the next
one, and the swap effect at each level (what "what thinking buys" shows, core/analysis/effort.py).

A contrast over too few draws (the engine's one rule, ``stats.too_few``: fewer than ``stats.MIN_UNITS``) is not
tested: its estimate stands alone, without interval or p, marked ``testable`` False, verdict "too few to test".

Inputs: ``reasoning_verdicts(rows)`` takes one row per answered item with ``model``, ``draw`` (an integer naming
the independent draw: the sampler's factors, the seed and the sample index — the findings' own ``rows`` give it),
``reasoning``, ``accuracy`` (0 or 100), ``condition`` for the swap contrasts, and whichever of the strata columns
the runs have. It needs only two functions of core/analysis/stats.py: ``paired_contrast(values)`` → dict with
``estimate``, ``ci_low``, ``ci_high``, ``p``, ``n``, ``caveat``; and ``holm(pvalues)`` → adjusted p-values.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from core.tasks import REASONING_EFFORTS

ALPHA = 0.05
EFFORTS = REASONING_EFFORTS   # none, then the scale from the least to the most thinking
STRATA = ("operation", "phrasing", "approach", "shots", "condition", "swap_count")
SPREAD_OVER = ("phrasing", "approach")
CONTRASTS = ("effort", "swap_effect_low", "swap_effect_high", "interaction", "spread")
COLUMNS = ["model", "provenance", "series", "runs", "contrast", "low", "high", "estimate", "ci_low", "ci_high", "p",
           "p_holm", "n_draws", "verdict", "caveat"]
LEVEL_CONTRASTS = ("swap_effect", "effort", "interaction", "spread")
LEVEL_COLUMNS = ["model", "provenance", "series", "runs", "contrast", "low", "high", "estimate", "ci_low", "ci_high",
                 "p", "p_holm", "n_draws", "testable", "verdict", "caveat"]
SERIES = ["model", "provenance", "series", "runs"]
SWAP = ("not_swapped", "swapped")


def effort_levels(rows: pd.DataFrame) -> list[str]:
    """The efforts in ``rows``, from the least to the most thinking."""
    have = {str(v) for v in rows["reasoning"].dropna().unique()} if "reasoning" in rows else set()
    return sorted(have, key=lambda e: EFFORTS.index(e) if e in EFFORTS else len(EFFORTS))


def series_label(model, kind, run=None) -> str:
    """The name of one series: the model and where its answers came from; an upload is a file's claims and names
    its run (uploads are never pooled with each other); a run of unknown provenance names its run."""
    from core.store.provenance import badge

    if kind is None:
        return f"{model} · run {run}" if run is not None else str(model)
    return f"{model} · {badge(kind)}" + (f" ({run})" if run is not None else "")


def with_series(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``series`` (what may be pooled: one model, one provenance — runs made here of one model
    together, each upload alone) and ``runs`` (the runs pooled in the series, comma-separated). Without a
    ``provenance`` column each run is a series of its own (what cannot be told apart is not pooled)."""
    from core.store.provenance import UPLOADED

    out = rows.copy()
    has_runs = "run_id" in out
    if "provenance" not in out:
        out["provenance"] = None
    kinds = [None if pd.isna(k) else k for k in out["provenance"]]
    runs = out["run_id"].astype(str).tolist() if has_runs else [None] * len(out)
    # findings.rows names an upload's series in ``model`` and keeps the model itself in ``model_name``
    models = out["model_name"] if "model_name" in out else out["model"]
    out["series"] = [series_label(m, k, r if k is None or k == UPLOADED else None)
                     for m, k, r in zip(models, kinds, runs)]
    if has_runs:
        pooled = out.groupby("series")["run_id"].agg(lambda r: ", ".join(sorted({str(x) for x in r.dropna()})))
        out["runs"] = out["series"].map(pooled)
    else:
        out["runs"] = ""
    return out


def who(row: Mapping) -> str:
    """How a line names its series: the series, and the runs when more than one made here were pooled."""
    name = row.get("series") or str(row.get("model"))
    runs = str(row.get("runs") or "")
    return f"{name} [runs pooled: {runs}]" if ", " in runs else name


def _series_of(part: pd.DataFrame) -> dict:
    first = part.iloc[0]
    kind = first["provenance"]
    return {"model": first["model"], "provenance": None if pd.isna(kind) else kind, "series": first["series"],
            "runs": first["runs"]}


def _strata(rows: pd.DataFrame, drop: Sequence[str] = ()) -> list[str]:
    return [c for c in STRATA if c in rows.columns and c not in drop]


def _cell_means(rows: pd.DataFrame, by: list[str]) -> pd.Series:
    return rows.groupby(by, dropna=False, sort=True)["accuracy"].mean()


def _per_draw_difference(rows: pd.DataFrame, factor: str, a, b, strata: list[str]) -> pd.Series:
    """Per draw: mean over its strata that have both levels of (mean accuracy at ``a`` − at ``b``)."""
    part = rows[rows[factor].isin([a, b])]
    strata = [s for s in strata if s != factor]
    cells = _cell_means(part, ["draw", *strata, factor]).unstack(factor)
    if a not in cells or b not in cells:
        return pd.Series(dtype=float)
    both = cells[[a, b]].dropna()
    return (both[a] - both[b]).groupby(level="draw").mean()


def _swap_effect(rows: pd.DataFrame, strata: list[str]) -> pd.Series:
    """Per draw: the swap effect (not swapped − swapped), strata other than the condition held equal."""
    return _per_draw_difference(rows, "condition", SWAP[0], SWAP[1], [s for s in strata if s != "swap_count"])


def _spread(rows: pd.DataFrame, strata: list[str]) -> pd.Series:
    """Per (draw, stratum): the range of accuracy across the phrasing × approach levels asked there."""
    over = [c for c in SPREAD_OVER if c in rows.columns]
    keep = [s for s in strata if s not in over]
    cells = _cell_means(rows, ["draw", *keep, *over])
    grouped = cells.groupby(level=["draw", *keep], dropna=False)
    ranged = grouped.max() - grouped.min()
    counts = grouped.size()
    return ranged[counts >= 2]


def draw_contrasts(rows: pd.DataFrame, low: str, high: str) -> dict[str, pd.Series]:
    """The per-draw values of every contrast of one model's rows (see the module docstring)."""
    strata = _strata(rows)
    out: dict[str, pd.Series] = {}
    out["effort"] = _per_draw_difference(rows, "reasoning", high, low, strata)
    if "condition" in rows and rows["condition"].isin(SWAP).any():
        at = {e: _swap_effect(rows[rows["reasoning"] == e], strata) for e in (low, high)}
        out["swap_effect_low"], out["swap_effect_high"] = at[low], at[high]
        both = pd.concat([at[high].rename("h"), at[low].rename("l")], axis=1).dropna()
        out["interaction"] = both["h"] - both["l"]
    over = [c for c in SPREAD_OVER if c in rows.columns]
    if over and rows[over].drop_duplicates().shape[0] >= 2:
        keep = [s for s in strata if s not in over]
        spreads = {e: _spread(rows[rows["reasoning"] == e], keep) for e in (low, high)}
        both = pd.concat([spreads[high].rename("h"), spreads[low].rename("l")], axis=1).dropna()
        out["spread"] = (both["h"] - both["l"]).groupby(level="draw").mean()
    return out


def reasoning_verdicts(rows: pd.DataFrame, low: str | None = None, high: str | None = None,
                       alpha: float = ALPHA) -> pd.DataFrame:
    """One row per (model, contrast): the mean per-draw contrast (points), its interval, p, Holm-adjusted p over
    the models, the number of draws and a verdict (``higher`` / ``lower`` / ``no evidence``: the sign of a
    declared estimate). Empty when the rows do not hold two efforts."""
    from core.analysis.stats import holm

    levels = effort_levels(rows)
    low = low or (levels[0] if levels else None)
    high = high or (levels[-1] if levels else None)
    if low is None or high is None or low == high:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for _, part in with_series(rows).groupby("series", sort=True):
        who = _series_of(part)
        for contrast, values in draw_contrasts(part, low, high).items():
            res = _tested(values)
            out.append({**who, "contrast": contrast, "low": low, "high": high,
                        "estimate": res["estimate"], "ci_low": res["ci_low"], "ci_high": res["ci_high"],
                        "p": res["p"], "n_draws": int(res["n"]), "caveat": res.get("caveat")})
    df = pd.DataFrame(out, columns=[c for c in COLUMNS if c not in ("p_holm", "verdict")])
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    df["p_holm"] = math.nan
    for contrast, idx in df.groupby("contrast").groups.items():
        df.loc[idx, "p_holm"] = holm(df.loc[idx, "p"].tolist())
    df["verdict"] = [
        ("higher" if est > 0 else "lower") if p is not None and not math.isnan(p) and p < alpha and est != 0
        else "no evidence" for est, p in zip(df["estimate"], df["p_holm"])]
    order = {c: i for i, c in enumerate(CONTRASTS)}
    return df.assign(_o=df["contrast"].map(order)).sort_values(["series", "_o"]).drop(columns="_o")[COLUMNS] \
        .reset_index(drop=True)


def describe(verdicts: pd.DataFrame) -> list[str]:
    """One sentence per model on the interaction: whether thinking changed the swap effect, with its numbers."""
    lines = []
    for row in verdicts[verdicts["contrast"] == "interaction"].to_dict("records"):
        low, high = row["low"], row["high"]
        numbers = (f"{row['estimate']:+.1f} points per draw [{row['ci_low']:+.1f}, {row['ci_high']:+.1f}], "
                   f"Holm p = {row['p_holm']:.3g}, {row['n_draws']} draws")
        if row["verdict"] == "lower":
            lines.append(f"{who(row)}: thinking at {high} shrinks the deceptive swap effect against {low} "
                         f"({numbers}).")
        elif row["verdict"] == "higher":
            lines.append(f"{who(row)}: the deceptive swap effect grows from {low} to {high} ({numbers}).")
        else:
            lines.append(f"{who(row)}: no evidence that thinking at {high} changes the deceptive swap effect "
                         f"against {low} ({numbers}).")
    return lines


FINDING_ID = "reasoning_effort"
_WORDS = {"effort": "accuracy at {high} minus {low}",
          "swap_effect_low": "swap effect (not swapped − swapped) at {low}",
          "swap_effect_high": "swap effect (not swapped − swapped) at {high}",
          "interaction": "change of the swap effect from {low} to {high}",
          "spread": "spread across phrasings × approaches at {high} minus {low}"}


def as_finding(rows: pd.DataFrame, alpha: float = ALPHA) -> dict | None:
    """This finding in the shape of the paper's findings (``core.analysis.findings.report``): one sentence per model
    and contrast, the verdict table as its table; None when the rows hold fewer than two efforts."""
    if "reasoning" not in rows or len(effort_levels(rows)) < 2:
        return None
    table = reasoning_verdicts(rows, alpha=alpha)
    lines = []
    for r in table.to_dict("records"):
        what = _WORDS[r["contrast"]].format(low=r["low"], high=r["high"])
        if r["estimate"] is None or math.isnan(r["estimate"]):
            text = f"{what}: no estimate ({r.get('caveat') or 'no matched draw'})."
        else:
            ci = ("" if math.isnan(r["ci_low"]) else f" [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]")
            decided = {"higher": "declared positive", "lower": "declared negative"}.get(r["verdict"],
                                                                                        "not significant")
            text = (f"{what}: {r['estimate']:+.1f} points{ci}, paired over {r['n_draws']} draws, Holm p over the "
                    f"models = {r['p_holm']:.3g} ({decided} at α = {alpha:g}).")
        lines.append({"model": r["model"], "series": r["series"], "runs": r["runs"], "text": text})
    series = table.drop_duplicates("series")[["model", "provenance", "series", "runs"]].to_dict("records") \
        if len(table) else []
    return {"id": FINDING_ID, "title": "Reasoning effort: does thinking remove the deceptive-set failure?",
            "source": "ours, beyond the paper (it measured models that answer at once)",
            "claim": "not in the paper: the effect of test-time reasoning on accuracy, on the deceptive swap effect "
                     "and on the spread across phrasings and approaches",
            "factor": "reasoning", "applicable": bool(len(table)), "missing": [] if len(table) else
            ["two reasoning efforts asked on the same draws"], "contrasts": [], "table":
            [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
             for r in table.to_dict("records")],
            "paper": [], "models": [{"model": x["model"], "series": x["series"], "provenance": x["provenance"],
                                     "runs": [r for r in str(x["runs"] or "").split(", ") if r]} for x in series],
            "beyond_paper": True, "verdicts": [f"{who(x)}: {x['text']}" for x in lines], "lines": lines}


def _tested(values: pd.Series) -> dict:
    """The engine's paired contrast of per-draw values: the estimate alone, without interval or p, where the engine's
    one rule (``stats.too_few``) says the draws are too few to test."""
    from core.analysis.stats import paired_contrast

    d = values.to_numpy(dtype=float)
    res = dict(paired_contrast(d))
    if d.size == 0:
        res["caveat"] = "no matched draw"
    res["testable"] = bool(res.get("testable"))
    if not res["testable"]:
        res.update(ci_low=math.nan, ci_high=math.nan, p=math.nan)
    return res


def level_contrasts(rows: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Per model, every effort level asked: the deceptive swap effect at the level (``swap_effect``, low = high =
    the level), and for each level against the next one asked (low → high) the change of accuracy (``effort``),
    of the swap effect (``interaction``) and of the spread across phrasings × approaches (``spread``) — each the
    mean of per-draw values, paired on the same draws, tested by the engine (sign-flip p, bootstrap interval).
    Holm-adjusted within each kind of contrast over every model and pair; a verdict only below ``alpha`` after
    adjustment and only where testable."""
    from core.analysis.stats import holm

    if rows.empty or "reasoning" not in rows or "draw" not in rows:
        return pd.DataFrame(columns=LEVEL_COLUMNS)
    out = []
    for _, part in with_series(rows).groupby("series", sort=True):
        who = _series_of(part)
        levels = effort_levels(part)
        strata = _strata(part)
        if "condition" in part and part["condition"].isin(SWAP).any():
            for level in levels:
                values = _swap_effect(part[part["reasoning"] == level], strata)
                if len(values):
                    out.append({**who, "contrast": "swap_effect", "low": level, "high": level,
                                **_tested(values)})
        for low, high in zip(levels, levels[1:]):
            for contrast, values in draw_contrasts(part, low, high).items():
                if contrast in LEVEL_CONTRASTS:
                    out.append({**who, "contrast": contrast, "low": low, "high": high, **_tested(values)})
    if not out:
        return pd.DataFrame(columns=LEVEL_COLUMNS)
    df = pd.DataFrame(out)
    df["n_draws"] = df["n"].astype(int)
    df["p_holm"] = math.nan
    for _, idx in df[df["testable"]].groupby("contrast").groups.items():
        df.loc[idx, "p_holm"] = holm(df.loc[idx, "p"].tolist())
    df["verdict"] = [
        ("higher" if est > 0 else "lower") if ok and not math.isnan(p) and p < alpha and est != 0 else
        ("too few to test" if not ok else "no evidence")
        for est, p, ok in zip(df["estimate"], df["p_holm"], df["testable"])]
    if "caveat" not in df:
        df["caveat"] = None
    order = {c: i for i, c in enumerate(LEVEL_CONTRASTS)}
    rank = {e: i for i, e in enumerate(EFFORTS)}
    return df.assign(_c=df["contrast"].map(order), _l=df["low"].map(lambda e: rank.get(e, 99))) \
        .sort_values(["series", "_c", "_l"])[LEVEL_COLUMNS].reset_index(drop=True)


def describe_levels(contrasts: pd.DataFrame) -> list[str]:
    """One sentence per row of ``level_contrasts``: what changed from one level to the next, with its numbers."""
    words = {"swap_effect": "swap effect (not swapped − swapped) at {low}",
             "effort": "accuracy from {low} to {high}", "interaction": "swap effect from {low} to {high}",
             "spread": "spread across phrasings × approaches from {low} to {high}"}
    lines = []
    for r in contrasts.to_dict("records"):
        what = words[r["contrast"]].format(low=r["low"], high=r["high"])
        est = r["estimate"]
        if est is None or (isinstance(est, float) and math.isnan(est)):
            lines.append(f"{who(r)}: {what}: no estimate ({r.get('caveat') or 'no matched draw'}).")
        elif not r["testable"]:
            lines.append(f"{who(r)}: {what}: {est:+.1f} points, too few to test ({r['n_draws']} draw).")
        else:
            lines.append(f"{who(r)}: {what}: {est:+.1f} points [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}], "
                         f"{r['n_draws']} draws, Holm p = {r['p_holm']:.3g} ({r['verdict']}).")
    return lines
