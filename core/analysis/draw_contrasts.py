"""Contrasts of two levels of a factor at the independent draw, aggregated in DuckDB: what reaches Python is one row
per (contrast, draw) and per (contrast, stratum), never the items.

    with items_table(con, run_ids, columns, scoring, view) as (items, configs, design): ...
                                                    a report's items (narrow) and configurations
    with cells_table(con, items, configs, where, params, factor, groups, strata, draw_level) as (cells, classes): ...
    paired_units(con, cells, pairs) / between_units(con, cells, pairs)        per contrast: draws and strata
    strata_counts(con, classes, pairs)                                        per contrast: strata at either level
    draw_sql(columns) / draw_column(column, columns)                          what names a draw, in SQL

Definitions (the findings' and Compare's; docs/FIDELITY.md, "How verdicts are computed"):

* **Draw**: the drawn pair of sets, named by ``findings_catalogue.DRAW`` (seed, sample, the sampler's factors and the
  sets themselves). For deceptive items the parts of speech and the sets are outcomes of the condition, not of the
  draw: they are left out of its name, so the three conditions of one draw share it. In SQL a draw is the hash of
  those columns (64 bits: two distinct draws of one report collide with odds below 1e-8).
* **Stratum**: one value of every other design factor of the contrast (the hash of those columns); **cell**: one
  (group, stratum, draw, level) with the mean verdict (0 – 100) of its items, repeated items of pooled runs included.
* **Paired** (a factor that changes inside a draw): per draw, the mean over its strata answered at both levels of
  (a − b); per stratum, the mean at a and at b over those draws (the spread's configurations).
* **Between draws**: the strata that hold both levels; per (draw, level) the mean over its cells in those strata and
  the draw-level strata key (``_t``); per (stratum, level) the mean over draws.

A contrast is named by an integer ``idx`` chosen by the caller, with its group (``_gid``: the hash of the group
columns, e.g. the series and a ``within`` split) and the text of its two levels as DuckDB casts them.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from core.analysis import aggregated
from core.analysis.findings_catalogue import DRAW
from core.analysis.sql import VIEW, columns_of, quote, relation, series_sql, setops_answers, view_columns, where_clause
from core.store.scratch import temp_table

# for deceptive items these columns are outcomes of the condition, not of the draw
CONDITION_OUTCOMES = ("pos", "set_a", "set_b")


def exact(expr: str) -> str:
    """``expr`` as a decimal of 18 places: sums of such values are exact, so a mean over cells is the same number
    whatever order DuckDB's threads add them in (a report is reproducible to the digit)."""
    return f"CAST({expr} AS DECIMAL(38, 18))"


def draw_column(column: str, have: Sequence[str]) -> str:
    """SQL of ``column`` as a draw knows it: NULL for a deceptive item's condition outcomes."""
    q = quote(column)
    if column in CONDITION_OUTCOMES and "members" in have:
        return f"CASE WHEN members = 'deceptive' THEN NULL ELSE {q} END"
    return q


def draw_sql(have: Sequence[str]) -> str:
    """SQL naming an item's draw (a 64-bit hash of the draw's columns present in ``have``; 0 without any)."""
    cols = [c for c in DRAW if c in have]
    return f"hash({', '.join(draw_column(c, have) for c in cols)})" if cols else "CAST(0 AS UBIGINT)"


def key_sql(columns: Sequence[str], over: Sequence[str] | None = None) -> str:
    """A BIGINT naming one combination of values of ``columns`` (0 for none): the hash, halved to fit a BIGINT;
    ``over``: the columns of a relation of items, whose condition outcomes a draw leaves out (``draw_column``)."""
    if not columns:
        return "CAST(0 AS BIGINT)"
    cols = [draw_column(c, over) if over is not None else quote(c) for c in columns]
    return f"CAST(hash({', '.join(cols)}) >> 1 AS BIGINT)"


@contextmanager
def items_table(con, run_ids: Sequence[str] | None, columns: Sequence[str], scoring: str = "strict",
                view: str = VIEW) -> Iterator[tuple[str, str, list[str]]]:
    """The answered set-operation items of the runs as two TEMP tables (dropped on the way out). **Configurations**
    (from the store's counts, ``aggregated.source``; one grouped scan of the rows where they cannot answer): one row
    per ``_cfg`` — ``model`` (the series: a model's runs made here, or one uploaded
    run alone, ``sql.series_sql``), ``model_name``, ``run_id``, ``config_id``, those of ``columns`` the view has (a
    deceptive item's condition outcomes NULL, as its draw has them), ``overlapping`` ("overlap" when the sets share
    members by design, else "independent"), ``n`` answered items and ``s`` the sum of their verdicts (0 / 100).
    ``_cfg`` names (run, configuration, and any design column that changes inside one of these runs'
    configurations — ``aggregated.column_facts``): every design value is the same for all the items of one
    ``_cfg`` (64-bit hash, as a draw). ``_cls`` names the configuration's **class**: its series and design values
    (``key_sql``), the same for every configuration a cell pools — or ``_cfg`` itself where no two configurations
    share a class. **Items** (one scan, their keys computed on the items before the join to their results where the
    view is the store's: ``sql.setops_answers``), summed in the scan: one row per (``_cls``, ``draw``)
    (``draw_sql``) — ``s`` the sum of the verdicts (0 / 100), ``n`` the items (4.6 a row in the bench's store of
    10 million, where configurations share classes). Yields (items, configurations, their design columns)."""
    have = view_columns(con, view)
    design = [c for c in columns if c in have]
    facts = aggregated.column_facts(con, run_ids, design, view=view, values=False)
    inside = [c for c in design if facts[c].varies or facts[c].partial_null]
    key = ["run_id", "config_id", *inside]
    task = {"task": ["setops"]} if "task" in have else None
    # the configurations: the store's counts per (run, configuration) where they answer, else one scan of the rows
    src = aggregated.source(con, run_ids, ["run_id", "config_id", *design], task, counts=("n", "n_correct"),
                            scoring=scoring, carry=["model"], view=view)
    firsts = ", ".join(f"any_value({draw_column(c, have)}) AS {quote(c)}" for c in dict.fromkeys([*key, *design]))
    overlapping = ("CASE WHEN coalesce(TRY_CAST(overlap AS DOUBLE), 0) > 0 THEN 'overlap' ELSE 'independent' END"
                   if "overlap" in have else "'independent'")
    grouped = (f"SELECT {key_sql(key, over=have)} AS _cfg, any_value(model) AS model, {firsts}, "
               "CAST(sum(n) AS BIGINT) AS n, CAST(100 * sum(n_correct) AS DOUBLE) AS s "
               f"FROM {src.sql} WHERE n > 0 GROUP BY 1")
    configs_sql = (f"SELECT _cfg, {series_sql(con)} AS model, model AS model_name, * EXCLUDE (_cfg, model), "
                   f"{overlapping} AS overlapping FROM ({grouped}) AS g")
    verdict = "CAST(100 * CAST(correct AS INTEGER) AS UTINYINT) AS acc"
    own = set(columns_of(con, "items"))
    pushed = (setops_answers(con, {"_cfg": key_sql(key, over=have), "draw": draw_sql(have)}, scoring, run_ids, view)
              if own and {*key, *(c for c in DRAW if c in have)} <= own else None)
    if pushed is not None:
        items_sql, params = f"SELECT _cfg, draw, {verdict} FROM ({pushed[0]}) AS a", pushed[1]
    else:
        where, params = where_clause(con, run_ids, task, view=view)
        items_sql = (f"SELECT {key_sql(key, over=have)} AS _cfg, {draw_sql(have)} AS draw, {verdict} "
                     f"FROM {relation(con, view, scoring)} {where}")
    configs_sql = f"SELECT *, {key_sql(['model', *design])} AS _cls FROM ({configs_sql}) AS c"
    with temp_table(con, configs_sql, src.params) as configs:
        n_cfg, n_cls = con.execute(f"SELECT count(*), count(DISTINCT _cls) FROM {configs}").fetchone()
        if n_cls < n_cfg:   # configurations share classes: each item takes its class from its configuration
            items_sql = (f"SELECT c._cls, a.draw, sum(a.acc) AS s, count(*) AS n FROM ({items_sql}) AS a "
                         f"JOIN {configs} AS c ON c._cfg = a._cfg GROUP BY c._cls, a.draw")
        else:               # a class per configuration: the configuration names it, no join
            con.execute(f"UPDATE {configs} SET _cls = _cfg")
            items_sql = (f"SELECT _cfg AS _cls, draw, sum(acc) AS s, count(*) AS n FROM ({items_sql}) AS a "
                         "GROUP BY _cfg, draw")
        with temp_table(con, items_sql, params) as items:
            yield items, configs, design


@contextmanager
def cells_table(con, items: str, configs: str, where: str, params: Sequence, factor: str, groups: Sequence[str],
                strata: Sequence[str], draw_level: Sequence[str]) -> Iterator[tuple[str, str]]:
    """The cells of ``factor``'s levels over the configurations ``where`` selects (of ``items_table``'s configurations): one row
    per (group, stratum, draw, level) — ``_gid`` (``key_sql(groups)``), ``_s`` (``key_sql(strata)``), ``_t``
    (``key_sql(draw_level)``), ``draw``, ``lvl`` (the level as text) and ``y`` (the mean verdict, 0 – 100). The
    keys are computed once per configuration class (``_cls``), and the items join them on it: where every cell
    holds one class (no two classes share group, stratum and level), a cell is its class's row of the items (one
    per class and draw); else the classes' rows are summed per cell. Yields (cells, classes): the classes ``where``
    selects with the factor's level, one row each — ``_cls``, ``_gid``, ``_s``, ``_t`` and ``lvl``."""
    q = quote(factor)
    classes = (f"SELECT DISTINCT _cls, {key_sql(groups)} AS _gid, {key_sql(strata)} AS _s, "
               f"{key_sql(draw_level)} AS _t, CAST({q} AS VARCHAR) AS lvl FROM {configs} {where} "
               f"{'AND' if where else 'WHERE'} {q} IS NOT NULL")
    with temp_table(con, classes, params) as m:
        rows, cells = con.execute(f"SELECT count(*), count(DISTINCT (_gid, _s, _t, lvl)) FROM {m}").fetchone()
        if rows == cells:
            sql = (f"SELECT m._gid, m._s, m._t, i.draw, m.lvl, {exact('i.s / i.n')} AS y FROM {items} AS i "
                   f"JOIN {m} AS m ON m._cls = i._cls")
        else:
            # each class's cell key (one hash of group, stratum, draw stratum and level); the items are summed per
            # (key, draw) — two integer keys — and the cells take their columns back from the distinct keys
            sql = (f"WITH mk AS (SELECT *, hash(_gid, _s, _t, lvl) AS _k FROM {m}), "
                   "k AS (SELECT DISTINCT _k, _gid, _s, _t, lvl FROM mk), "
                   f"c AS (SELECT mk._k, i.draw, sum(i.s) AS s, sum(i.n) AS n FROM {items} AS i "
                   "JOIN mk ON i._cls = mk._cls GROUP BY mk._k, i.draw) "
                   f"SELECT k._gid, k._s, k._t, c.draw, k.lvl, {exact('c.s / c.n')} AS y FROM c JOIN k ON k._k = c._k")
        with temp_table(con, sql) as name:
            yield name, m


def _pairs_sql(pairs: Sequence[tuple[int, int, str, str]]) -> tuple[str, list]:
    values = ", ".join("(?, ?, ?, ?)" for _ in pairs)
    params = [v for p in pairs for v in (int(p[0]), int(p[1]), str(p[2]), str(p[3]))]
    return (f"p AS (SELECT CAST(idx AS INTEGER) AS idx, CAST(gid AS BIGINT) AS _gid, a, b "
            f"FROM (VALUES {values}) AS v(idx, gid, a, b))"), params


def strata_counts(con, classes: str, pairs: Sequence[tuple[int, int, str, str]]) -> dict[int, int]:
    """Per contrast: the strata holding either of its levels — read from the configuration classes of
    ``cells_table`` (each answered configuration has cells), not from the cells."""
    if not pairs:
        return {}
    p_sql, p_params = _pairs_sql(pairs)
    rows = con.execute(
        f"WITH {p_sql} SELECT p.idx, count(DISTINCT m._s) FROM p JOIN {classes} AS m ON m._gid = p._gid "
        "AND (m.lvl = p.a OR m.lvl = p.b) GROUP BY p.idx", p_params).fetchall()
    return {int(i): int(n) for i, n in rows}


def paired_units(con, cells: str, pairs: Sequence[tuple[int, int, str, str]]) -> dict[int, dict]:
    """Per contrast answered paired: ``draws`` — (draw, mean over its shared strata of a − b, mean at a, mean at b)
    in the order of the draws — and ``strata`` — (stratum, mean at a, mean at b over its shared draws). A contrast
    with no (stratum, draw) at both levels is absent."""
    if not pairs:
        return {}
    p_sql, params = _pairs_sql(pairs)
    rows = con.execute(
        f"WITH {p_sql}, j AS (SELECT p.idx, x.draw, x._s, x.y AS ya, y.y AS yb FROM p "
        f"JOIN {cells} x ON x._gid = p._gid AND x.lvl = p.a "
        f"JOIN {cells} y ON y._gid = p._gid AND y.lvl = p.b AND y._s = x._s AND y.draw = x.draw) "
        "SELECT idx, draw, _s, GROUPING(draw) AS g, avg(ya - yb), avg(ya), avg(yb) FROM j "
        "GROUP BY GROUPING SETS ((idx, draw), (idx, _s)) ORDER BY idx, g, draw, _s", params).fetchall()
    out: dict[int, dict] = {}
    for idx, draw, s, g, d, ya, yb in rows:
        got = out.setdefault(int(idx), {"draws": [], "strata": []})
        if g == 0:
            got["draws"].append((draw, d, ya, yb))
        else:
            got["strata"].append((s, ya, yb))
    return out


def between_units(con, cells: str, pairs: Sequence[tuple[int, int, str, str]]) -> dict[int, dict]:
    """Per contrast answered between draws, over the strata that hold both levels: ``units`` — (draw, at a?, draw
    stratum ``_t``, mean over its cells) — and ``strata`` — (stratum, at a?, mean over its draws); ``matched``: the
    strata kept. A contrast with no stratum at both levels is absent."""
    if not pairs:
        return {}
    p_sql, params = _pairs_sql(pairs)
    rows = con.execute(
        f"WITH {p_sql}, x AS (SELECT p.idx, c._s, c._t, c.draw, c.lvl = p.a AS _a, c.y FROM p JOIN {cells} c "
        "ON c._gid = p._gid AND (c.lvl = p.a OR c.lvl = p.b)), "
        "m AS (SELECT idx, _s FROM x GROUP BY idx, _s HAVING bool_or(_a) AND NOT bool_and(_a)), "
        "k AS (SELECT x.* FROM x JOIN m USING (idx, _s)) "
        "SELECT idx, draw, _t, _s, _a, GROUPING(draw) AS g, avg(y) FROM k "
        "GROUP BY GROUPING SETS ((idx, draw, _a, _t), (idx, _s, _a)) ORDER BY idx, g, draw, _a, _t, _s",
        params).fetchall()
    out: dict[int, dict] = {}
    for idx, draw, t, s, is_a, g, y in rows:
        got = out.setdefault(int(idx), {"units": [], "strata": [], "matched": 0})
        if g == 0:
            got["units"].append((draw, bool(is_a), t, y))
        else:
            got["strata"].append((s, bool(is_a), y))
    for got in out.values():
        got["matched"] = len({s for s, _, _ in got["strata"]})
    return out
