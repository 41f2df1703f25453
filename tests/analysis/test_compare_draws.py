"""Two runs compared at the independent draw (core/analysis/comparison.py) through ``report compare`` and the
Compare page: one drawn pair gives an estimate and no interval or p; two give the exact test; runs that share items
are paired with n = draws, not items; a null with shared draws stays calibrated; an edited upload is its own series,
labelled a contradicted claim; the page shows the CLI's numbers."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from core import runner, store
from core.analysis import comparison, stats
from core.store.exports import export_run
from core.store.io import import_results
from core.tasks.setops.scoring import solve
from tests.support.loopback import LoopbackServer

WRONG = "<answer>{zzwrong}</answer>"
TINY = {"task": "setops", "seed": 3, "samples": 1, "operations": ["union"], "sizes": [2], "members": ["numbers"],
        "lengths": [2], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
# each draw asked in four operations: four configurations share every draw
GRID = {"task": "setops", "seed": 11, "samples": 6, "operations": ["union", "intersection", "difference",
                                                                   "symmetric_difference"],
        "sizes": [2], "members": ["numbers"], "lengths": [2], "phrasings": ["formal"], "approaches": ["baseline"],
        "shots": [0]}


def _items(*configs) -> dict:
    from core.config import run_spec

    out = {}
    for cfg in configs:
        spec = run_spec(cfg)
        for it in spec.task_module.items(spec.config):
            out[it["prompt"]] = it
    return out


def draw_responder(items: dict, p_right: float = 0.5):
    """A null model whose verdict depends on the drawn sets and the model name only: every configuration of a draw
    gets the same verdict (an item-level test would count each draw four times), no model is better."""

    def respond(prompt: str, model: str) -> str:
        it = items[prompt]
        key = json.dumps([sorted(map(str, it["set_a"])), sorted(map(str, it["set_b"])), model])
        u = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 16 ** 8
        return solve(it) if u < p_right else WRONG

    return respond


def _right_and_wrong(db, cfg) -> tuple[str, str]:
    srv = LoopbackServer(0.0005, answer=WRONG).start()
    try:
        right = runner.run(cfg, "reference/solver", db_path=db).run_id
        wrong = runner.run(cfg, "openai-compatible/wrong", db_path=db, base_url=srv.base_url).run_id
    finally:
        srv.stop()
    return right, wrong


def _report(cli, db, a, b, tmp_path, fmt="json", *extra):
    out = tmp_path / f"cmp.{fmt}"
    done = cli("report", "compare", "--db", db, "--run", a, "--run", b, "--format", fmt, "--out", out, *extra)
    assert done.returncode == 0, done.stderr
    return (json.loads(out.read_text()) if fmt == "json" else out.read_text()), done


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _page_agrees(at, res) -> None:
    """The Compare page shows the CLI's headline."""
    h = res["headline"]
    m = _metrics(at)
    assert m["B − A (points)"] == f"{h['estimate']:+.2f}"
    assert m["95 % interval"] == comparison.interval_text(h)
    assert m["p"] == comparison.p_words(h)
    shown = " ".join(x.value for x in at.markdown)
    assert f"B − A = {h['estimate']:+.1f}" in shown or comparison.TOO_FEW in shown


@pytest.mark.slow
@pytest.mark.parametrize("samples", [1, 2])
def test_one_and_two_drawn_pairs(samples, page_db, cli, open_page, tmp_path):
    right, wrong = _right_and_wrong(page_db, dict(TINY, samples=samples))
    res, done = _report(cli, page_db, right, wrong, tmp_path)
    h = res["headline"]
    assert h["design"] == "paired by draw" and h["n"] == samples and h["unit"] == "draws"
    assert h["estimate"] == -100.0
    # one or two units (fewer than stats.MIN_UNITS: no two-sided test on them can reach 0.05): an estimate, no
    # interval, no p, whichever test the design calls for (two one-item draws: the exact McNemar test's units)
    assert samples < stats.MIN_UNITS
    assert not h["testable"] and h["ci_low"] is None and h["ci_high"] is None and h["p"] is None
    assert h["caveat"] == comparison.TOO_FEW and not h["significant"]
    assert comparison.TOO_FEW in done.stdout
    md, _ = _report(cli, page_db, right, wrong, tmp_path, "md")
    assert "less accurate" in md and "p =" not in md and comparison.TOO_FEW in md
    at = open_page("pages/compare.py", {"runs": f"{right},{wrong}"})
    _page_agrees(at, res)
    assert not [m for m in at.metric if "McNemar" in m.label]   # the item-level p is gone from the page


@pytest.fixture(scope="module")
def null_pair(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("pair") / "s.duckdb")
    srv = LoopbackServer(0.0005, responder=draw_responder(_items(GRID))).start()
    try:
        ids = [runner.run(GRID, f"openai-compatible/null-{m}", db_path=db, base_url=srv.base_url,
                          concurrency=16).run_id for m in "ab"]
    finally:
        srv.stop()
    return db, ids


def test_runs_that_share_items_are_paired_over_draws(null_pair, cli, tmp_path):
    db, (a, b) = null_pair
    res, _ = _report(cli, db, a, b, tmp_path)
    h = res["headline"]
    assert h["design"] == "paired by draw" and h["unit"] == "draws"
    assert h["n"] == GRID["samples"] and h["cells"] == 4 * GRID["samples"]      # 6 draws, not 24 items
    assert h["test"] == "sign-flip permutation" and h["testable"]
    assert res["agreement"]["items"] == 4 * GRID["samples"]
    assert res["a"]["provenance"] == res["b"]["provenance"] == "made here" and not res["a"]["claim"]
    ops = [r for r in res["factors"] if r["factor"] == "operation"]
    assert [r["level"] for r in ops] == sorted(GRID["operations"]) and all(r["n"] == GRID["samples"] for r in ops)
    assert all(r["p_holm"] >= r["p"] for r in ops)
    assert [d["configurations"] for d in res["description"]] == [4, 4]
    with store.connect(db) as con:   # the per-draw differences, recomputed by hand from the items
        df = con.execute("SELECT run_id, sample, operation, CAST(correct_strict AS INT) * 100.0 AS y FROM v_results "
                         "WHERE run_id IN (?, ?)", [a, b]).df()
    wide = df.pivot_table(index=["sample", "operation"], columns="run_id", values="y")
    per_draw = (wide[b] - wide[a]).groupby(level="sample").mean()
    assert h["estimate"] == pytest.approx(per_draw.mean())


def test_the_page_shows_the_cli_numbers(null_pair, cli, open_page, tmp_path, monkeypatch):
    import streamlit as st

    db, (a, b) = null_pair
    monkeypatch.setenv("STUDIO_DB", db)
    st.cache_data.clear()
    res, _ = _report(cli, db, a, b, tmp_path)
    at = open_page("pages/compare.py", {"runs": f"{a},{b}"})
    _page_agrees(at, res)
    m = _metrics(at)
    assert m["Mean A"] == f"{res['headline']['mean_a']:.1f} %" and m["Shared items"] == str(4 * GRID["samples"])
    levels = next(d.value for d in at.dataframe if "p (Holm)" in d.value.columns)
    assert levels["p (Holm)"].tolist() == [comparison.p_words(r, "p_holm") for r in res["factors"]]
    assert any("Description (not a test)" in s.value for s in at.subheader)
    assert not any("Mann" in x.value or "Welch" in x.value for x in [*at.markdown, *at.caption])
    st.cache_data.clear()


def test_a_null_with_shared_draws_keeps_the_headline_calibrated(tmp_path):
    """20 replications of two null models on one grid (verdicts shared by a draw's four configurations): the
    headline declares a difference in at most 3 (15 %); counted per item it would see each draw four times. A
    replication is a slice of 8 draws (``sample``) of two runs of 160 draws each: two runs, not forty."""
    reps, per = 20, 8
    grid = dict(GRID, samples=reps * per, seed=500)
    db = tmp_path / "null.duckdb"
    srv = LoopbackServer(0.0005, responder=draw_responder(_items(grid))).start()
    try:
        a, b = (runner.run(grid, f"openai-compatible/null-{m}", db_path=db, base_url=srv.base_url,
                           concurrency=16).run_id for m in "ab")
    finally:
        srv.stop()
    declared = per_item = 0
    with store.connect(db) as con:
        for r in range(reps):
            res = comparison.compare_two(con, a, b, by=(), filters={"sample": list(range(r * per, (r + 1) * per))})
            h, ag = res["headline"], res["agreement"]
            assert h["design"] == "paired by draw" and h["n"] == per and h["cells"] == 4 * per, h
            assert h["testable"] and -100 <= h["ci_low"] <= h["estimate"] <= h["ci_high"] <= 100, h
            declared += h["significant"]
            # the same items tested as if independent: the exact McNemar test over the 32 items
            per_item += stats.mcnemar_counts(ag["both_right"], ag["only_a"], ag["only_b"],
                                             ag["both_wrong"])["p_value"] < 0.05
    assert declared <= 0.15 * reps, declared
    assert per_item > 0.15 * reps, per_item   # this null tells a draw-level test from an item-level one


def test_an_edited_upload_is_its_own_series_labelled_a_contradicted_claim(null_pair, cli, tmp_path, open_page,
                                                                         monkeypatch):
    import streamlit as st

    db, (a, _b) = null_pair
    out = tmp_path / "export.csv"
    export_run(db, a, out)
    df = pd.read_csv(out)
    items = _items(GRID)
    wrong = df.index[df["response"] == WRONG][:3]
    assert len(wrong) == 3
    df.loc[wrong, "response"] = [solve(items[p]) for p in df.loc[wrong, "prompt"]]   # three answers made right
    df.to_csv(out, index=False)
    up = import_results(db, out.read_bytes(), "edited.csv")[0]
    assert up != a
    res, done = _report(cli, db, a, up, tmp_path)
    assert res["a"]["run_id"] == a and res["b"]["run_id"] == up       # two series: never pooled
    assert res["a"]["provenance"] == "made here" and not res["a"]["contradicted"]
    assert res["b"]["provenance"] == "uploaded" and res["b"]["claim"] and res["b"]["contradicted"]
    assert res["replies"] == {"shared_prompts": 4 * GRID["samples"], "differ": 3}
    assert "contradicted claim" in done.stdout and "3 of its 24 replies differ" in done.stdout
    h = res["headline"]
    assert h["design"] == "paired by draw" and h["n"] == GRID["samples"] and h["estimate"] > 0
    md, _ = _report(cli, db, a, up, tmp_path, "md")
    assert "a contradicted claim" in md and "never pooled" in md
    monkeypatch.setenv("STUDIO_DB", db)
    st.cache_data.clear()
    at = open_page("pages/compare.py", {"runs": f"{a},{up}"})
    assert any("B is a contradicted claim" in w.value and "3 of its 24 replies differ" in w.value
               for w in at.warning), [w.value for w in at.warning]
    _page_agrees(at, res)
    st.cache_data.clear()


def test_bad_input_is_one_line(null_pair, cli, tmp_path):
    db, (a, b) = null_pair
    for args, says in [((a,), "exactly two runs"), ((a, a), "the same run"), ((a, "nope"), "nope"),
                       ((f"{a},{b}", b), "exactly two runs")]:
        runs = [x for r in args for x in ("--run", r)]
        done = cli("report", "compare", "--db", db, *runs, "--out", tmp_path / "x.json")
        assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
    done = cli("report", "compare", "--db", db, "--run", a, "--run", b, "--out", tmp_path / "x.csv")
    assert done.returncode != 0 and "--format" in done.stderr
    done = cli("report", "compare", "--db", db, "--run", a, "--run", b, "--by", "nope", "--out", tmp_path / "x.md")
    assert done.returncode != 0 and "--by" in done.stderr


@pytest.mark.parametrize("samples", [1, 2, 4])
def test_runs_that_share_no_draw_are_compared_between_draws(samples, tmp_path, cli):
    """Two models asked different draws (another seed): matched on the configuration, between draws. One or two draws
    a side are too few to test (2 of 2 + 2 draws: the smallest p of a label permutation is 2 / C(4, 2) = 0.33); four a
    side give 70 arrangements, the observed one and its mirror the most extreme: p = 2 / 70."""
    db = str(tmp_path / "s.duckdb")
    srv = LoopbackServer(0.0005, answer=WRONG).start()
    try:
        right = runner.run(dict(TINY, samples=samples), "reference/solver", db_path=db).run_id
        wrong = runner.run(dict(TINY, samples=samples, seed=4), "openai-compatible/wrong", db_path=db,
                           base_url=srv.base_url).run_id
    finally:
        srv.stop()
    res, _ = _report(cli, db, right, wrong, tmp_path)
    h = res["headline"]
    assert h["design"].startswith("between draws") and res["draws"]["shared"] == 0
    assert (h["n_a"], h["n_b"], h["estimate"]) == (samples, samples, -100.0)
    assert h["testable"] is (samples == 4)
    if samples < 4:
        assert h["p"] is None and h["ci_low"] is None and h["caveat"] == comparison.TOO_FEW
    else:
        assert h["p"] == pytest.approx(2 / 70) and -100 <= h["ci_low"] <= h["ci_high"] <= 100
    assert res["agreement"]["items"] == 0
