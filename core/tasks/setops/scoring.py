"""Per-item metrics of a set answer and the per-item error fields the error analysis needs.

Public API::

    set_metrics(truth, answer, set_a, set_b) -> dict
        correct, jaccard, precision, recall, truth_len (G), answer_len (L), made_up, empty_truth
    score_set_response(item, response, *, with_reason=False) -> dict   # parse + metrics = task.score for setops
                                      # (lenient and strict fields side by side)
    strict_fields(truth, set_a, set_b, response) -> dict   # the SetLexSem reference's verdict (parse_strict)
    strict_from_reference(result_obj, llm_vs_gt, set_a, set_b)   # the same from a reference CSV's own parse
    strict_scores(truth, parsed) -> (precision, recall, jaccard)   # of the strict parse (JSON texts; pure-Python
                                      # reference of core.store.aggregates.strict_metric_sql)
    reference_result(text) -> frozenset | None     # a reference CSV's result_obj cell ({-1} → None)
    STRICT_COLUMNS                    # parsed_strict, followed_strict, correct_strict, answer_len_strict,
                                      # made_up_strict
    solve(item) -> str                # the reference solver's answer (always correct)
    kind_of(members_factor) -> "numbers" | "words"
    gl_label(truth_len, answer_len) -> "G8 vs. L7" ("G8 vs. L?" when no set was found)
    error_fields(metrics) -> dict     # did_not_follow, has_made_up, empty_truth_correct, empty_truth_wrong,
                                      # spurious_empty, gl
    error_summary(rows) -> dict       # the A4 table for one group of metric dicts (pure-Python reference)
    ROW_SQL, AGG_SQL, DID_NOT_FOLLOW_SQL   # the same definitions as DuckDB SQL over stored result columns
    apply_operation, canonical, OPERATIONS   # re-exported from core.tasks.setops.operations

Conventions (documented, tested)
--------------------------------
- ``answer`` None means the response did not follow the instructions: correct False, jaccard = precision =
  recall = 0.0, answer_len None, made_up 0.
- Empty sets: when truth and answer are both empty, jaccard = precision = recall = 1.0. When only one side is empty,
  all three are 0.0 (precision of an empty answer against a non-empty truth is 0, recall of a non-empty answer against
  an empty truth is 0) — the empty side never earns credit on its own.
- made_up counts answer members that are in neither A nor B (a hallucinated member), whatever the operation.
- Members are compared after the parser's normalisation: ints for numbers, lower-case strings for words (other
  values, e.g. from imported files, compare as their lower-case text).
- Strict (the reference's rule, core/tasks/setops/parse_strict.py): exact, type- and case-sensitive set equality with
  the truth; ``answer_len_strict`` is the answer's size and ``made_up_strict`` its members outside A ∪ B, compared
  exactly too; both are None / 0 when the reference records did-not-follow (how the error table counts such a row
  is its own choice: see core/analysis/error_table.py).

Error-analysis definitions (paper, Table 15 and the appendix tables; shares are percentages)
------------------------------------------------------------------------------------------
- accuracy: correct / N. accuracy_non_empty: correct answers on non-empty truths / N — the paper divides by all
  comparisons (Intersection, numbers: 15.68 = (10573 − 8064) / 16000); ``accuracy_on_non_empty`` divides by the
  number of non-empty truths instead.
- pct_nullset_correct: empty truth answered with the empty set, / N. pct_nullset_wrong: empty truth answered with
  anything else (a non-empty set or no set), / N.
- pct_made_up: made-up members summed, / N — the paper's "Pct With Made Up Vals" (Union, numbers: 375 / 16000 =
  2.34); pct_answers_made_up: answers with at least one made-up member, / N; made_up_sum: total made-up members.
- did_not_follow: count of answers that did not follow the instructions (their ``followed`` verdict false or missing;
  DID_NOT_FOLLOW_SQL, the one definition the error table counts with).
- top mistakes / top correct: the three most frequent "G vs. L" labels (the paper's format) among wrong / correct
  answers with their share (%) of the wrong / correct answers; a wrong answer with no set is "G<n> vs. L?". Ties break
  by G, then L (L? last), so the result is deterministic. core/analysis/ (the dashboard's table) uses the same
  definitions.
"""

from __future__ import annotations

import ast
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from core.tasks.setops.operations import OPERATIONS, apply_operation, canonical, member_key  # noqa: F401  (re-exported)
from core.tasks.setops.parse import parse_set
from core.tasks.setops.parse_strict import parse_strict, sorted_members

__all__ = [
    "AGG_SQL", "DID_NOT_FOLLOW_SQL", "OPERATIONS", "ROW_SQL", "STRICT_COLUMNS", "apply_operation", "canonical", "error_fields",
    "error_summary", "gl_label",
    "kind_of", "reference_result", "score_set_response", "set_metrics", "solve", "strict_fields",
    "strict_from_reference", "strict_scores", "top_gl_sql",
]


def _norm(m):
    """Members compare as ints (numbers, integral floats) or stripped lower-case strings; anything else (e.g. a
    value from an imported file) compares as its lower-case text, so scoring never fails on odd data."""
    if isinstance(m, bool):
        return str(m).lower()
    if isinstance(m, int):
        return m
    if isinstance(m, float) and m.is_integer():
        return int(m)
    return (m if isinstance(m, str) else str(m)).strip().lower()


def set_metrics(truth: Iterable, answer: Iterable | None, set_a: Iterable, set_b: Iterable) -> dict:
    """Exact match, Jaccard, precision, recall, G/L lengths, made-up count and empty-truth flag of one answer."""
    t = {_norm(m) for m in truth}
    out = {"truth_len": len(t), "empty_truth": not t}
    if answer is None:
        out.update(correct=False, jaccard=0.0, precision=0.0, recall=0.0, answer_len=None, made_up=0)
        return out
    a = {_norm(m) for m in answer}
    universe = {_norm(m) for m in set_a} | {_norm(m) for m in set_b}
    inter = len(t & a)
    if not t and not a:
        jac = prec = rec = 1.0
    else:
        jac = inter / len(t | a)
        prec = inter / len(a) if a else 0.0
        rec = inter / len(t) if t else 0.0
    out.update(correct=t == a, jaccard=jac, precision=prec, recall=rec, answer_len=len(a),
               made_up=len(a - universe))
    return out


def kind_of(members_factor: str) -> str:
    """Parser kind for a setops ``members`` factor: numbers → "numbers"; words, deciles, deceptive → "words"."""
    return "numbers" if members_factor == "numbers" else "words"


def member_list(value) -> list:
    """An item's set as a list, whether it is a list already or JSON text (a stored or exported row); None, NaN (an
    empty cell of a frame) and text that is not JSON give []."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    return list(value)


MAX_REFERENCE_LITERAL = 100_000
STRICT_COLUMNS = ("parsed_strict", "followed_strict", "correct_strict", "answer_len_strict", "made_up_strict")


def strict_fields(truth: Iterable, set_a: Iterable, set_b: Iterable, response, *, with_reason: bool = False) -> dict:
    """The reference's verdict on ``response``: parsed_strict (JSON text or None), followed_strict, correct_strict,
    answer_len_strict (None when not followed) and made_up_strict (0 when not followed)."""
    got = parse_strict(response)
    out = {"parsed_strict": got.to_json(), "followed_strict": got.followed}
    if got.members is None:
        out.update(correct_strict=False, answer_len_strict=None, made_up_strict=0)
    else:
        universe = set(member_list(set_a)) | set(member_list(set_b))
        out.update(correct_strict=got.members == frozenset(member_list(truth)), answer_len_strict=len(got.members),
                   made_up_strict=len(got.members - universe))
    if with_reason:
        out["reason_strict"] = got.reason
    return out


MAX_LITERAL_BRACKETS = 64   # a flat set literal needs one pair; deep nesting is refused before the parser sees it


def flat_literal(s: str):
    """``ast.literal_eval`` of a set literal, refused (ValueError) when it holds more than MAX_LITERAL_BRACKETS
    brackets: a flat set never nests, and deeply nested input would only cost the parser time and stack."""
    if sum(s.count(c) for c in "([{") > MAX_LITERAL_BRACKETS:
        raise ValueError("nested too deeply for a set literal")
    return ast.literal_eval(s)


def reference_result(text) -> frozenset | None:
    """A reference CSV's ``result_obj`` cell (``{1, 2}``, ``{'Cat'}``, ``set()``, ``{-1}``) as the set it names;
    None for the did-not-follow sentinel or anything that is not a flat set of ints and strings (literal_eval on
    bounded text: nothing is executed)."""
    s = str(text).strip()
    if s in ("set()", "{}", "frozenset()"):
        return frozenset()
    if len(s) > MAX_REFERENCE_LITERAL:
        return None
    try:
        value = flat_literal(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if value == -1 or not isinstance(value, (set, frozenset, list, tuple)):
        return None
    if any(isinstance(m, bool) or not isinstance(m, (int, str)) for m in value):
        return None
    members = frozenset(value)
    return None if members == {-1} else members


def strict_from_reference(result_obj, llm_vs_gt, set_a: Iterable, set_b: Iterable) -> dict:
    """Strict fields of a row the reference code scored itself: its parse (the ``result_obj`` cell) and its verdict
    (``llm_vs_gt``); ``set_a``/``set_b`` as member lists (for the made-up count)."""
    members = reference_result(result_obj)
    if members is None:
        return {"parsed_strict": None, "followed_strict": False, "correct_strict": False,
                "answer_len_strict": None, "made_up_strict": 0}
    universe = set(set_a) | set(set_b)
    return {"parsed_strict": json.dumps(sorted_members(members), ensure_ascii=False), "followed_strict": True,
            "correct_strict": bool(llm_vs_gt), "answer_len_strict": len(members),
            "made_up_strict": len(members - universe)}



def _json_members(text) -> set | None:
    """The members of a JSON list (text or list) as a set; None when it is not one."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    try:
        got = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return None
    return set(got) if isinstance(got, list) else None


def strict_scores(truth, parsed) -> tuple[float, float, float]:
    """(precision, recall, jaccard) of the strict parse ``parsed`` (JSON list or None) against ``truth`` (JSON list):
    members compared as the strict verdict compares them; an answer that did not follow the rule scores 0; an
    empty answer to an empty truth scores 1. The pure-Python reference of the definition the store sums per
    configuration in SQL (``core.store.aggregates.strict_metric_sql``)."""
    t, a = _json_members(truth) or set(), _json_members(parsed)
    if a is None:
        return 0.0, 0.0, 0.0
    if not t and not a:
        return 1.0, 1.0, 1.0
    inter = len(t & a)
    return (inter / len(a) if a else 0.0, inter / len(t) if t else 0.0, inter / len(t | a))



def score_set_response(item: Mapping, response: str, *, with_reason: bool = False) -> dict:
    """Parse ``response`` for a setops item and score it: the Score dict of the task contract
    (parsed JSON text or None, followed, correct, the :func:`set_metrics` keys, and the strict verdict of
    :func:`strict_fields` beside them). This is ``setops.score``."""
    parsed = parse_set(response if isinstance(response, str) else "", kind_of(item.get("members", "numbers")))
    metrics = set_metrics(member_list(item["truth"]), parsed.members, member_list(item["set_a"]), member_list(item["set_b"]))
    out = {"parsed": parsed.to_json(), "followed": parsed.followed, **metrics,
           **strict_fields(item["truth"], item["set_a"], item["set_b"], response, with_reason=with_reason)}
    if with_reason:
        out["reason"] = parsed.reason
    return out


def solve(item: Mapping) -> str:
    """The reference solver's response: the truth inside <answer></answer> tags."""
    truth = member_list(item["truth"])
    if kind_of(item.get("members")) == "numbers":
        shown = ", ".join(str(int(m)) for m in truth)
    else:
        shown = ", ".join(f"'{m}'" for m in truth)
    return f"<answer>{{{shown}}}</answer>"


# ---------------------------------------------------------------------------------------------------------------
# error analysis (A4)

def gl_label(truth_len: int, answer_len: int | None) -> str:
    """"G8 vs. L7" (G = truth length, L = answer length; the paper's format); "G8 vs. L?" when no set was found."""
    return f"G{int(truth_len)} vs. L{'?' if answer_len is None else int(answer_len)}"


def _gl_order(item):
    (g, l_), n = item
    return (-n, g, l_ is None, l_ or 0)


def error_fields(m: Mapping) -> dict:
    """Per-item flags behind the A4 table, from a stored results row (its ``followed``) or a :func:`set_metrics`
    dict (no ``followed``: there an answer that did not follow has no set, ``answer_len`` None)."""
    followed = m["followed"] if m.get("followed") is not None else m["answer_len"] is not None
    empty_answer = m["answer_len"] is not None and m["answer_len"] == 0
    return {
        "did_not_follow": not followed,
        "has_made_up": bool(m.get("made_up") or 0),
        "empty_truth_correct": bool(m["empty_truth"]) and empty_answer,
        "empty_truth_wrong": bool(m["empty_truth"]) and not empty_answer,
        "spurious_empty": (not m["empty_truth"]) and empty_answer,
        "gl": gl_label(m["truth_len"], m["answer_len"]),
    }


def _top(counter: Counter, k: int) -> list:
    total = sum(counter.values())
    ranked = sorted(counter.items(), key=_gl_order)[:k]
    return [(gl_label(g, l_), round(100.0 * n / total, 2)) for (g, l_), n in ranked] if total else []


def error_summary(rows: Sequence[Mapping], k: int = 3) -> dict:
    """The A4 error table for one group of items (each row a :func:`set_metrics` dict / stored results row)."""
    n = len(rows)
    fields = [error_fields(r) for r in rows]
    correct = sum(bool(r["correct"]) for r in rows)
    non_empty = [r for r in rows if not r["empty_truth"]]
    correct_non_empty = sum(bool(r["correct"]) for r in non_empty)
    wrong_gl = Counter((r["truth_len"], r["answer_len"]) for r in rows if not r["correct"])
    right_gl = Counter((r["truth_len"], r["answer_len"]) for r in rows if r["correct"])

    def pct(x: int) -> float:
        return round(100.0 * x / n, 2) if n else 0.0

    return {
        "n": n,
        "n_correct": correct,
        "n_wrong": n - correct,
        "accuracy": pct(correct),
        "accuracy_non_empty": pct(correct_non_empty),
        "accuracy_on_non_empty": round(100.0 * correct_non_empty / len(non_empty), 2) if non_empty else None,
        "empty_set_equal": sum(f["empty_truth_correct"] for f in fields),
        "empty_set_mismatch": sum(f["empty_truth_wrong"] for f in fields),
        "pct_nullset_correct": pct(sum(f["empty_truth_correct"] for f in fields)),
        "pct_nullset_wrong": pct(sum(f["empty_truth_wrong"] for f in fields)),
        "spurious_empty": sum(f["spurious_empty"] for f in fields),
        "pct_made_up": pct(sum(int(r.get("made_up") or 0) for r in rows)),
        "pct_answers_made_up": pct(sum(f["has_made_up"] for f in fields)),
        "made_up_sum": sum(int(r.get("made_up") or 0) for r in rows),
        "did_not_follow": sum(f["did_not_follow"] for f in fields),
        "top_mistakes": _top(wrong_gl, k),
        "top_correct": _top(right_gl, k),
    }


# "Did not follow the instructions" over stored columns: the row's ``followed`` verdict (of the scoring shown:
# ``followed_strict`` under strict), a missing verdict counting as not followed. The error table
# (core/analysis/error_table.py) counts it with this expression.
DID_NOT_FOLLOW_SQL = "NOT coalesce(followed, FALSE)"

# The same definitions in DuckDB SQL over stored columns (results / v_results: correct, followed, truth_len,
# answer_len, made_up, empty_truth). Rows whose ``correct`` is NULL (not answered yet) should be filtered out first.
ROW_SQL = {
    "did_not_follow": f"({DID_NOT_FOLLOW_SQL})",
    "has_made_up": "(coalesce(made_up, 0) > 0)",
    "empty_truth_correct": "(empty_truth AND coalesce(answer_len = 0, false))",
    "empty_truth_wrong": "(empty_truth AND (answer_len IS NULL OR answer_len > 0))",
    "spurious_empty": "(NOT empty_truth AND coalesce(answer_len = 0, false))",
    "gl": "'G' || CAST(truth_len AS VARCHAR) || ' vs. L' || coalesce(CAST(answer_len AS VARCHAR), '?')",
}

AGG_SQL = {
    "n": "count(*)",
    "n_correct": "count(*) FILTER (WHERE correct)",
    "n_wrong": "count(*) FILTER (WHERE NOT correct)",
    "accuracy": "round(100.0 * count(*) FILTER (WHERE correct) / count(*), 2)",
    "accuracy_non_empty": "round(100.0 * count(*) FILTER (WHERE correct AND NOT empty_truth) / count(*), 2)",
    "accuracy_on_non_empty": "round(100.0 * count(*) FILTER (WHERE correct AND NOT empty_truth)"
                             " / nullif(count(*) FILTER (WHERE NOT empty_truth), 0), 2)",
    "empty_set_equal": f"count(*) FILTER (WHERE {ROW_SQL['empty_truth_correct']})",
    "empty_set_mismatch": f"count(*) FILTER (WHERE {ROW_SQL['empty_truth_wrong']})",
    "pct_nullset_correct": f"round(100.0 * count(*) FILTER (WHERE {ROW_SQL['empty_truth_correct']}) / count(*), 2)",
    "pct_nullset_wrong": f"round(100.0 * count(*) FILTER (WHERE {ROW_SQL['empty_truth_wrong']}) / count(*), 2)",
    "spurious_empty": f"count(*) FILTER (WHERE {ROW_SQL['spurious_empty']})",
    "pct_made_up": "round(100.0 * coalesce(sum(made_up), 0) / count(*), 2)",
    "pct_answers_made_up": f"round(100.0 * count(*) FILTER (WHERE {ROW_SQL['has_made_up']}) / count(*), 2)",
    "made_up_sum": "coalesce(sum(made_up), 0)",
    "did_not_follow": f"count(*) FILTER (WHERE {ROW_SQL['did_not_follow']})",
}


def top_gl_sql(source: str, group_cols: Sequence[str] = (), *, correct: bool, k: int = 3) -> str:
    """SQL giving, per group, the top-k "G vs. L" labels among correct (or wrong) answers with their share (%) of
    that group's correct (wrong) answers: columns ``*group_cols, gl, n, share, rank``.

    ``source`` and ``group_cols`` are identifiers chosen by code (never user text); values are not interpolated.
    """
    cols = "".join(f'"{c}", ' for c in group_cols)
    part = ("PARTITION BY " + ", ".join(f'"{c}"' for c in group_cols)) if group_cols else ""
    return (
        f"SELECT {cols}gl, n, share, rank FROM ("
        f" SELECT {cols}{ROW_SQL['gl']} AS gl, n, round(100.0 * n / sum(n) OVER ({part}), 2) AS share,"
        f" row_number() OVER ({part} ORDER BY n DESC, truth_len, answer_len NULLS LAST) AS rank FROM ("
        f"  SELECT {cols}truth_len, answer_len, count(*) AS n FROM {source}"
        f"  WHERE correct IS NOT NULL AND {'' if correct else 'NOT '}correct GROUP BY ALL))"
        f" WHERE rank <= {int(k)} ORDER BY {cols}rank"
    )
