"""A static, self-contained HTML report of selected runs: one file, Plotly inline, no server — to mail or
attach to a paper.

    html_report(con, run_ids, *, title=None, filters=None, scoring="strict") -> str

What it holds, per task (set operations and quantifiers are never pooled): the runs (label, provenance — made here or
uploaded —, model, answer format,
parameters, items, accuracy); violins of per-configuration accuracy with their summary table, split and coloured the
way the Results page opens them (``views.view_defaults``); for set operations the paper's error-analysis table, for
quantifiers accuracy / precision / recall / F1 by quantifier; the robustness profile; and, with two or more runs, the
comparison — aligned violins and per-configuration summaries (description), and the first two runs tested B
against A at the independent draw (core/analysis/comparison.py, the Compare page's numbers).

Everything comes from the same functions the pages call; the only thing added here is HTML. Text is escaped; no
key is ever in the store, so none can be in a report.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pandas as pd

import core.store.provenance as provenance  # a submodule import: never waits on a core.store being initialised
from core.analysis import figures
from core.analysis.compare import Series, compare_runs, series_without_points
from core.analysis.comparison import compare_pair, headline_text, interval_text, p_words, series_line
from core.analysis.error_table import ERROR_TABLE_HELP, error_table, error_table_paper_layout
from core.analysis.labels import label
from core.analysis.queries import check_scoring, factor_columns, run_overview
from core.analysis.summaries import group_summary, robustness, robustness_caveat, violin_view
from core.analysis.views import run_labels, run_rows, run_split, split_note, tasks_of, view_defaults
from core.errors import UserError

TASK_TITLES = {"setops": "Set operations (SetLexSem)", "quantifiers": "Quantifiers (GQG)"}
COUNT_COLUMNS = {"items", "n", "configurations", "answered", "failed", "n_correct", "correct", "levels"}
STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;color:#222;
padding:0 1rem}
h1{font-size:1.8rem}h2{margin-top:2.4rem;border-bottom:2px solid #ddd;padding-bottom:.3rem}h3{margin-top:1.6rem}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0 1rem}th,td{border:1px solid #ddd;padding:.25rem .5rem;
text-align:right;vertical-align:top}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:.9rem}.caveat{background:#fff6e0;border-left:4px solid #e0a800;padding:.4rem .7rem;
margin:.6rem 0}.meta{color:#666;font-size:.85rem}
"""


def _table(df: pd.DataFrame, index: bool = False, digits: int = 1) -> str:
    """A DataFrame as an escaped HTML table: NULLs as "–", floats rounded."""
    if df is None or df.empty:
        return '<p class="note">(nothing in this selection)</p>'
    shown = df.copy()
    for c in shown.columns:
        whole = pd.api.types.is_float_dtype(shown[c]) and shown[c].dropna().map(float.is_integer).all()
        if whole and str(c).lower() in COUNT_COLUMNS:
            shown[c] = shown[c].map(lambda v: "–" if pd.isna(v) else f"{int(v)}")
        elif pd.api.types.is_float_dtype(shown[c]):
            shown[c] = shown[c].map(lambda v: "–" if v is None or (isinstance(v, float) and math.isnan(v))
                                    else f"{v:.{digits}f}")
        else:
            shown[c] = shown[c].map(lambda v: "–" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
    return shown.to_html(index=index, escape=True, border=0)


class _Figures:
    """Plotly figures as HTML fragments: plotly.js inline once, in the first figure (no CDN, no server)."""

    def __init__(self):
        self.first = True

    def __call__(self, fig) -> str:
        out = fig.to_html(full_html=False, include_plotlyjs=self.first, config={"displaylogo": False})
        self.first = False
        return out


def _runs_table(con, run_ids: Sequence[str], labels: Mapping[str, str], scoring: str = "strict"
                ) -> pd.DataFrame:
    ph = ", ".join("?" * len(run_ids))
    runs = con.execute(f"SELECT run_id, task, model, params_json, n_items, status, created_at, source FROM runs "
                       f"WHERE run_id IN ({ph})", list(run_ids)).df()
    ov = run_overview(con, run_ids, scoring=scoring)
    out = runs.merge(ov[["run_id", "answered", "failed", "n_correct", "accuracy", "configs"]], on="run_id", how="left")

    def params(text):
        try:
            p = json.loads(text) if isinstance(text, str) else {}
        except ValueError:
            p = {}
        if not isinstance(p, dict) or not p:
            return "–", "–"
        fmt = p.get("answer_format") or "free"
        shown = {k: v for k, v in p.items() if v is not None and k != "answer_format"}
        return fmt, ", ".join(f"{k}={v}" for k, v in shown.items())

    out["answer format"], out["parameters"] = zip(*out["params_json"].map(params)) if len(out) else ((), ())
    out.insert(0, "run", out["run_id"].map(labels))
    out["provenance"] = out["source"].map(provenance.of_source)   # made here, or a file's claims
    out["created"] = out["created_at"].map(lambda t: "" if pd.isna(t) else pd.Timestamp(t).strftime("%Y-%m-%d %H:%M"))
    return out[["run", "run_id", "provenance", "task", "model", "answer format", "n_items", "answered", "failed",
                "accuracy",
                "configs", "status", "created", "parameters"]].rename(columns={
                    "n_items": "items", "accuracy": "accuracy %", "configs": "configurations"})


def _violins(con, run_ids, x, color, filters, fig, scoring, labels) -> str:
    rows = run_rows(con, run_ids)
    panel = run_split(rows, [x, color])    # several models / runs of one model: a panel each, never one violin
    names = {r: labels.get(r, r) for r in run_ids} if panel == "run_id" else None
    points, summary = violin_view(con, run_ids, x=x, color=color, filters=filters, scoring=scoring, panel=panel)
    how = f"split by {html.escape(label(x))}" + (f", coloured by {html.escape(label(color))}" if color else "")
    note = split_note(rows, [x, color], panel, labels)
    parts = [fig(figures.violin(points, x, color, summary, panel=panel, panel_names=names,
                                height=420 if panel else 520)),
             f'<p class="note">Each point is one configuration\'s accuracy over its samples; {how}.'
             + (f" {html.escape(note)}" + (" One panel each." if panel else "") if note else "") + "</p>"]
    summ = summary.drop(columns=["shape", "min_items"])
    if "run_id" in summ.columns:
        summ["run_id"] = summ["run_id"].map(lambda r: labels.get(r, r))
    summ = summ.rename(columns={x: label(x), **({color: label(color)} if color else {}), "mean": "mean %",
                                "N": "configurations", "run_id": "run"})
    parts.append(_table(summ))
    return "\n".join(parts)


def _robustness(con, run_ids, filters, fig, scoring, labels) -> str:
    rob, per_model = robustness(con, run_ids, filters=filters, scoring=scoring)
    pooled = split_note(run_rows(con, run_ids), ["model"], None, labels)   # per model: names the runs it pools
    parts = ["<h3>Robustness</h3>", f'<p class="note">{html.escape(pooled)}</p>' if pooled else "",
             ('<p class="note">Robustness score = standard deviation of per-configuration accuracy (lower = more '
              'consistent); spread = highest minus lowest mean accuracy across a factor\'s levels; η² = share of the '
              'variance of per-configuration accuracy the factor explains (one-way ANOVA).</p>'),
             _table(per_model.rename(columns={"configs": "configurations", "mean": "mean %", "score": "score (std)"}),
                    digits=2)]
    caveat = robustness_caveat(rob)
    if caveat:
        parts.append(f'<p class="caveat">{html.escape(caveat)}</p>')
    if not rob.empty:
        if caveat is None:
            parts.append(fig(figures.robustness_bars(rob)))
        parts.append(_table(rob.assign(factor=rob["factor"].map(label)), digits=3))
    return "\n".join(parts)


def _setops_errors(con, run_ids, x, filters, scoring, labels) -> str:
    by = [c for c in dict.fromkeys(["members", x]) if c]
    by = [c for c in by if c in factor_columns(con, run_ids)]
    # several runs: error_table splits them by model, or by run when two share a model (views.run_split)
    table = error_table(con, run_ids, by=by, filters=filters, scoring=scoring)
    if table.empty:
        return '<h3>Error analysis</h3><p class="note">No answered set-operation items.</p>'
    layout = error_table_paper_layout(table, by, run_names=labels)
    rows = run_rows(con, run_ids)
    note = split_note(rows, by, run_split(rows, by), labels)
    return ("<h3>Error analysis (the paper's table)</h3>"
            + (f'<p class="note">{html.escape(note)}</p>' if note else "")
            + _table(layout.reset_index().rename(columns={"index": ""}), digits=2)
            + f'<p class="note">{html.escape(ERROR_TABLE_HELP)}</p>')


def _quantifier_metrics(con, run_ids, fig, labels) -> str:
    from core.analysis import quantifier_figures as QF
    from core.tasks.quantifiers import metrics as QM

    rows = run_rows(con, run_ids)
    split = run_split(rows, ())          # several runs: per model, or per run when two share a model
    by = [split] if split else []
    overall = QM.quantifier_metrics(con, run_ids, by or None)
    per_q = QM.quantifier_metrics(con, run_ids, [*by, "quantifier"])
    if split == "run_id":                # a run's name, never its hash
        overall, per_q = (f.assign(run_id=f["run_id"].map(lambda r: labels.get(r, r))) for f in (overall, per_q))
    note = split_note(rows, (), split, labels)
    return ("<h3>Accuracy, precision, recall, F1</h3>" + (f'<p class="note">{html.escape(note)}</p>' if note else "")
            + _table(overall, digits=3)
            + fig(QF.fig_metrics_by(per_q, "quantifier", by[0] if by else None)) + _table(per_q, digits=3)
            + '<p class="note">Unparseable answers are counted apart (“unparsed”) and also scored the GQG way, as '
              '“false” (accuracy (GQG)).</p>')


def _comparison(con, run_ids, labels, x, filters, fig, scoring) -> str:
    series = [Series(labels[r], (r,)) for r in run_ids]
    points, shared = compare_runs(con, series, x=x, align=True, filters=filters, scoring=scoring, factors=False)
    parts = ["<h3>Comparison</h3>"]
    if shared:
        parts.append(f'<p class="note">Aligned on the factors all runs share: '
                     f'{html.escape(", ".join(label(f) for f in shared))}.</p>')
    if points.empty:
        parts.append('<p class="caveat">No combination of the shared factors is in every run: nothing to set side '
                     'by side.</p>')
    else:
        missing = series_without_points(points, series)
        if missing:
            parts.append(f'<p class="caveat">No answered items for {html.escape(", ".join(missing))}.</p>')
        parts.append(fig(figures.violin(points, x, "series")))
        parts.append('<p class="note">Description, not a test: per-configuration accuracy of each run.</p>')
        parts.append(_table(group_summary(points, ["series", x]).rename(columns={"mean": "mean %",
                                                                                "N": "configurations"})))
    parts.append(_tested(con, run_ids[0], run_ids[1], labels, filters, scoring))
    return "\n".join(parts)


def _tested(con, run_a, run_b, labels, filters, scoring) -> str:
    """The first two runs, B against A at the independent draw (core/analysis/comparison.py: the numbers of the
    Compare page and of ``report compare``)."""
    res = compare_pair(con, [run_a, run_b], scoring=scoring, filters=filters)
    a_name, b_name = labels[run_a], labels[run_b]
    h = res["headline"]
    esc = html.escape
    parts = [f"<h4>{esc(b_name)} (B) against {esc(a_name)} (A)</h4>"]
    for side, s, name in (("A", res["a"], a_name), ("B", res["b"], b_name)):
        if s["contradicted"]:
            parts.append(f'<p class="caveat">{side} is a contradicted claim: {esc(series_line(s, name))}.</p>')
    parts.append(f"<p><b>{esc(headline_text(h, a_name, b_name))}</b></p>")
    if h.get("estimate") is None:
        return "\n".join(parts)
    rows = [{"design": h["design"], "B − A (points)": h["estimate"], "95 % interval": interval_text(h),
             "p": p_words(h), "test": h["test"], "n": h["n"], "unit": h["unit"]}]
    parts.append(_table(pd.DataFrame(rows), digits=2))
    if res["factors"]:
        parts.append(f'<p class="note">Per level: the same test within each level; '
                     f'{esc(res["factors"][0]["family"])}.</p>')
        parts.append(_table(pd.DataFrame([{
            "factor": r["factor"], "level": r["level"], "B − A (points)": r["estimate"],
            "95 % interval": interval_text(r), "p": p_words(r), "p (Holm)": p_words(r, "p_holm"),
            "n": r["n"], "design": r["design"]} for r in res["factors"]]), digits=2))
    ag = res.get("agreement") or {}
    if ag.get("items"):
        parts.append(f'<p class="note">Description, not a test: {ag["items"]} items both runs answered, agreement '
                     f'{100 * ag["agreement"]:.1f} %, only {esc(a_name)} right {ag["only_a"]}, only '
                     f'{esc(b_name)} right {ag["only_b"]}.</p>')
    return "\n".join(parts)


def html_report(con, run_ids: Sequence[str], *, title: str | None = None,
                filters: Mapping[str, Sequence] | None = None, scoring: str = "strict") -> str:
    """The report of ``run_ids`` (see the module docstring) as one HTML document, scored ``scoring`` (strict —
    the reference's rule — by default, as every other view)."""
    scoring = check_scoring(scoring)
    run_ids = list(dict.fromkeys(run_ids))
    if not run_ids:
        raise UserError("choose at least one run for the report")
    ph = ", ".join("?" * len(run_ids))
    runs = con.execute(f"SELECT * FROM runs WHERE run_id IN ({ph})", run_ids).df()
    unknown = [r for r in run_ids if r not in set(runs["run_id"])]
    if unknown:
        raise UserError(f"no run {unknown[0]!r} in the database")
    runs = runs.set_index("run_id").loc[run_ids].reset_index()
    labels = run_labels(runs)
    fig = _Figures()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = title or ("Results: " + ", ".join(labels[r] for r in run_ids[:3]) + (" …" if len(run_ids) > 3 else ""))
    body = [f"<h1>{html.escape(title)}</h1>",
            f'<p class="meta">SetLexSem Studio report · {when} · {len(run_ids)} run(s)'
            + (f" · slice: {html.escape(json.dumps(filters, default=str))}" if filters else "")
            + f" · {html.escape(scoring)} scoring" + "</p>",
            "<h2>Runs</h2>", _table(_runs_table(con, run_ids, labels, scoring))]
    for task in tasks_of(runs):
        ids = [r for r in run_ids if runs.set_index("run_id").loc[r, "task"] == task]
        factors = [f for f in factor_columns(con, ids) if f not in ("task", "name")]
        varying = [f for f in factor_columns(con, ids, varying=True) if f in factors]
        view = view_defaults(runs[runs["run_id"].isin(ids)], varying, factors)
        x, color = view["x"], view["color"]
        body.append(f"<h2>{html.escape(TASK_TITLES.get(task, task))}</h2>")
        body.append("<h3>Accuracy per configuration</h3>"
                    + _violins(con, ids, x, color, filters, fig, scoring, labels))
        if task == "setops":
            body.append(_setops_errors(con, ids, x, filters, scoring, labels))
        elif task == "quantifiers":
            body.append(_quantifier_metrics(con, ids, fig, labels))
        body.append(_robustness(con, ids, filters, fig, scoring, labels))
        if len(ids) >= 2:
            body.append(_comparison(con, ids, labels, x, filters, fig, scoring))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")

