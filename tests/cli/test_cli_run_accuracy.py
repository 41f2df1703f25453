"""CLI: the accuracy a finished `run` prints is the one the views show (run_overview, strict and lenient), whether
it comes from the runner's final counts or, when those are missing, from the store."""

from __future__ import annotations

import hashlib
import re

import pytest

from core import store
from core.analysis import aggregated, run_overview
from core.runner.plan import Progress
from core.tasks import setops
from core.tasks.setops.scoring import solve
from tests.support.loopback import LoopbackServer

GRID = {"task": "setops", "samples": 6, "sizes": [2, 3], "members": ["numbers"], "seed": 7,
        "operations": ["union", "intersection", "difference"]}   # 36 items


def _items():
    return {it["prompt"]: it for it in setops.items(setops.load_config(GRID))}


def _respond(items):
    def respond(prompt: str, model: str) -> str:
        it = items[prompt]
        pick = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % 3
        right = solve(it)
        if pick == 0:
            return right                                                   # right under both rules
        if pick == 1:
            return right.replace("<answer>", "").replace("</answer>", "")  # right for our parser only
        return "<answer>{zzwrong}</answer>"                                # wrong under both
    return respond


@pytest.fixture()
def finished_run(tmp_path, cli):
    (tmp_path / "cfg.yaml").write_text(
        "task: setops\nsamples: 6\nsizes: [2, 3]\nmembers: [numbers]\nseed: 7\n"
        "operations: [union, intersection, difference]\n")
    srv = LoopbackServer(0.001, responder=_respond(_items())).start()
    db = tmp_path / "a.duckdb"
    def not_asked(*a, **k):
        raise AssertionError("a live run's accuracy comes from its final counts, not a second query")

    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("core.analysis.run_overview", not_asked)
            r = cli("run", "--config", tmp_path / "cfg.yaml", "--model", "openai-compatible/acc", "--base-url",
                    srv.base_url, "--db", db, "--no-progress")
    finally:
        srv.stop()
    assert r.returncode == 0, r.stderr
    return db, r.stdout


def _overview(db, run_id, scoring):
    with store.connect(db) as con:
        ov = run_overview(con, [run_id], scoring=scoring)
    return ov["accuracy"].iloc[0] / 100


def test_printed_accuracy_is_the_views(finished_run):
    db, out = finished_run
    m = re.search(r"run (\S+): done; 36/36 answered .* accuracy ([0-9.]+) strict \(lenient ([0-9.]+)\)", out)
    assert m, out
    run_id, strict, lenient = m.group(1), float(m.group(2)), float(m.group(3))
    assert strict < lenient   # the mix of answers tells the two rules apart
    for rows in (False, True):   # the aggregates' path and the rows' path of the views
        if rows:
            with aggregated.rows_only():
                want = _overview(db, run_id, "strict"), _overview(db, run_id, "lenient")
        else:
            want = _overview(db, run_id, "strict"), _overview(db, run_id, "lenient")
        assert (strict, lenient) == (round(want[0], 3), round(want[1], 3))


def test_accuracy_without_final_counts_reads_the_store(finished_run):
    """A run whose last merge did not report counts (or a batch run) still prints the views' accuracy."""
    from core.cli.commands.run import _accuracy_text

    db, out = finished_run
    run_id = re.search(r"run (\S+):", out).group(1)
    printed = re.search(r"accuracy (.*?), cost", out).group(1)
    with store.connect(db) as con:
        n_done, n_correct = con.execute("SELECT count(*) FILTER (WHERE error IS NULL), count(*) FILTER (WHERE "
                                        "correct) FROM results WHERE run_id = ?", [run_id]).fetchall()[0]
    p = Progress(run_id=run_id, done=n_done, correct=n_correct)   # no strict counts: the store is asked
    assert p.scored_strict is None
    assert _accuracy_text(db, p, "setops") == printed
    assert _accuracy_text(db, p) == printed


def test_a_task_without_strict_scoring_prints_its_own_verdict():
    from core.cli.commands.run import _accuracy_text

    p = Progress(run_id="q", done=4, correct=3, correct_strict=0, scored_strict=0)
    assert _accuracy_text(None, p, "quantifiers") == "0.750"
    p = Progress(run_id="s", done=4, correct=3, correct_strict=1, scored_strict=4)
    assert _accuracy_text(None, p, "quantifiers") == "0.750"
    assert _accuracy_text(None, p, "setops") == "0.250 strict (lenient 0.750)"
