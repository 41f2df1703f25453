"""Imported results are judged by us, not by the file: re-scored row by row, or kept row by row as the file's claim.

A result file carries its own verdict columns (our export's ``correct`` / ``correct_strict``, the SetLexSem
reference's ``llm_vs_gt``). Comparing uploads is one of the tool's three uses, so those columns never decide. Every
row of an import is one of:

- **re-scored**: its task is one this tool checks and the task confirms the row (``core/tasks/<task>/recheck.py``:
  operation and operands valid, the prompt re-rendered from the row's item equals the file's prompt); its truth is
  recomputed from the item, whatever the file says it is; both verdicts are recomputed from the response with our
  parsers (lenient: ``parse.py``; strict: the reference's rule, ``parse_strict.py``);
- **failed**: the row carries an error — never correct, whatever it claims (``correct`` NULL: counted as failed);
- **claim only**: anything else (no task we check, an unknown operation, operands that are missing, mixed or not
  the members' kind, a prompt that is not the one its item renders to, no response). Its verdict columns are left
  NULL: it is neither answered nor failed, so no accuracy counts it.

The file's own verdicts are always kept beside ours as ``claimed_correct`` / ``claimed_correct_strict`` (schema
v5). ``Tally`` counts what disagreed — under both scorings — and why rows are claim only, for the import's one-line
summary, the run record (``run_json.meta.rescored``) and the pages. The import adds what the store itself says
(``core/store/io.py``): how many rows differ from this model's own replies stored here to the same prompts, and,
when the file names a stored run (its ``run_id`` column), how many of its responses differ from that run's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

REASONS = {   # why a row is claim only: what the summary says
    "task": "no task this tool checks", "operation": "no operation this tool knows",
    "operands": "operands missing, mixed or not of the members' kind", "prompt": "a prompt that is not the one "
    "its item renders to", "response": "no response",
}
VERDICT_KEYS = ("parsed", "followed", "correct", "jaccard", "precision", "recall", "truth_len", "answer_len",
                "made_up", "empty_truth", "pred", "correct_gqg", "parsed_strict", "followed_strict",
                "correct_strict", "answer_len_strict", "made_up_strict")


@dataclass
class Tally:
    rows: int = 0
    rescored: int = 0
    claimed_only: int = 0
    failed: int = 0                          # rows with an error: never correct
    claims_right_but_wrong: int = 0          # the file says correct, the response says otherwise (lenient)
    claims_wrong_but_right: int = 0
    claims_right_but_wrong_strict: int = 0   # the same under strict scoring
    claims_wrong_but_right_strict: int = 0
    truth_differs: int = 0                   # the file's truth is not the item's
    only_task: int = 0                       # claim only, by reason (REASONS)
    only_operation: int = 0
    only_operands: int = 0
    only_prompt: int = 0
    only_response: int = 0
    own_compared: int = 0      # rows whose prompt this model answered here (calls this tool made)
    own_differ: int = 0        # … whose response is none of those replies
    own_verdict_differ: int = 0   # … whose strict verdict is none of those replies' verdicts
    source_compared: int = 0   # rows of the stored run the file names (its run_id column), by idx
    source_differ: int = 0     # … whose response differs from that run's

    def add(self, row: dict, reason: str | None, claimed: tuple, file_truth) -> None:
        self.rows += 1
        if row.get("error") is not None:
            self.failed += 1
            return
        if reason is not None:
            self.claimed_only += 1
            setattr(self, f"only_{reason}", getattr(self, f"only_{reason}") + 1)
            return
        self.rescored += 1
        for claim, ours, suffix in ((claimed[0], row.get("correct"), ""),
                                    (claimed[1], row.get("correct_strict"), "_strict")):
            if claim is None or ours is None:
                continue
            if bool(claim) and not bool(ours):
                setattr(self, f"claims_right_but_wrong{suffix}", getattr(self, f"claims_right_but_wrong{suffix}") + 1)
            elif not bool(claim) and bool(ours):
                setattr(self, f"claims_wrong_but_right{suffix}", getattr(self, f"claims_wrong_but_right{suffix}") + 1)
        if file_truth is not None and row.get("truth") is not None and _canon(file_truth) != _canon(row["truth"]):
            self.truth_differs += 1

    def merge(self, other: "Tally") -> None:
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def to_dict(self) -> dict:
        return asdict(self)

    def flags(self) -> int:
        """Rows the summary warns about, at least: the largest of its counts (disagreements under either scoring,
        claims only, failures, differences from stored replies) — one row may be counted by several."""
        return max(self.claims_right_but_wrong, self.claims_wrong_but_right, self.claims_right_but_wrong_strict,
                   self.claims_wrong_but_right_strict, self.truth_differs, self.claimed_only, self.failed,
                   self.own_differ, self.source_differ)

    def summary(self, source_run: str | None = None) -> str:
        parts = []
        for suffix, scoring in (("", ""), ("_strict", " under strict scoring")):
            if n := getattr(self, f"claims_right_but_wrong{suffix}"):
                parts.append(f"{n} row(s) claim correct{scoring}, the response says otherwise")
            if n := getattr(self, f"claims_wrong_but_right{suffix}"):
                parts.append(f"{n} row(s) claim wrong{scoring}, the response is right")
        if self.truth_differs:
            parts.append(f"{self.truth_differs} row(s) give a truth that is not the operation's result")
        if self.failed:
            parts.append(f"{self.failed} row(s) carry an error: counted as failed, never correct")
        if self.claimed_only:
            why = ", ".join(f"{getattr(self, f'only_{k}')} with {text}" for k, text in REASONS.items()
                            if getattr(self, f"only_{k}"))
            parts.append(f"{self.claimed_only} row(s) are claim only, not re-scored ({why}): their verdict is the "
                         "file's claim and no accuracy counts them")
        if self.own_compared:
            parts.append(f"{self.own_differ} of {self.own_compared} row(s) differ from this model's own replies "
                         f"stored here to the same prompt ({self.own_verdict_differ} in verdict)")
        if self.source_compared:
            parts.append(f"the file names stored run {source_run or '?'}: {self.source_differ} of "
                         f"{self.source_compared} response(s) differ from that run's")
        if parts:
            return "; ".join(parts)
        return "every verdict the file claims (lenient and strict) agrees with its responses"


def _canon(members) -> list:
    if isinstance(members, bool):
        return [str(members).lower()]
    try:
        return sorted(str(m) for m in members)
    except TypeError:
        return [str(members)]


def _recheck(task, row: dict) -> str | None:
    if task == "setops":
        from core.tasks.setops.recheck import recheck
    elif task == "quantifiers":
        from core.tasks.quantifiers.recheck import recheck
    else:
        return "task"
    return recheck(row)


def _score(task: str, row: dict) -> None:
    from core.tasks import get_task

    scored = get_task(task).score(row, row["response"])
    row.update({k: v for k, v in scored.items() if k in VERDICT_KEYS})


def settle(row: dict, reason: str | None, claimed: tuple, file_truth, tally: Tally) -> None:
    """Keep the file's claims beside the row's verdicts, clear the verdicts of a row that is claim only or failed,
    and count it."""
    row["claimed_correct"], row["claimed_correct_strict"] = claimed
    if reason is not None or row.get("error") is not None:
        for k in VERDICT_KEYS:
            row[k] = None
    tally.add(row, reason, claimed, file_truth)


def row(row: dict, tally: Tally) -> None:
    """Re-score one imported row of our export layout, or keep it as a claim, and count it (module docstring)."""
    claimed = row.pop("_claimed", (row.get("correct"), row.get("correct_strict")))
    file_truth = row.get("truth")
    task = row.get("task") or ("setops" if row.get("operation") is not None else None)
    reason = None
    if row.get("error") is None:
        reason = _recheck(task, row)
        if reason is None and not isinstance(row.get("response"), str):
            reason = "response"
        if reason is None:
            try:
                _score(task, row)
            except (KeyError, TypeError, ValueError):   # not enough of the item to judge it again
                reason = "operands"
    settle(row, reason, claimed, file_truth, tally)


def _counts(run_json) -> tuple[dict | None, dict]:
    import json

    try:
        doc = json.loads(run_json) if isinstance(run_json, str) else (run_json or {})
    except ValueError:
        return None, {}
    meta = (doc.get("meta") or {}) if isinstance(doc, dict) else {}
    counts = meta.get("rescored")
    return (counts if isinstance(counts, dict) else None), meta


def _tally(counts: dict) -> Tally:
    return Tally(**{k: int(v or 0) for k, v in counts.items() if k in Tally.__dataclass_fields__})


def run_summary(run_json) -> str | None:
    """The re-scoring line of an imported run (from its record), or None for a run that was not imported."""
    counts, meta = _counts(run_json)
    if counts is None:
        return None
    tally = _tally(counts)
    return (f"re-scored {tally.rescored} of {tally.rows} rows from their responses: "
            f"{tally.summary(meta.get('source_run'))}")


def disagreements(run_json) -> int:
    """How many rows of an imported run the summary warns about, at least (``Tally.flags``); 0 for a run that was
    not imported or that agrees in every way."""
    counts, _ = _counts(run_json)
    return 0 if counts is None else _tally(counts).flags()


def import_check(db_path, run_id: str) -> dict | None:
    """What an upload's page says right after the import: its accuracy from the responses (both scorings) beside the
    accuracy its own verdict columns claim, and the re-scoring line. None for a run that was not imported.

        {"rows", "accuracy", "accuracy_strict", "claimed", "claimed_strict", "summary", "disagreements", "text"}
    """
    from core import store
    from core.store.provenance import UPLOADED_SQL

    with store.connect(db_path) as con:
        rec = con.execute(f"SELECT run_json FROM runs WHERE run_id = ? AND {UPLOADED_SQL}", [run_id]).fetchall()
        if not rec:
            return None
        n, ok, ok_strict, claimed, claimed_strict = con.execute(
            "SELECT count(correct), avg(CAST(correct AS INT)), avg(CAST(correct_strict AS INT)), "
            "avg(CAST(claimed_correct AS INT)), avg(CAST(claimed_correct_strict AS INT)) FROM v_results "
            "WHERE run_id = ?", [run_id]).fetchall()[0]

    def pct(x) -> float | None:
        return None if x is None else round(100.0 * float(x), 1)

    out = {"rows": int(n), "accuracy": pct(ok), "accuracy_strict": pct(ok_strict), "claimed": pct(claimed),
           "claimed_strict": pct(claimed_strict), "summary": run_summary(rec[0][0]),
           "disagreements": disagreements(rec[0][0])}

    def show(x) -> str:
        return "–" if x is None else f"{x:.1f} %"

    claims = out["claimed_strict"] if out["claimed_strict"] is not None else out["claimed"]
    text = (f"Uploaded (a file's claims, judged here). Accuracy from its responses: {show(out['accuracy_strict'])} "
            f"strict, {show(out['accuracy'])} lenient"
            + (f"; the file's own verdicts claim {show(claims)}" if claims is not None else ""))
    out["text"] = text + (f". {out['summary'][0].upper()}{out['summary'][1:]}." if out["summary"] else ".")
    return out
