"""Strict scoring against the SetLexSem reference code itself — runs only when SETLEXSEM_REFERENCE_DIR names a
checkout of github.com/amazon-science/SetLexSem-Challenge (nothing of it is vendored here):

    git clone https://github.com/amazon-science/SetLexSem-Challenge /tmp/setlexsem
    SETLEXSEM_REFERENCE_DIR=/tmp/setlexsem pytest tests/tasks/setops/test_reference_parity.py

The reference's answer functions (``parse_lm_response``, ``get_text_between_tags``, ``try_convert_ints`` of
setlexsem/experiment/lmapi.py and ``is_correct`` of setlexsem/generate/prompt.py) are compiled from its source on
their own (the module imports cloud SDKs we do not need), and its error analysis module
(setlexsem/analyze/error_analysis.py, pandas only) is run as it is. ``run_experiment``'s handling is reproduced:
an exception while parsing or comparing records ``{-1}`` and "wrong".

The reference's error table compares its set columns with ``set()`` and ``{-1}``; read from its CSVs those cells
are strings and the comparisons are always false (did_not_follow and the empty-set counts come out 0). We feed it
strings that compare as the sets they spell, which gives the table its intended meaning — the one we implement.
"""

from __future__ import annotations

import ast
import os
import random
import re
import runpy
from pathlib import Path

import pytest
import yaml

from core import analysis, store
from core.tasks.setops.parse_strict import parse_strict
from core.tasks.setops.scoring import strict_fields
from tests.support import DATA
from tests.support.corpus_run import write_corpus_run

REF = os.environ.get("SETLEXSEM_REFERENCE_DIR")
pytestmark = pytest.mark.skipif(not REF, reason="SETLEXSEM_REFERENCE_DIR (a SetLexSem-Challenge checkout) not set")
CORPUS = yaml.safe_load((DATA / "parse_corpus.yaml").read_text(encoding="utf-8"))


def _functions(relpath: str, names: set[str], namespace: dict) -> dict:
    path = Path(REF) / relpath
    if not path.is_file():
        pytest.fail(f"SETLEXSEM_REFERENCE_DIR={REF} has no {relpath}")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    picked = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert {n.name for n in picked} == names, f"{relpath} lacks some of {sorted(names)}"
    exec(compile(ast.Module(picked, []), str(path), "exec"), namespace)   # noqa: S102 — test-only, local checkout
    return namespace


@pytest.fixture(scope="module")
def ref():
    ns = _functions("setlexsem/experiment/lmapi.py", {"get_text_between_tags", "parse_lm_response",
                                                      "try_convert_ints"}, {"re": re, "ast": ast})
    _functions("setlexsem/generate/prompt.py", {"is_correct"}, ns)
    ns.update({k: v for k, v in runpy.run_path(str(Path(REF) / "setlexsem/analyze/error_analysis.py")).items()
               if k in ("create_error_analysis_table", "calculate_extra_info", "get_normalized_count")})
    return ns


def _reference_verdict(ref, response: str, truth: set):
    """(result_obj, llm_vs_gt) exactly as the reference's run_experiment records them."""
    try:
        result = ref["parse_lm_response"](response)
        ok = ref["is_correct"](truth, result)
    except Exception:  # noqa: BLE001 — the reference catches everything here and records "did not follow"
        result, ok = {-1}, False
    return result, ok


def _shapes(n: int, seed: int) -> list[str]:
    pieces = ["<answer>", "</answer>", "<answer>", "</answer>", "set(", ")", "set()", "{", "}", "[", "]", "1", "22",
              "-3", "007", "1_000", "1.5", " ", "\n", "\t", ",", "'", '"', "cat", "Dog", "the empty set", "emptyset",
              "é", "answer", "<ANSWER>", "-1", "_", "-", ".", "∅", "frozenset(", "<thinking>", "</thinking>"]
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(n)]


def test_parse_and_verdict_equal_the_reference(ref):
    truths = [set(), {1, 22}, {"cat", "Dog"}, {-3, 7}]
    responses = [e["response"] for e in CORPUS] + _shapes(20000, seed=3)
    for response in responses:
        got = parse_strict(response)
        for truth in truths:
            result, ok = _reference_verdict(ref, response, truth)
            assert (got.members is None) == (result == {-1}), repr(response)
            if got.members is not None:
                assert got.members == result, repr(response)
            mine = strict_fields(sorted(truth, key=str), [], [], response)
            assert mine["correct_strict"] == ok, (repr(response), truth)


class _SetText(str):
    """A set's repr that also compares equal to the set it spells (see the module docstring)."""

    def _set(self):
        return set() if str(self) == "set()" else set(ast.literal_eval(str(self)))

    def __eq__(self, other):
        if isinstance(other, (set, frozenset)):
            return self._set() == other
        return str.__eq__(self, other)

    def __ne__(self, other):
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    __hash__ = str.__hash__


def test_error_table_equals_the_reference(ref, tmp_path):
    import pandas as pd

    db = tmp_path / "s.duckdb"
    items = write_corpus_run(db)
    with store.connect(db) as con:
        ours = analysis.reference_error_table(con, ["corpus"], by=["members", "operation"], scoring="strict",
                                              unparsed="reference")
    groups: dict = {}
    for it in items:
        result, ok = _reference_verdict(ref, it["response"], set(it["truth"]))
        groups.setdefault((it["members"], it["operation"]), []).append({
            "ground_truth": _SetText(repr(set(it["truth"])) if it["truth"] else "set()"),
            "result_obj": _SetText(repr(result) if result else "set()"), "llm_vs_gt": ok,
            "set_A": _SetText(repr(set(it["set_a"]))), "set_B": _SetText(repr(set(it["set_b"])))})
    assert len(groups) == len(ours)
    for row in ours.to_dict("records"):
        rows = groups[(row["members"], row["operation"])]
        frame = pd.DataFrame({k: pd.Series([r[k] for r in rows], dtype=object if k != "llm_vs_gt" else bool)
                              for k in rows[0]})
        theirs = ref["create_error_analysis_table"](frame, {"members": row["members"],
                                                            "operation": row["operation"]}).iloc[0].to_dict()
        for col in analysis.REFERENCE_ERROR_COLUMNS:
            a, b = row[col], theirs[col]
            if isinstance(b, str) or b is None:
                assert a == b, (row["members"], row["operation"], col, a, b)
            else:
                assert float(a) == float(b), (row["members"], row["operation"], col, a, b)
