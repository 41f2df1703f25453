"""Imported results are judged by us, not by the file (issue 22, SPEC A9).

A result file carries its own verdict columns (our export's ``correct`` / ``correct_strict``, the SetLexSem
reference's ``llm_vs_gt``). Comparing uploads is one of the tool's three uses, so those columns must not decide: a
file whose responses were edited while its verdicts were left alone would show 100 % correct. On import, for every
set-operation row:

- the truth is recomputed from the item (its operands and operation), whatever the file says it is;
- both verdicts are recomputed from the response with our parsers (lenient: ``parse.py``; strict: the reference's
  rule, ``parse_strict.py``) — for a reference-layout row the response is its ``result_obj``, read the reference's way;
- the file's own verdicts are kept beside them as ``claimed_correct`` / ``claimed_correct_strict`` (schema v5);
- a row without a response keeps the file's verdict and is counted as *claimed only*.

``Tally`` counts what disagreed, for the import's one-line summary, the run record (``run_json.meta.rescored``) and
the Runs page. Quantifier rows are re-scored from their response against their stored label (the scenario's truth is
not recomputed here).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core.tasks.setops.operations import OPERATIONS, truth as set_truth


@dataclass
class Tally:
    rows: int = 0
    rescored: int = 0
    claimed_only: int = 0             # no response: the file's verdict is all there is
    claims_right_but_wrong: int = 0   # the file says correct, the response says otherwise
    claims_wrong_but_right: int = 0
    truth_differs: int = 0            # the file's truth is not the operation's result on its operands

    def add(self, row: dict, claimed, file_truth) -> None:
        self.rows += 1
        if row.get("claimed_only"):
            self.claimed_only += 1
            return
        if claimed is None or row.get("correct") is None:
            return
        self.rescored += 1
        if bool(claimed) and not bool(row["correct"]):
            self.claims_right_but_wrong += 1
        elif not bool(claimed) and bool(row["correct"]):
            self.claims_wrong_but_right += 1
        if file_truth is not None and row.get("truth") is not None and _canon(file_truth) != _canon(row["truth"]):
            self.truth_differs += 1

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        parts = []
        if self.claims_right_but_wrong:
            parts.append(f"{self.claims_right_but_wrong} row(s) claim correct, the response says otherwise")
        if self.claims_wrong_but_right:
            parts.append(f"{self.claims_wrong_but_right} row(s) claim wrong, the response is right")
        if self.truth_differs:
            parts.append(f"{self.truth_differs} row(s) give a truth that is not the operation's result")
        if self.claimed_only:
            parts.append(f"{self.claimed_only} row(s) have no response: their verdict is the file's claim only")
        return "; ".join(parts) or "every verdict the file claims agrees with its responses"


def _canon(members) -> list:
    try:
        return sorted(str(m) for m in members)
    except TypeError:
        return []


def setops_row(row: dict) -> None:
    """Re-score one set-operation row of our export layout in place (see the module docstring)."""
    from core.tasks.setops.scoring import score_set_response

    op, a, b = row.get("operation"), row.get("set_a"), row.get("set_b")
    claimed = row.get("correct"), row.get("correct_strict")
    if op not in OPERATIONS or not isinstance(a, list) or not isinstance(b, list):
        return                      # not an item we can judge: leave it as the file has it
    try:
        row["truth"] = set_truth(op, a, b)
    except TypeError:               # members of mixed types cannot be ordered: leave the row as it is
        return
    row["claimed_correct"], row["claimed_correct_strict"] = claimed
    if isinstance(row.get("response"), str) and row.get("error") is None:
        row.update(score_set_response(row, row["response"]))
    elif row.get("error") is None and claimed[0] is not None:
        row["claimed_only"] = True


def quantifier_row(row: dict) -> None:
    from core.tasks import get_task

    if not isinstance(row.get("response"), str) or row.get("error") is not None or row.get("truth") is None:
        if row.get("error") is None and row.get("correct") is not None:
            row["claimed_only"] = True
        return
    row["claimed_correct"] = row.get("correct")
    try:
        row.update({k: v for k, v in get_task("quantifiers").score(row, row["response"]).items() if k in row
                    or k in ("parsed", "followed", "correct", "pred", "correct_gqg")})
    except (KeyError, TypeError, ValueError):
        row["claimed_correct"] = None   # not enough of the scenario to judge it again


def row(row: dict, tally: Tally) -> None:
    """Re-score one imported row of our export layout and count it."""
    claimed, file_truth = row.get("correct"), row.get("truth")
    task = row.get("task") or ("setops" if row.get("operation") else None)
    if task == "setops":
        setops_row(row)
    elif task == "quantifiers":
        quantifier_row(row)
    tally.add(row, claimed, file_truth)


def run_summary(run_json) -> str | None:
    """The re-scoring line of an imported run (from its record), or None for a run that was not imported."""
    import json

    try:
        doc = json.loads(run_json) if isinstance(run_json, str) else (run_json or {})
    except ValueError:
        return None
    counts = (doc.get("meta") or {}).get("rescored") if isinstance(doc, dict) else None
    if not isinstance(counts, dict):
        return None
    tally = Tally(**{k: int(v) for k, v in counts.items() if k in Tally.__dataclass_fields__})
    return f"re-scored {tally.rescored} of {tally.rows} rows from their responses: {tally.summary()}"


def disagreements(run_json) -> int:
    """How many rows of an imported run the file judged otherwise than its responses (or gave a wrong truth for);
    0 for a run that was not imported or that agrees."""
    import json

    try:
        doc = json.loads(run_json) if isinstance(run_json, str) else (run_json or {})
    except ValueError:
        return 0
    counts = (doc.get("meta") or {}).get("rescored") if isinstance(doc, dict) else None
    if not isinstance(counts, dict):
        return 0
    return sum(int(counts.get(k) or 0) for k in ("claims_right_but_wrong", "claims_wrong_but_right", "truth_differs"))


def import_check(db_path, run_id: str) -> dict | None:
    """What an upload's page says right after the import: its accuracy from the responses (both scorings) beside the
    accuracy its own verdict columns claim, and the re-scoring line. None for a run that was not imported.

        {"rows", "accuracy", "accuracy_strict", "claimed", "claimed_strict", "summary", "disagreements", "text"}
    """
    from core import store

    with store.connect(db_path) as con:
        rec = con.execute("SELECT run_json FROM runs WHERE run_id = ? AND coalesce(source, '') LIKE 'import%'",
                          [run_id]).fetchall()
        if not rec:
            return None
        n, ok, ok_strict, claimed, claimed_strict = con.execute(
            "SELECT count(*), avg(CAST(correct AS INT)), avg(CAST(correct_strict AS INT)), "
            "avg(CAST(claimed_correct AS INT)), avg(CAST(claimed_correct_strict AS INT)) FROM v_results "
            "WHERE run_id = ? AND error IS NULL AND (response IS NOT NULL OR correct IS NOT NULL)",
            [run_id]).fetchall()[0]

    def pct(x) -> float | None:
        return None if x is None else round(100.0 * float(x), 1)

    out = {"rows": int(n), "accuracy": pct(ok), "accuracy_strict": pct(ok_strict), "claimed": pct(claimed),
           "claimed_strict": pct(claimed_strict), "summary": run_summary(rec[0][0]),
           "disagreements": disagreements(rec[0][0])}

    def show(x) -> str:
        return "–" if x is None else f"{x:.1f} %"

    claims = out["claimed_strict"] if out["claimed_strict"] is not None else out["claimed"]
    text = (f"Accuracy from its responses: {show(out['accuracy_strict'])} strict, {show(out['accuracy'])} lenient"
            + (f"; the file's own verdicts claim {show(claims)}" if claims is not None else ""))
    out["text"] = text + (f". {out['summary'][0].upper()}{out['summary'][1:]}." if out["summary"] else ".")
    return out
