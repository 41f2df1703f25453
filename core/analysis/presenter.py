"""What a presenter shows on the Deceptive sets page: accuracy per condition with N and a 95 % Wilson
interval, the paper's Claude Haiku figures beside it, and the replay of a stored run item by item.

    condition_stats(con, run_id, scoring, upto=None) -> DataFrame   condition, n, correct, followed, accuracy, lo, hi
    replay_order(con, run_id) -> list[int]      the run's answered items in the order they were stored
    paper_conditions() -> DataFrame             the paper's per-condition means (Claude Haiku, Table 8)
    bars(stats, paper, title) -> plotly Figure  big bars with error bars, N on each, the paper's bars beside
    replay_position(started_at, now, pace, n) -> int   how many items a replay shows at ``now``

A replay only re-reads stored answers — it never calls a model — and is always labelled as a replay (the page says
whose run it is, when it was made and by which model).
"""

from __future__ import annotations

import json
import math
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from core.analysis.sql import VIEW, check_scoring, relation
from core.analysis.stats import MIN_UNITS, wilson_interval
from core.tasks.setops.scoring import DID_NOT_FOLLOW_SQL, member_list as as_list  # as_list: an item's set as a list

CONDITIONS = ("not_swapped", "swapped", "random")
LABELS = {"not_swapped": "Not swapped", "swapped": "Swapped", "random": "Random baseline"}


def replay_order(con, run_id: str) -> list[int]:
    """Answered items of ``run_id`` in the order they were stored (ties by index): the order a replay shows."""
    rows = con.execute('SELECT idx FROM results WHERE run_id = ? AND error IS NULL ORDER BY "at" NULLS LAST, idx',
                       [run_id]).fetchall()
    return [int(r[0]) for r in rows]


def condition_stats(con, run_id: str, scoring: str = "strict", upto: Sequence[int] | None = None,
                    view: str = VIEW) -> pd.DataFrame:
    """Per deceptive condition: items answered, correct, followed the answer format, accuracy % and its 95 % Wilson
    interval. ``upto``: only these items (a replay's first k)."""
    scoring = check_scoring(scoring)
    params: list = [run_id]
    only = ""
    if upto is not None:
        only = " AND idx IN (SELECT unnest(?::BIGINT[]))"
        params.append([int(i) for i in upto])
    df = con.execute(
        f"SELECT condition, count(*) AS n, sum(CAST(correct AS INTEGER)) AS correct, "
        f"count(*) FILTER (WHERE NOT ({DID_NOT_FOLLOW_SQL})) AS followed FROM {relation(con, view, scoring)} "
        f"WHERE run_id = ? AND correct IS NOT NULL AND condition IS NOT NULL{only} GROUP BY condition",
        params).df()
    rows = []
    for cond in CONDITIONS:
        r = df[df["condition"] == cond]
        n = int(r["n"].iloc[0]) if len(r) else 0
        k = int(r["correct"].iloc[0] or 0) if len(r) else 0
        lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
        rows.append({"condition": cond, "label": LABELS[cond], "n": n, "correct": k,
                     "followed": int(r["followed"].iloc[0] or 0) if len(r) else 0,
                     "accuracy": 100.0 * k / n if n else float("nan"), "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def replayable_runs(con) -> pd.DataFrame:
    """Stored runs with deceptive items (any source: live, provider batch, imported file, another machine's), newest
    first, with their answered items (``aggregated.source``: the store's counts where they answer, else the rows)."""
    from core.analysis import aggregated

    src = aggregated.source(con, None, ["run_id", "condition"], counts=("n",))
    return con.execute(
        "SELECT r.run_id, r.name, r.model, r.created_at, r.source, "
        f"CAST(sum(src.n) AS BIGINT) AS answered FROM runs r JOIN {src.sql} "
        "ON src.run_id = r.run_id WHERE src.condition IS NOT NULL GROUP BY ALL "
        "HAVING sum(src.n) > 0 ORDER BY r.created_at DESC NULLS LAST", src.params).df()


def paper_conditions(operations: Sequence[str] | None = None) -> pd.DataFrame:
    """The paper's Claude Haiku means per condition, like with like: of the one operation a run asks (Table 9 —
    intersections: 91.1 % not swapped, 50.1 % swapped, 86.7 % random), else over all operations (Table 8). The
    frame's ``operation`` column says which (absent: all operations)."""
    from core.analysis.reference import reference_table

    ops = list(dict.fromkeys(operations or ()))
    if len(ops) == 1:
        df = reference_table("setlexsem_deceptive_by_operation")
        df = df[df["operation"] == ops[0]].reset_index(drop=True)
        if len(df):
            return df
    return reference_table("setlexsem_deceptive")


def paper_words(paper: pd.DataFrame) -> str:
    """"paper, Claude Haiku, intersections: 91 % not swapped → 50 % swapped" from ``paper_conditions``."""
    if paper is None or paper.empty:
        return ""
    m = paper.set_index("condition")["mean"]
    what = (f"{str(paper['operation'].iloc[0]).replace('_', ' ')}s" if "operation" in paper.columns
            else "all four operations")
    if "not_swapped" not in m or "swapped" not in m:
        return ""
    return f"paper, Claude Haiku, {what}: {m['not_swapped']:.0f} % as sampled → {m['swapped']:.0f} % swapped"


def bars(stats: pd.DataFrame, paper: pd.DataFrame | None = None, title: str | None = None,
         height: int = 460, conditions: Sequence[str] = CONDITIONS, recorded: dict | None = None) -> go.Figure:
    """Accuracy per condition (of ``conditions``) as big bars with their 95 % interval drawn and N written on each;
    ``recorded`` (a ``recording_summary``) as a hatched bar beside each, labelled a recording; the paper's Claude
    Haiku means (± std over its configurations) as a grey bar beside each."""
    fig = go.Figure()
    stats = stats[stats["condition"].isin(list(conditions))]
    have = stats[stats["n"] > 0]
    colors = {"not_swapped": "#2e86de", "swapped": "#e74c3c", "random": "#7f8c8d"}
    text = [f"{a:.0f} %<br>N = {n}" if n else "no answers yet" for a, n in zip(stats["accuracy"], stats["n"])]
    fig.add_trace(go.Bar(
        x=stats["label"], y=stats["accuracy"].fillna(0), name="live: this run (95 % Wilson interval)",
        marker_color=[colors[c] for c in stats["condition"]], text=text, textposition="inside",
        insidetextanchor="start", textfont={"size": 20, "color": "white"},
        error_y={"type": "data", "symmetric": False, "array": (stats["hi"] - stats["accuracy"]).fillna(0),
                 "arrayminus": (stats["accuracy"] - stats["lo"]).fillna(0), "thickness": 3, "width": 14,
                 "color": "#222", "visible": bool(len(have))}))
    if recorded is not None and recorded.get("tally", {}).get("n"):
        t = recorded["tally"]
        value = {"not_swapped": t["sampled"], "swapped": t["swapped"]}
        shown = [c for c in conditions if c in value]
        fig.add_trace(go.Bar(x=[LABELS[c] for c in shown], y=[value[c] for c in shown],
                             name=f"recording, not live ({t['n']} pairs)", marker_color="rgba(255,255,255,0)",
                             marker_line_color=[colors[c] for c in shown], marker_line_width=3,
                             marker_pattern={"shape": "/", "fgcolor": [colors[c] for c in shown]},
                             text=[f"{value[c]:.0f} %" for c in shown], textposition="outside", textfont={"size": 16}))
    if paper is not None and not paper.empty:
        p = paper.set_index("condition").reindex(list(conditions))
        op = (f", {str(paper['operation'].iloc[0]).replace('_', ' ')}s" if "operation" in paper.columns
              else ", all operations")
        fig.add_trace(go.Bar(x=[LABELS[c] for c in conditions], y=p["mean"], name=f"paper: Claude Haiku{op} (± std)",
                             marker_color="rgba(0,0,0,0.18)", marker_line_color="#555", marker_line_width=1.5,
                             text=[f"{m:.0f} %" if m == m else "" for m in p["mean"]], textposition="inside",
                             textfont={"size": 16},
                             error_y={"type": "data", "array": p["std"].fillna(0), "color": "#999"}))
    fig.update_layout(barmode="group", height=height, template="plotly_white", title=title,
                      font={"size": 18}, legend={"orientation": "h", "y": 1.12, "x": 0},
                      margin={"l": 60, "r": 20, "t": 90 if title else 60, "b": 40})
    fig.update_yaxes(range=[0, 118], title_text="accuracy (%)", tickvals=[0, 25, 50, 75, 100])
    return fig


def replay_position(started_at: float, now: float, pace: float, n: int) -> int:
    """Items shown ``now`` by a replay started at ``started_at`` showing ``pace`` items per second (0 … n)."""
    if n <= 0 or pace <= 0:
        return 0
    return max(0, min(n, int(math.floor((now - started_at) * pace)) + 1))


# ------------------------------------------------------------------------------------------------- the pairs
# A deceptive draw is shown twice: as sampled (not_swapped) and with half its members exchanged (swapped). The two
# answers to one draw are the unit of the paired test; everything below works on that unit.
PAIR = ("not_swapped", "swapped")
PAIR_KEY = ("operation", "sample", "size_a", "size_b", "phrasing", "approach", "shots")
PAIR_COLUMNS = ("idx", "condition", *PAIR_KEY, "set_a", "set_b", "truth", "member_hypernyms", "hypernym_a",
                "hypernym_b", "response", "parsed", "correct", "followed")


def pair_rows(con, run_id: str, scoring: str = "strict", view: str = VIEW) -> pd.DataFrame:
    """The answered items of ``run_id`` that belong to a pair (as sampled / swapped), with the verdict columns of
    ``scoring`` and the time each answer was stored (``at``), oldest first."""
    from core.analysis.sql import scored_expr, view_columns

    have = view_columns(con, view)
    cols = []
    for c in PAIR_COLUMNS:
        if c in ("parsed", "correct", "followed"):
            cols.append(f"{scored_expr(con, c, scoring, view)} AS {c}")
        else:
            cols.append(f'"{c}"' if c in have else f'NULL AS "{c}"')
    sql = (f"SELECT {', '.join(cols)}, stored_at AS at FROM (SELECT v.*, r.at AS stored_at FROM {view} v "
           "JOIN results r ON r.run_id = v.run_id AND r.idx = v.idx WHERE v.run_id = ? AND v.correct IS NOT NULL "
           "AND v.condition IN ('not_swapped', 'swapped')) ORDER BY stored_at NULLS LAST, idx")
    return con.execute(sql, [run_id]).df()


def pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per draw: the columns of its as-sampled answer prefixed ``ns_``, of its swapped answer ``sw_``, the
    draw's key (PAIR_KEY), ``complete`` (both answered) and ``order`` (when its first answer came), earliest first.
    ``rows``: ``pair_rows`` or a result file's rows (the same columns; ``correct`` the verdict to use)."""
    if rows.empty:
        return pd.DataFrame(columns=[*PAIR_KEY, "complete", "order"])
    df = rows.reset_index(drop=True).copy()
    df["order"] = range(len(df))
    key = [k for k in PAIR_KEY if k in df.columns]
    df[key] = df[key].fillna(-1)
    out = None
    for cond, tag in (("not_swapped", "ns_"), ("swapped", "sw_")):
        part = df[df["condition"] == cond].drop_duplicates(key)
        part = part.rename(columns={c: tag + c for c in part.columns if c not in key})
        out = part if out is None else out.merge(part, on=key, how="outer")
    out["order"] = out[["ns_order", "sw_order"]].min(axis=1)
    out["complete"] = out["ns_order"].notna() & out["sw_order"].notna()
    return out.sort_values("order").reset_index(drop=True)


def paired_test(both_right: int, only_sampled: int, only_swapped: int, both_wrong: int,
                confidence: float = 0.95) -> dict:
    """The swap effect on paired 0/1 verdicts: accuracy swapped − as sampled in points, its exact conditional
    interval and the exact McNemar p (``stats.paired_proportion_difference``, a = as sampled, b = swapped)."""
    from core.analysis.stats import paired_proportion_difference

    r = paired_proportion_difference(both_right, only_sampled, only_swapped, both_wrong, confidence)
    out = {"n": r["n"], "both_right": both_right, "only_sampled": only_sampled, "only_swapped": only_swapped,
           "both_wrong": both_wrong, "effect": r["difference"], "lo": r["ci_low"], "hi": r["ci_high"],
           "p_value": r["p"]}
    if r["n"]:
        out["sampled"], out["swapped"] = r["a"], r["b"]
    return out


def paired_tally(pair_table: pd.DataFrame) -> dict:
    """``paired_test`` over the complete pairs of ``pairs(...)``, plus the replies off the answer format."""
    if pair_table.empty or "ns_correct" not in pair_table:
        return {**paired_test(0, 0, 0, 0), "off_format": 0, "answers": 0}
    done = pair_table[pair_table["complete"]]
    ns, sw = done["ns_correct"].astype(bool), done["sw_correct"].astype(bool)
    out = paired_test(int((ns & sw).sum()), int((ns & ~sw).sum()), int((~ns & sw).sum()), int((~ns & ~sw).sum()))
    followed = pd.concat([pair_table["ns_followed"], pair_table["sw_followed"]]).dropna()
    out["answers"] = int(len(followed))
    out["off_format"] = int((~followed.astype(bool)).sum())
    return out


MIN_PAIRS = MIN_UNITS   # the statistics engine's one rule: no interval or p-value from fewer complete pairs


def testable(t: dict) -> bool:
    """Whether a tally may show an interval and a p-value: at least MIN_PAIRS complete pairs and a finite p from the
    statistics engine (which answers "too few to test" with NaN, stats.too_few)."""
    p = t.get("p_value", math.nan)
    return int(t.get("n") or 0) >= MIN_PAIRS and p is not None and not math.isnan(p)


def effect_words(t: dict) -> str:
    """"−X points [lo, hi]" for a tally, or why there is none."""
    if not t.get("n"):
        return "no complete pair yet"
    if not testable(t):
        return "too few pairs to test"
    if math.isnan(t["lo"]):
        return f"{t['effect']:+.0f} points (no discordant pair yet)".replace("-", "−")
    return f"{t['effect']:+.1f} points [{t['lo']:+.1f}, {t['hi']:+.1f}]".replace("-", "−")


def direction_words(t: dict) -> str:
    """Which way a tally points, in words (the sign of swapped − as sampled)."""
    if not t.get("n") or not testable(t):
        return ""
    e = t["effect"]
    return ("worse when swapped" if e < 0 else "better when swapped" if e > 0 else "no difference")


PAIR_VERDICTS = {  # (right as sampled, right swapped) -> what the pair shows
    (True, False): "right as sampled, wrong when swapped",
    (False, True): "wrong as sampled, right when swapped",
    (True, True): "both right",
    (False, False): "both wrong",
}


def failures(pair_table: pd.DataFrame) -> pd.DataFrame:
    """The pairs with a wrong answer (either half, complete or not), newest first (by their latest answer), each with
    ``verdict`` (PAIR_VERDICTS' words, or "wrong as sampled" / "wrong when swapped" while the other half is
    pending). Every failure is kept."""
    if pair_table.empty or "ns_correct" not in pair_table:
        return pair_table.iloc[0:0].assign(verdict=pd.Series(dtype=str), latest=pd.Series(dtype=float))
    ns, sw = pair_table["ns_correct"], pair_table["sw_correct"]
    wrong = (ns.notna() & ~ns.fillna(True).astype(bool)) | (sw.notna() & ~sw.fillna(True).astype(bool))
    out = pair_table[wrong].copy()

    def verdict(r) -> str:
        if r["complete"]:
            return PAIR_VERDICTS[(bool(r["ns_correct"]), bool(r["sw_correct"]))]
        return "wrong as sampled" if pd.notna(r["ns_correct"]) else "wrong when swapped"

    out["verdict"] = [verdict(r) for _, r in out.iterrows()] if len(out) else []
    out["latest"] = out[["ns_order", "sw_order"]].max(axis=1)
    return out.sort_values("latest", ascending=False).reset_index(drop=True)


def answer_provenance(con, run_id: str, since=None) -> dict:
    """Where a run's answers come from: ``answered``; ``read_back`` — read from the store (stored before ``since``, a
    naive UTC datetime such as the click that opened the run, or answered from the call cache); ``now`` — answered
    by the model since then; ``first``, ``last`` — when the read-back answers were stored (None without any);
    ``made_first``, ``made_last`` — when any of its answers was stored."""
    old = "coalesce(cached, false)" if since is None else '(coalesce(cached, false) OR "at" < ?)'
    params = [] if since is None else [since, since, since]
    row = con.execute(
        f'SELECT count(*), count(*) FILTER (WHERE {old}), min("at") FILTER (WHERE {old}), '
        f'max("at") FILTER (WHERE {old}), min("at"), max("at") FROM results WHERE run_id = ? AND error IS NULL',
        [*params, run_id]).fetchone()
    answered, read_back = int(row[0] or 0), int(row[1] or 0)
    return {"answered": answered, "read_back": read_back, "now": answered - read_back, "first": row[2],
            "last": row[3], "made_first": row[4], "made_last": row[5]}


def excludes_zero(t: dict) -> bool:
    """Whether the tally's interval lies wholly on one side of 0."""
    return not math.isnan(t.get("lo", math.nan)) and (t["lo"] > 0 or t["hi"] < 0)


# -------------------------------------------------------------------------------------------- one answer's diff
def hypernym_name(synset) -> str:
    """A hypernym's readable name: its synset's lemma ("tree.n.01" → "tree")."""
    return str(synset).split(".")[0].replace("_", " ") if synset else "?"


def as_dict(v) -> dict:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return {}
    return dict(v) if isinstance(v, dict) else {}


def answer_diff(item) -> dict:
    """One answer against the truth: ``answered`` (None when the reply did not follow the format), ``missing`` (in
    the truth, not answered), ``extra`` (answered, not in the truth) as (member, where) with where "A", "B" or
    "made up" (in neither set). Members compare case-insensitively, as the scorers do."""
    parsed = item.get("parsed")
    answered = None if parsed is None or (isinstance(parsed, float) and math.isnan(parsed)) else as_list(parsed)
    truth = [str(m) for m in as_list(item.get("truth"))]
    a = {str(m).lower() for m in as_list(item.get("set_a"))}
    b = {str(m).lower() for m in as_list(item.get("set_b"))}
    if answered is None:
        return {"answered": None, "missing": truth, "extra": []}
    said = [str(m) for m in answered]
    low = {m.lower() for m in said}
    missing = [m for m in truth if m.lower() not in low]
    want = {m.lower() for m in truth}
    extra = [(m, "A" if m.lower() in a else "B" if m.lower() in b else "made up") for m in said
             if m.lower() not in want]
    return {"answered": said, "missing": missing, "extra": extra}


def swapped_members(item) -> list[tuple[str, str, str, str]]:
    """The members sitting in the other hypernym's set: (member, its hypernym, "A"/"B", that set's hypernym) —
    "oak — a tree — now in the set of animals". Empty for an as-sampled draw."""
    hyp = as_dict(item.get("member_hypernyms"))
    ha, hb = item.get("hypernym_a"), item.get("hypernym_b")
    out = []
    for side, members, own in (("A", item.get("set_a"), ha), ("B", item.get("set_b"), hb)):
        for m in as_list(members):
            h = hyp.get(m)
            if h is not None and own is not None and h != own:
                out.append((str(m), hypernym_name(h), side, hypernym_name(own)))
    return out


# ------------------------------------------------------------------------------------------------- the recording
def read_result_file(path) -> pd.DataFrame:
    """A result file as ``python -m core export`` writes it (.jsonl, .parquet or .csv) → its rows."""
    path = str(path)
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    if path.endswith(".csv"):
        return pd.read_csv(path)
    return pd.read_json(path, lines=True)


def file_pair_rows(df: pd.DataFrame, scoring: str = "strict") -> pd.DataFrame:
    """A result file's rows in ``pair_rows`` form: the verdict columns of ``scoring``, file order as arrival order."""
    scoring = check_scoring(scoring)
    df = df[df["condition"].isin(PAIR)].copy()
    for c in ("parsed", "correct", "followed"):
        if scoring == "strict" and f"{c}_strict" in df.columns:
            df[c] = df[f"{c}_strict"]
    df = df[df["correct"].notna()]
    return df[[c for c in PAIR_COLUMNS if c in df.columns]]


def recording_path():
    """The shipped recording of the demo's grid (a result file of ``python -m core export``)."""
    from core.files import PROJECT_ROOT

    return PROJECT_ROOT / "data" / "demo" / "recording.jsonl"


def recording_summary(path, scoring: str = "strict") -> dict:
    """The recording's paired tally (``paired_tally``) with what its sidecar ``recording.json`` says about it
    (model, machine, date, grid): what the file claims about where it was made, shown as such."""
    from pathlib import Path

    rows = file_pair_rows(read_result_file(path), scoring)
    meta_path = Path(path).with_suffix(".json")
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    models = sorted(set(read_result_file(path)["model"].dropna())) if len(rows) else []
    table = pairs(rows)
    return {**meta, "model": meta.get("model") or ", ".join(models) or "?", "tally": paired_tally(table),
            "failed_samples": swap_failures(table)}


def swap_failures(pair_table: pd.DataFrame) -> list[int]:
    """The draws (sample indices) of the complete pairs right as sampled and wrong when swapped, sorted."""
    if pair_table.empty or "ns_correct" not in pair_table:
        return []
    done = pair_table[pair_table["complete"]]
    hit = done["ns_correct"].astype(bool) & ~done["sw_correct"].astype(bool)
    return sorted(int(s) for s in done.loc[hit, "sample"])


# ---------------------------------------------------------------------------------- re-asking recorded failures
REASK_PAIRS = 12   # pairs a re-ask asks again (24 items, as many as the live demo's fresh pairs)


def recording_grid_path():
    """The recording's grid (``data/demo/recording.yaml``): what its items were generated from."""
    from core.files import PROJECT_ROOT

    return PROJECT_ROOT / "data" / "demo" / "recording.yaml"


def reask_doc(failed_samples: Sequence[int], seed, k: int = REASK_PAIRS) -> dict:
    """A run config asking again ``k`` of the recording's failed draws, chosen at random with ``seed`` among those
    whose words are safe to project (``core.lexicon.blocklist.item_is_safe``): the recording's grid restricted to
    those draws (``only_samples``), so every item is the recorded item."""
    import random

    from core.config import run_spec
    from core.files import read_yaml_file
    from core.lexicon.blocklist import item_is_safe
    from core.tasks import setops

    doc = read_yaml_file(recording_grid_path())
    failed = sorted({int(s) for s in failed_samples})
    if failed:   # only draws safe to project (a recording drawn from the reference's pool may hold others)
        probe = run_spec({**doc, "only_samples": failed}).config
        unsafe = {it["sample"] for it in setops.items(probe) if not item_is_safe(it)}
        failed = [s for s in failed if s not in unsafe]
    if not failed:
        raise ValueError("the recording has no pair that was right as sampled and wrong when swapped")
    doc["only_samples"] = sorted(random.Random(f"reask|{seed}").sample(failed, min(int(k), len(failed))))
    return doc


def reask_of(config: dict | None) -> list[int] | None:
    """The recorded draws a run asks again, when its config is the recording's grid restricted to some draws (a
    re-ask); None for any other run."""
    from core.config import read_run_spec

    if not config or not config.get("only_samples"):
        return None
    grid = read_run_spec(recording_grid_path()).config.to_dict()
    rest = {k: v for k, v in config.items() if k != "only_samples"}
    return [int(s) for s in config["only_samples"]] if rest == grid else None
