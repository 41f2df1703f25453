"""What a view of some runs shows by default, and how runs and configurations are named in it — so that pages, the
static report and the CLI agree.

    view_defaults(runs, varying)      -> {"task", "x", "color"}: split deceptive runs by condition, colour runs of two
                                         models by model (or two answer formats by answer format), set operations by operation,
                                         quantifiers by quantifier
    tasks_of(runs)                    the tasks among the runs, in a fixed order (views never pool two tasks)
    run_split(runs, by)               the run-level column a view of several runs adds to its groups (model, or run
                                         when two share a model) so it never pools runs silently; split_note says so
    run_labels(runs)                  run_id -> a readable, unique label (the run's name — an import's file name —
                                         else task · model, told apart by what differs)
    config_labels(points, factors)    one label per configuration from its factors ("intersection · |A|=4 · swapped")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from core.analysis.labels import label

TASK_ORDER = ("setops", "quantifiers")
FIRST_SPLIT = {"setops": ("condition", "operation"), "quantifiers": ("quantifier",)}


def tasks_of(runs: pd.DataFrame) -> list[str]:
    have = [t for t in runs.get("task", pd.Series(dtype=object)).dropna().unique()]
    return [t for t in TASK_ORDER if t in have] + sorted(t for t in have if t not in TASK_ORDER)


def view_defaults(runs: pd.DataFrame, varying: Sequence[str], factors: Sequence[str] = ()) -> dict:
    """The split (x) and colour a view of ``runs`` (rows of the run list) opens with. ``varying``: factors taking
    two or more values in these runs; ``factors``: every factor they have."""
    tasks = tasks_of(runs)
    task = tasks[0] if tasks else "setops"
    have = set(factors) | set(varying)
    first = FIRST_SPLIT.get(task, ())
    x = next((f for f in first if f in varying), None) or next((f for f in first if f in have), None)
    if x is None:
        x = next((f for f in varying if f not in ("model", "answer_format", "reasoning", "run_id", "task", "name")),
                 next(iter(factors), "operation"))
    color = None
    models = runs["model"].nunique() if "model" in runs else 0
    n_runs = runs["run_id"].nunique() if "run_id" in runs else models
    # colour by model only when every run is of its own model; runs sharing a model are told apart by run_split
    if models > 1 and x != "model" and models == n_runs:
        color = "model"
    elif "reasoning" in varying and x != "reasoning":   # reasoning effort: a model setting, like the model
        color = "reasoning"
    elif "answer_format" in varying and x != "answer_format":
        color = "answer_format"
    if "run_id" in runs and _pooled(runs.drop_duplicates("run_id"), [x, color]):
        color = None    # a default never pools runs: run_split tells them apart instead
    return {"task": task, "x": x, "color": color}


KEEP_RUNS_APART = ("run_id", "name")   # grouping by one of these already keeps every run on its own
RUN_LEVEL_GROUPS = ("model", "answer_format")   # run-level columns a user may group by


def _run_level(rows: pd.DataFrame, column: str) -> pd.Series:
    """A run-level column of run rows: their own, or the answer format read from ``params_json``."""
    if column in rows.columns:
        return rows[column].fillna("").astype(str)
    if column == "answer_format":
        return rows.apply(lambda r: _format(r) or "free", axis=1) if len(rows) else pd.Series(dtype=object)
    return pd.Series([""] * len(rows), index=rows.index, dtype=object)


def run_split(runs: pd.DataFrame, by: Sequence[str] = ()) -> str | None:
    """The column a view of ``runs`` (rows with run_id and model) must add to its groups ``by`` so that it never
    pools runs without saying so: None for one run, when ``by`` already keeps runs apart (run_id, name, or run-level
    columns — model, answer format — that differ between every two runs), or when the user grouped by a run-level
    column that puts two runs together (their choice; split_note names the pooled runs); else "model" when every
    run is of its own model, "run_id" when two share one (a split by model would still pool them)."""
    if runs is None or runs.empty or runs["run_id"].nunique() < 2:
        return None
    rows = runs.drop_duplicates("run_id")
    by = [c for c in dict.fromkeys(by) if c]
    if set(by) & set(KEEP_RUNS_APART) or any(c in RUN_LEVEL_GROUPS for c in by):
        return None
    return "model" if not rows["model"].fillna("").duplicated().any() else "run_id"


def run_rows(con, run_ids: Sequence[str] | None) -> pd.DataFrame:
    """The store's rows of these runs (every run for None): what run_split, split_note and run_labels read."""
    cols = "run_id, model, task, name, params_json, n_items, created_at"
    if run_ids is None:
        return con.execute(f"SELECT {cols} FROM runs ORDER BY run_id").df()
    ids = list(dict.fromkeys(run_ids))
    if not ids:
        return pd.DataFrame(columns=[c.strip() for c in cols.split(",")])
    return con.execute(f"SELECT {cols} FROM runs WHERE run_id IN ({', '.join('?' * len(ids))}) ORDER BY run_id",
                       ids).df()


def _pooled(rows: pd.DataFrame, by: Sequence[str]) -> list[list[str]]:
    """The groups of two or more runs that the run-level columns of ``by`` put together."""
    cols = [c for c in by if c in RUN_LEVEL_GROUPS]
    if not cols:
        return []
    key = pd.concat([_run_level(rows, c) for c in cols], axis=1).astype(str).agg(" · ".join, axis=1)
    return [g for _, g in rows["run_id"].groupby(key, sort=True) if len(g) > 1 for g in [g.tolist()]]


def split_note(runs: pd.DataFrame, by: Sequence[str], split: str | None, labels: Mapping[str, str] | None = None
               ) -> str | None:
    """What a view of ``runs`` grouped by ``by`` (plus ``split``, from run_split) does with its runs, in one
    sentence for a caption or a report: split by model, split by run (and why), or which runs it pools because the
    user grouped by a run-level column. None for one run."""
    if runs is None or runs.empty or runs["run_id"].nunique() < 2:
        return None
    rows = runs.drop_duplicates("run_id")
    names = dict(labels or run_labels(rows))
    n = len(rows)
    by = [c for c in dict.fromkeys(by) if c]
    if split == "model" or (split is None and "model" in by and not rows["model"].fillna("").duplicated().any()):
        return f"Split by model: the {n} runs are of {n} different models; no group pools two of them."
    if split == "run_id":
        shared = [(m, g.tolist()) for m, g in rows["run_id"].groupby(rows["model"].fillna(""), sort=True)
                  if len(g) > 1]
        which = "; ".join(f"{', '.join(names.get(r, r) for r in ids)} of {m}" for m, ids in shared)
        return f"Split by run, since runs share a model ({which}): no group pools two runs."
    if set(by) & set(KEEP_RUNS_APART):
        return f"Each of the {n} runs is a group of its own (grouped by run)."
    pooled = _pooled(rows, by)
    if pooled:
        which = "; ".join(", ".join(names.get(r, r) for r in ids) for ids in pooled)
        chosen = " and ".join(label(c).lower() for c in by if c in RUN_LEVEL_GROUPS)
        return f"Grouped by {chosen}: these runs are pooled in one group each — {which}."
    if any(c in RUN_LEVEL_GROUPS for c in by):
        return f"Each of the {n} runs is a group of its own (no two share the run-level columns grouped by)."
    return None   # only when run_split was not asked (split None without a run-level column in by)


def _auto_name(row: Mapping) -> bool:
    name = row.get("name") or ""
    return not name or name == f"{row.get('task')} · {row.get('model')}"


def run_labels(runs: pd.DataFrame) -> dict[str, str]:
    """run_id -> label: the run's own name (an imported file's name, ``--name``, the page's name) or "task · model",
    then — where two labels are the same — what tells them apart: answer format, number of items, start time, and as
    a last resort the run id."""
    if runs.empty:
        return {}
    rows = {r["run_id"]: r for r in runs.to_dict("records")}
    out = {rid: (f"{r.get('model')}" if _auto_name(r) else str(r.get("name"))) for rid, r in rows.items()}

    def clashes() -> dict[str, list[str]]:
        seen: dict[str, list[str]] = {}
        for rid, text in out.items():
            seen.setdefault(text, []).append(rid)
        return {t: ids for t, ids in seen.items() if len(ids) > 1}

    extras = (lambda r: "" if _auto_name(r) else str(r.get("model") or ""), _format, _items, _when,
              lambda r: r["run_id"])
    for extra in extras:
        groups = clashes()
        if not groups:
            break
        for ids in groups.values():
            parts = {rid: extra(rows[rid]) for rid in ids}
            if len(set(parts.values())) > 1 or extra is extras[-1]:   # only what tells them apart
                for rid in ids:
                    if parts[rid]:
                        out[rid] = f"{out[rid]} · {parts[rid]}"
    return out


def _format(r) -> str:
    import json

    text = r.get("params_json")
    try:
        fmt = (json.loads(text) if isinstance(text, str) else {}).get("answer_format") or "free"
    except (AttributeError, ValueError):
        fmt = "free"
    return fmt if fmt != "free" else ""


def _items(r) -> str:
    n = r.get("n_items")
    return f"{int(n)} items" if n is not None and not pd.isna(n) else ""


def _when(r) -> str:
    when = r.get("created_at")
    return pd.Timestamp(when).strftime("%m-%d %H:%M:%S") if when is not None and not pd.isna(when) else ""


def _missing(value) -> bool:
    """None, NaN, pd.NA, NaT — a missing level (``s=<NA>`` was printed for pd.NA)."""
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):   # a list or array: not a scalar level
        return False


def _level(factor: str, value) -> str:
    if _missing(value):
        return ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)      # a whole number from a column with gaps (float): "|A|=4", not "|A|=4.0"
    short = {"size_a": "|A|", "size_b": "|B|", "shots": "k", "length": "L", "decile": "decile",
             "swap_count": "s", "count_asked": "count", "total": "n"}
    text = str(value).replace("_", " ")
    return f"{short[factor]}={text}" if factor in short else text


def config_labels(points: pd.DataFrame, factors: Iterable[str], sizes_same: bool | None = None) -> pd.Series:
    """A label per row of ``points`` from the factor columns it has that vary across the rows (hashes never)."""
    cols = [f for f in factors if f in points.columns and points[f].astype(str).nunique() > 1]
    if not cols:
        cols = [f for f in factors if f in points.columns][:3]
    if points.empty or not cols:
        return pd.Series(["configuration"] * len(points), index=points.index, dtype=object)
    # |A| = |B| on every row (or the caller knows it, having left |B| out): one factor "|A|=|B|=4", not two
    same = sizes_equal(points) if sizes_same is None else sizes_same
    if same and "size_a" in cols and "size_b" in cols:
        cols = [c for c in cols if c != "size_b"]
    # column by column, each distinct value labelled once (200,000 configurations label in well under a second)
    parts = []
    for f in cols:
        codes, uniques = pd.factorize(points[f], use_na_sentinel=True)
        texts = [_level(f, v) for v in uniques]
        if same and f == "size_a":
            texts = [t.replace("|A|=", "|A|=|B|=") for t in texts]
        parts.append(np.array(texts + [""], dtype=object)[codes])   # code -1 (missing) picks the trailing ""
    out = [" · ".join(t for t in row if t) or "—" for row in zip(*parts)]
    return pd.Series(out, index=points.index, dtype=object)


def sizes_equal(frame: pd.DataFrame) -> bool:
    """True when the frame has |A| and |B| and they are equal on every row (then they are one factor, "|A| = |B|")."""
    if frame is None or frame.empty or not {"size_a", "size_b"} <= set(frame.columns):
        return False
    a, b = frame["size_a"], frame["size_b"]
    return bool(((a == b) | (a.isna() & b.isna())).all())


def readable_level(factor: str, value) -> str:
    """A factor level as tables should write it, the way the plots do: "symmetric difference", "not swapped",
    "none" for a missing level — never "None", "nan" or "<NA>"."""
    if _missing(value):
        return "none"
    names = READABLE_LEVELS.get(factor, {})
    if isinstance(value, str):
        return names.get(value, value.replace("_", " ") if factor in READABLE_LEVELS else value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def factor_title(factor: str | None) -> str:
    return "(none)" if factor is None else label(factor)


def for_display(df: pd.DataFrame, blank: str = "–") -> pd.DataFrame:
    """``df`` for a table on screen: missing values in text columns (None, NaN) shown as ``blank`` rather than a raw
    "None"; a factor level that *is* "none" (e.g. token length: any) is already text and stays. Operation and
    condition levels (in columns named for them, raw or by their label) are written as the plots write them."""
    if df is None or df.empty:
        return df
    out = df.copy()
    readable = {name: factor for factor in READABLE_LEVELS for name in (factor, label(factor))}
    for c in out.columns:
        if c in readable and not pd.api.types.is_numeric_dtype(out[c]):
            out[c] = out[c].map(lambda v, f=readable[c]: v if _missing(v) else readable_level(f, v))
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
            out[c] = out[c].map(lambda v: blank if _missing(v) else v)
    return out


def run_choice_labels(runs: pd.DataFrame) -> dict[str, str]:
    """run_id -> the label of a run in a picker: its name (``run_labels``), the model when the name does not say it,
    the number of items and the start time — never the run id (pages put that in a tooltip) and no status (the run
    list's table is the one place a status is shown, so a picker cannot disagree with it)."""
    names = run_labels(runs)
    out = {}
    for r in runs.to_dict("records"):
        rid = r["run_id"]
        model = str(r.get("model") or "")
        bits = [names.get(rid, rid)]
        if model and model not in bits[0]:
            bits.append(model)
        bits += [b for b in (_items(r), _when(r)) if b and b not in bits[0]]
        out[rid] = " · ".join(bits)
    return out


def file_stem(text, fallback: str = "run", limit: int = 60) -> str:
    """A file name stem from a run's name: letters, digits, '.', '_' and '-' kept, every other run of characters one
    '-', at most ``limit`` characters; ``fallback`` when nothing is left."""
    import re

    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text or "")).strip("-._")[:limit].strip("-._")
    return stem or fallback


READABLE_LEVELS = {"operation": {"symmetric_difference": "symmetric difference"},
                   "condition": {"not_swapped": "not swapped", "random": "random baseline"}}
LAST_COLUMNS = ("run_id", "config_id", "cache_key")


def id_columns_hidden(columns: Iterable[str]) -> dict[str, None]:
    """The column configuration (Streamlit's ``column_config``: None hides a column) that keeps the hashes
    (run_id, config_id, cache_key) of a table in its data — downloads, selections — but off the screen, where the
    run's name is shown instead."""
    return {c: None for c in columns if c in LAST_COLUMNS}


def readable_items(items: pd.DataFrame, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Item rows (a drill-down) for a person: the run's name first (column ``run``), the factors' levels as the
    plots write them ("symmetric difference", "not swapped"), and the hashes (run_id, config_id) last."""
    if items is None or items.empty:
        return items
    out = items.copy()
    if "run_id" in out.columns:
        out.insert(0, "run", out["run_id"].map(lambda r: (labels or {}).get(r, r)))
    for col, names in READABLE_LEVELS.items():
        if col in out.columns and not pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].map(lambda v, n=names: n.get(v, v.replace("_", " ") if isinstance(v, str) else v))
    order = [c for c in out.columns if c not in LAST_COLUMNS] + [c for c in LAST_COLUMNS if c in out.columns]
    return out[order]


def sizes_always_equal(con, run_ids: Sequence[str] | None) -> bool:
    """True when these runs' set-operation items all have |A| = |B| (then pages offer one factor, "|A| = |B|", and
    not two that always move together); read from the per-configuration counts where the store has them."""
    from core.analysis.queries import sizes_equal_in_runs

    if not run_ids:
        return False
    return sizes_equal_in_runs(con, run_ids)


def factor_label(factor: str, sizes_same: bool = False) -> str:
    """A factor's label; |A| reads "|A| = |B|" when the two sizes are one factor."""
    return "|A| = |B|" if sizes_same and factor == "size_a" else label(factor)


def merge_sizes(factors: Iterable[str], sizes_same: bool) -> list[str]:
    """The factors with |B| left out when it always equals |A|."""
    return [f for f in factors if not (sizes_same and f == "size_b")]


def selection_facts(con, run_ids: Sequence[str] | None) -> dict:
    """What a page showing some runs asks before its first figure, on one connection: ``sizes_same``
    (sizes_always_equal), ``factors`` and ``varying`` (factor_columns, without and with ``varying``), ``levels``
    ({factor: its levels} of every varying factor: the slice filters) and ``overview`` ({scoring: run_overview}).

    The same values as the separate calls; one connection instead of six matters because every connection to the
    store starts DuckDB cold (no connection stays open, core/store/db.py). The answer is kept in the store
    like the findings, so the next process reads it."""
    from core.analysis import memo

    # kept in the store once per state of the runs (core/analysis/memo.py): a page's first question on a cold
    # server is then one read (~0.25 s of queries at 10 million results before)
    got = memo.call(con, "selection_facts", _selection_facts_json, list(run_ids) if run_ids is not None else None,
                    persist=True)
    return {**got, "overview": {sc: memo.json_frame(f) for sc, f in got["overview"].items()}}


def _selection_facts_json(con, run_ids) -> dict:
    from core.analysis.memo import frame_json
    from core.analysis.queries import SCORINGS, factor_columns, factor_levels_of, run_overview

    sizes_same = sizes_always_equal(con, run_ids)
    varying = factor_columns(con, run_ids, varying=True)
    return {"sizes_same": sizes_same, "factors": factor_columns(con, run_ids), "varying": varying,
            "levels": factor_levels_of(con, run_ids, varying) if varying else {},
            "overview": {sc: frame_json(run_overview(con, run_ids, scoring=sc)) for sc in SCORINGS}}


def p_text(p) -> str:
    """A p-value as a page or report shows it: 3 significant digits, "–" when there is none, and "< 1e-300" when
    it underflowed to 0 (5 million paired items, or 100,000 configurations a side: "p = 0" would claim certainty)."""
    if p is None or p != p:
        return "–"
    return "< 1e-300" if p <= 0 else f"{p:.3g}"
