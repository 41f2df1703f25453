"""Dashboard pages against realistic but unusual data: a DB holding only an imported SetLexSem reference CSV, runs
with failed calls and unparseable answers, a one-item run, quantifier and set-operation runs selected together,
and URLs naming unknown or deleted runs. Each test pins one fix (the page showed a crash or misleading output).

Only the model is scripted (in-process, like tests/test_runner_mechanics.py): the runner, the DuckDB file, the
importer, the analysis and the pages under Streamlit's AppTest are real."""

from __future__ import annotations

import math
import random
import sys

import pandas as pd
import pytest

from tests.support import ROOT  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core import analysis, runner, store  # noqa: E402
from core.models.base import Completion, ModelError  # noqa: E402
from core.store.io import import_results  # noqa: E402
from core.tasks import get_task  # noqa: E402

SETOPS = {"task": "setops", "seed": 1, "samples": 3, "operations": ["union", "intersection"], "sizes": [2, 4],
          "members": ["numbers"], "phrasings": ["formal"], "approaches": ["baseline"], "shots": [0]}
QUANT = {"task": "quantifiers", "seed": 0, "quantifiers": ["at least half", "none"], "noun_groups": ["common"],
         "samples": 3, "nouns_per_group": 2}
REF_NAME = "numbers/union/baseline/formal_language_K-0_N-None_MA-4_MB-4_L-4_S-292.csv"
REF_HEADER = ("op_name,prompt,ground_truth,result_obj,llm_vs_gt,set_A,set_B,context_length_in,context_length_out,"
              "log_context\n")


class ScriptedModel:
    """Item idx % 4 == 0: the call fails; idx % 4 == 1: an answer with no set in it; otherwise the right answer."""

    provider = "fake"
    supported_params = ()
    default_concurrency = 4

    def __init__(self, spec: str = "fake/mixed", fail_all: bool = False):
        self.spec, self.fail_all = spec, fail_all

    async def complete(self, request):
        idx = request.item["idx"]
        if self.fail_all or idx % 4 == 0:
            raise ModelError("scripted failure: server said no")
        text = "I cannot tell you that." if idx % 4 == 1 else get_task(request.task).solve(request.item)
        return Completion(text, 10, 5, 1.0, None, "stop")


def reference_csv(n: int = 12, seed: int = 0) -> bytes:
    """A SetLexSem reference result CSV (union of 4-digit numbers): {-1} = did not follow, some made-up members."""
    rnd = random.Random(seed)
    lines = [REF_HEADER]
    for i in range(n):
        a, b = set(rnd.sample(range(1000, 9999), 4)), set(rnd.sample(range(1000, 9999), 4))
        truth = a | b
        if i % 5 == 0:
            result = "{-1}"
        elif i % 3 == 0:
            result = repr(set(sorted(truth)[:-1]) | {42})
        else:
            result = repr(truth)
        prompt = f"You are given two sets. Set A is {sorted(a)}. Set B is {sorted(b)}. Print the set union."
        lines.append(f'union,"{prompt}","{truth}","{result}",{result == repr(truth)},"{a}","{b}",{120 + i},{20 + i},'
                     '"{}"\n')
    return "".join(lines).encode()


def select_row(at: AppTest, key: str, row: int = 0) -> AppTest:
    """Select a row of an st.dataframe(on_select=...) the way a click would."""
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def edge_db(tmp_path_factory) -> tuple[str, dict]:
    """One DB with every unusual case (read-only for the tests that share it)."""
    db = str(tmp_path_factory.mktemp("edge") / "studio.duckdb")
    ids = {
        "solver": runner.run(SETOPS, "reference/solver", db_path=db).run_id,
        "mixed": runner.run(SETOPS, ScriptedModel(), db_path=db, max_attempts=1).run_id,
        "all_failed": runner.run(dict(SETOPS, seed=7), ScriptedModel("fake/down", fail_all=True), db_path=db,
                                 max_attempts=1).run_id,
        "one": runner.run(dict(SETOPS, operations=["union"], sizes=[2]), "reference/solver", db_path=db, limit=1,
                          fresh=True).run_id,   # one item: union, |A| = |B| = 2
        "quant": runner.run(QUANT, "reference/solver", db_path=db).run_id,
        "ref": import_results(db, reference_csv(), REF_NAME)[0],
    }
    return db, ids


@pytest.fixture()
def edge(edge_db, monkeypatch):
    db, ids = edge_db
    monkeypatch.setenv("STUDIO_DB", db)
    return db, ids


# ------------------------------------------------------------------------------------------------ drill-down

def test_item_detail_never_shows_nan():
    """A DataFrame row holds NaN / pd.NA for NULL columns; NaN is truthy, so `row.get(x) or default` printed 'nan'."""
    row = pd.DataFrame([{"run_id": "r", "idx": 3, "prompt": "p", "response": None, "parsed": None, "followed": None,
                         "correct": None, "truth": "[1]", "error": "HTTP 500"}]).astype(
        {"correct": "boolean", "followed": "boolean"}).iloc[0]
    assert isinstance(row["response"], float) or row["response"] is None  # what pandas gives for a NULL column
    d = analysis.item_detail(row)
    assert d["response"] == "(no response: the call failed — HTTP 500)"
    assert d["correct"] == "not scored (the call failed)" and d["parsed"] == "(none)" and d["idx"] == 3
    assert "nan" not in " ".join(str(v) for v in d.values()).lower()
    unparsed = analysis.item_detail({"response": "no idea", "parsed": float("nan"), "followed": False,
                                     "correct": False, "error": math.nan})
    assert unparsed["parsed"] == "(no answer found: did not follow the instruction)" and unparsed["correct"] == "no"
    assert unparsed["error"] is None


@pytest.mark.slow
def test_drilldown_of_a_failed_call_shows_the_error_not_nan(edge, open_page):
    _db, ids = edge
    at = open_page("pages/results.py", {"runs": ids["mixed"], "view": "drilldown"})
    select_row(at, "res_items", 0)  # item 0 of the scripted model: a failed call
    codes = [c.value for c in at.code]
    assert "(no response: the call failed — scripted failure: server said no)" in codes, codes
    detail = [m.value for m in at.markdown if m.value.startswith("**Parsed (lenient)**")]
    assert detail and "nan" not in detail[0].lower() and "<NA>" not in detail[0], detail
    assert "not scored (the call failed)" in detail[0]
    select_row(at, "res_items", 1)  # item 1: answered without a set — by both rules
    detail = [m.value for m in at.markdown if m.value.startswith("**Parsed (lenient)**")]
    assert "did not follow the instruction" in detail[0] and "**Correct**: no" in detail[0], detail
    # user text is shown as a literal code span (issue 13: escaped; a padded span renders the same)
    assert "**Parsed (strict)**: ` (no answer found: did not follow the instruction) ` · **Correct**: no" in detail[0]


# ------------------------------------------------------------------------------------------------ reference CSV import

def test_reference_import_uses_our_phrasing_and_approach_names(tmp_path):
    """The reference code names prompt types formal_language / plain_language … and an approach chain_of_thought;
    stored under those names, an imported file never aligned with our runs (phrasing 'formal', approach 'cot')."""
    db = str(tmp_path / "s.duckdb")
    run_id = import_results(db, reference_csv(4), "words/union/chain_of_thought/plain_language_K-1_N-None_M-4_L-None_"
                                                  "S-7.csv")[0]
    with store.connect(db) as con:
        rows = con.execute("SELECT phrasing, approach, extra_json FROM items WHERE run_id = ?", [run_id]).fetchall()
    assert {(r[0], r[1]) for r in rows} == {("plain", "cot")}
    assert all('"reference_phrasing":"plain_language"' in r[2] and '"reference_approach":"chain_of_thought"' in r[2]
               for r in rows)


@pytest.mark.slow
def test_compare_aligns_a_reference_import_with_our_run(edge, open_page):
    """Our solver run and an imported reference file share union · |A| = |B| = 4 · numbers · formal · baseline ·
    k = 0: one aligned configuration each."""
    _db, ids = edge
    at = open_page("pages/compare.py", {"runs": f"{ids['solver']},{ids['ref']}"})
    assert any("Aligned on:" in c.value and "Phrasing" in c.value for c in at.caption)
    summary = at.dataframe[0].value
    assert sorted(summary["Operation"].tolist()) == ["union", "union"], summary
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Mean A"] == "100.0 %" and metrics["Mean B"] == "50.0 %", metrics


# ------------------------------------------------------------------------------------------------ compare

@pytest.mark.slow
def test_compare_says_when_alignment_leaves_nothing(edge, open_page):
    """A one-item run (union, |A| = 2) and the reference file (union, |A| = 4) share factors but no combination of
    them: the page said 'No answered items for this selection yet' — wrong, both have answers."""
    _db, ids = edge
    at = open_page("pages/compare.py", {"runs": f"{ids['one']},{ids['ref']}"})
    assert any("No combination of the shared factors" in i.value and "Align on shared factors" in i.value
               for i in at.info), [i.value for i in at.info]
    at.toggle(key="cmp_align").set_value(False).run()
    assert not at.exception
    assert not [i.value for i in at.info if "No combination" in i.value]
    assert {m.label: m.value for m in at.metric}["Mean B"] == "50.0 %"


@pytest.mark.slow
def test_compare_with_a_run_whose_calls_all_failed_shows_no_nan(edge, open_page):
    _db, ids = edge
    at = open_page("pages/compare.py", {"runs": f"{ids['all_failed']},{ids['solver']}"})
    assert any("No answered items in this selection for fake/down" in w.value for w in at.warning), \
        [w.value for w in at.warning]
    assert any("No configurations of fake/down" in i.value for i in at.info), [i.value for i in at.info]
    shown = [m.value for m in at.metric] + [m.value for m in at.markdown]
    assert not [v for v in shown if "nan" in v.lower()], shown


# ------------------------------------------------------------------------------------------------ robustness

def test_robustness_names_no_best_or_worst_level_when_all_levels_tie(edge_db):
    """The solver is right everywhere: every factor has spread 0, and the table said e.g. best 'union', worst
    'union' (an arbitrary level named both best and worst)."""
    db, ids = edge_db
    with store.connect(db) as con:
        rob, _per_model = analysis.robustness(con, [ids["solver"], ids["mixed"]])
    solver = rob[rob["model"] == "reference/solver"]
    assert len(solver) and (solver["spread"] == 0).all()
    assert (solver["best_level"] == "(all equal)").all() and (solver["worst_level"] == "(all equal)").all()
    mixed = rob[(rob["model"] == "fake/mixed") & (rob["spread"] > 0)]
    assert len(mixed) and (mixed["best_level"] != mixed["worst_level"]).all()


# ------------------------------------------------------------------------------------------------ error table

@pytest.mark.slow
def test_error_table_leaves_quantifier_items_out(edge, open_page):
    """The set-operation error table over a quantifier run showed 'Accuracy Non Empty', 'G? vs. L? (100.00%)' … —
    numbers that mean nothing for true/false answers. Selected together with a set-operation run, the quantifier
    items also swelled the set-operation columns."""
    db, ids = edge
    with store.connect(db) as con:
        assert analysis.error_table(con, [ids["quant"]], by=["model"]).empty
        both = analysis.error_table(con, [ids["quant"], ids["mixed"]], by=["model"])
        alone = analysis.error_table(con, [ids["mixed"]], by=["model"])
    assert both["model"].tolist() == ["fake/mixed"] and both["n"].tolist() == alone["n"].tolist()
    at = open_page("pages/results.py", {"runs": ids["quant"], "view": "errors"})
    assert any("No answered set-operation items" in i.value for i in at.info), [i.value for i in at.info]
    assert any("quantifiers runs are left out" in c.value for c in at.caption)
    assert not any("G? vs. L?" in str(d.value) for d in at.dataframe)


# ------------------------------------------------------------------------------------------------ published figures

def test_published_tables_are_offered_for_their_own_task_only():
    assert {t["id"] for t in analysis.reference_for("model")} == {"setlexsem_by_model", "gqg_pythia"}
    assert [t["id"] for t in analysis.reference_for("model", tasks=["setops"])] == ["setlexsem_by_model"]
    assert [t["id"] for t in analysis.reference_for("model", tasks=["quantifiers"])] == ["gqg_pythia"]
    assert analysis.reference_for("operation", tasks=["quantifiers"]) == []


@pytest.mark.slow
def test_quantifier_runs_are_not_set_beside_the_setlexsem_llms(edge, open_page):
    """Compare put quantifier accuracy beside the SetLexSem paper's set-operation LLMs ('Beside the paper's seven
    LLMs'), and Results offered the set-operation per-LLM table as a reference for quantifier runs."""
    _db, ids = edge
    at = open_page("pages/compare.py", {"runs": ids["quant"]})
    assert not [e for e in at.expander if "seven LLMs" in e.label]
    assert len(at.dataframe) >= 1  # the per-series summary is still there
    at = open_page("pages/compare.py", {"runs": f"{ids['solver']},{ids['mixed']}"})
    assert [e for e in at.expander if "seven LLMs" in e.label]
    charts = len(at.get("plotly_chart"))
    at.session_state["cmp_paper"] = True     # opened, the expander draws its chart (built only while open)
    at.run()
    assert not at.exception and len(at.get("plotly_chart")) == charts + 1
    shared = [m for m in at.metric if m.label == "Shared items"]
    assert shared and int(shared[0].value) > 0       # the two runs share items: the paired test is shown
    at.session_state["cmp_agree_open"] = True         # and its agreement map is drawn once opened
    at.run()
    assert not at.exception and len(at.get("plotly_chart")) == charts + 2
    res = open_page("pages/results.py", {"runs": ids["quant"]})
    assert res.selectbox(key="res_x").value == "quantifier"   # a quantifier run opens split by quantifier
    res.selectbox(key="res_x").set_value("model").run()
    assert res.selectbox(key="res_ref").options == [
        "(none)", "GQG: Pythia 410M-6.9B accuracy on the vanilla quantifier set"]


# ------------------------------------------------------------------------------------------------ links

@pytest.mark.slow
def test_links_to_deleted_or_unknown_runs_say_so(tmp_path, monkeypatch, open_page):
    """A shared link to a run deleted since silently showed another run (the newest) on Results and Runs."""
    db = str(tmp_path / "s.duckdb")
    monkeypatch.setenv("STUDIO_DB", db)
    keep = runner.run(SETOPS, "reference/solver", db_path=db).run_id
    gone = runner.run(dict(SETOPS, seed=9), "reference/solver", db_path=db).run_id
    quant = runner.run(QUANT, "reference/solver", db_path=db).run_id
    store.delete_run(db, gone)

    res = open_page("pages/results.py", {"runs": f"{gone},{keep}", "x": "no_such_factor", "color": "zzz",
                                         "by": "bogus,operation", "slice": "bogus=1;operation=union,xx"})
    assert any(gone in w.value and "Not in the database" in w.value for w in res.warning), \
        [w.value for w in res.warning]
    assert res.multiselect(key="_pick_runs").value == [keep]
    # a garbage factor in the URL falls back to the default split (it gave the first option, "model")
    assert res.selectbox(key="res_x").value == "operation" and res.selectbox(key="res_color").value == "(none)"
    res.radio(key="res_view").set_value("errors").run()
    assert res.multiselect(key="res_by").value == ["operation"]

    runs = open_page("pages/runs.py", {"run": gone})
    assert any(gone in w.value for w in runs.warning), [w.value for w in runs.warning]

    q = open_page("pages/quantifiers.py", {"qruns": f"{keep},{quant}"})
    assert any(keep in w.value and "Not quantifiers runs" in w.value for w in q.warning), \
        [w.value for w in q.warning]
    assert q.multiselect(key="_pick_qruns").value == [quant]

    ok = open_page("pages/results.py", {"runs": keep})
    assert not [w.value for w in ok.warning if "Not in the database" in w.value]


# ------------------------------------------------------------------------------------------------ overview

@pytest.mark.slow
def test_results_overview_counts_failed_calls(edge, open_page):
    """Accuracy is over answered items; the overview showed 9 answered of 12 with no word on the 3 failed calls."""
    db, ids = edge
    with store.connect(db) as con:
        ov = analysis.run_overview(con, [ids["mixed"], ids["solver"]]).set_index("run_id")
    assert ov.loc[ids["mixed"], ["items", "answered", "failed", "n_correct"]].tolist() == [12, 9, 3, 6]
    assert ov.loc[ids["solver"], "failed"] == 0
    at = open_page("pages/results.py", {"runs": ids["mixed"]})
    row = at.dataframe[0].value.iloc[0]
    assert row["Failed calls"] == 3 and row["Answered"] == 9 and round(row["Accuracy %"], 1) == 66.7
    assert any("failed calls are left out" in c.value for c in at.caption)
