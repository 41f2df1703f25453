"""Rows of the SetLexSem reference code's result CSVs, read as set-operation items of this tool.

    REFERENCE_COLUMNS                      the columns that make a file the reference's layout
    reference_path_meta(filename) -> dict  hyperparameters from the reference's folder and file naming
    reference_row(rec, pos, name, meta) -> dict   one row in our export layout, with ``_reason`` (None, or why the
                                           row cannot be checked: it is then the file's claim only) and
                                           ``_claimed`` (the file's ``llm_vs_gt``, for both scorings)
    read_bool(value, name, row, col)       a true/false cell (shared with our own export layout)

Nothing read is ever evaluated: set literals are parsed with ``ast.literal_eval`` on bounded input (never eval),
and only sets/lists/tuples of ints and strings are accepted. Whatever is wrong with the file as a whole raises
ImportFileError with one line that says what and where; a row whose operands, prompt or response cannot be checked
is kept as a claim (``_reason``), never judged.

A reference row is checked as far as the reference's own prompts allow: its truth is recomputed from the operands
and the operation (the file's ``ground_truth`` is only compared), the response (``result_obj``) is judged again
with our parsers, and its prompt must name every member of A and B (the reference renders prompts with its own
templates, so it is not re-rendered byte for byte as our own exports' prompts are).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import PurePosixPath
from typing import Any

from core.errors import ImportFileError
from core.tasks.base import INT64, stable_id
from core.tasks.setops import aliases
from core.tasks.setops.operations import OPERATIONS, truth as set_truth
from core.tasks.setops.scoring import flat_literal

MAX_LITERAL_CHARS = 100_000
REFERENCE_COLUMNS = ("op_name", "prompt", "ground_truth", "result_obj", "llm_vs_gt", "set_A", "set_B")
REFERENCE_OPTIONAL = ("context_length_in", "context_length_out", "log_context")
OPERATION_NAMES = {**{op: op for op in OPERATIONS},
                   **aliases.aliases_of("operations"), "symmetricdifference": "symmetric_difference",
                   "symmetric-difference": "symmetric_difference"}
_MEMBER_FOLDERS = {"numbers": "numbers", "basicnumbersampler": "numbers", "words": "words",
                   "basicwordsampler": "words", "decile_words": "deciles", "deciles": "deciles",
                   "deceptive_words": "deceptive", "deceptive": "deceptive",
                   "overlapping_basicnumbersampler": "numbers", "overlapping_basicwordsampler": "words"}
# The reference code's prompt types / approaches under this tool's names (core/tasks/setops/prompts/templates.yaml),
# so an imported reference file lines up with our runs (Compare's alignment) and with the published tables.
_REFERENCE_PHRASINGS = aliases.aliases_of("phrasings")   # one table: core/tasks/setops/aliases.py
_REFERENCE_APPROACHES = aliases.aliases_of("approaches")


def _literal_set(text: Any, name: str, row: int, col: str) -> list | None:
    """A set literal like ``{1, 2}`` / ``{'a', 'b'}`` / ``set()`` → sorted list; ``{-1}`` → None (did not follow)."""
    if text is None:
        raise ImportFileError(f"{name}: row {row}, column {col!r} is empty; expected a set such as {{1, 2}}")
    if isinstance(text, (list, tuple, set, frozenset)):
        value = text
    else:
        s = str(text).strip()
        if len(s) > MAX_LITERAL_CHARS:
            raise ImportFileError(f"{name}: row {row}, column {col!r} is longer than {MAX_LITERAL_CHARS} characters")
        if s in ("set()", "{}", "frozenset()", "[]", "()"):
            return []
        if s == "-1":
            return None
        try:
            value = flat_literal(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise ImportFileError(f"{name}: row {row}, column {col!r} is not a set literal: {s[:40]!r}") from None
    if isinstance(value, dict) and not value:
        return []
    if not isinstance(value, (set, frozenset, list, tuple)):
        raise ImportFileError(f"{name}: row {row}, column {col!r} is a {type(value).__name__}, expected a set")
    members = []
    for m in value:
        if isinstance(m, bool) or not isinstance(m, (int, str)):
            raise ImportFileError(f"{name}: row {row}, column {col!r} has a member of type {type(m).__name__}; "
                                  "only numbers and words are allowed")
        members.append(m.strip().lower() if isinstance(m, str) else m)
    if len(members) == 1 and members[0] == -1:
        return None
    return sorted(set(members), key=lambda m: (isinstance(m, str), m))


def read_bool(value, name: str, row: int, col: str) -> bool | None:
    """A true/false cell (true/false, 1/0, yes/no, t/f; empty → None); ImportFileError for anything else."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    s = str(value).strip().lower()
    if s in ("true", "1", "yes", "t"):
        return True
    if s in ("false", "0", "no", "f"):
        return False
    raise ImportFileError(f"{name}: row {row}, column {col!r} is {str(value)[:30]!r}; expected true or false")


def reference_path_meta(filename: str) -> dict:
    """Hyperparameters from the reference's naming: ``<members>/<operation>/<approach>/<phrasing>_K-.._S-...csv``."""
    parts = PurePosixPath(str(filename).replace("\\", "/")).parts
    meta: dict[str, Any] = {}
    stem = PurePosixPath(parts[-1]).stem if parts else ""
    for key, value in re.findall(r"(?:^|_)(K|N|MA|MB|M|L|O|Decile|S)-([A-Za-z0-9.]+)", stem):
        meta[key] = None if value == "None" else value
    for phrasing in _REFERENCE_PHRASINGS:
        if stem.startswith(phrasing):
            meta["phrasing"] = phrasing
    if len(parts) >= 4:
        members, operation, approach = parts[-4], parts[-3], parts[-2]
        m = _MEMBER_FOLDERS.get(members.lower())
        if m is not None:
            meta["members"] = m
            meta["members_folder"] = members
            if "noswap" in "/".join(parts).lower():
                meta["condition"] = "not_swapped"
            if operation.lower() in OPERATION_NAMES:
                meta["operation"] = OPERATION_NAMES[operation.lower()]
            meta["approach"] = approach
    return meta


def _int_or_none(v) -> int | None:
    try:
        i = int(v) if v is not None else None
    except (TypeError, ValueError):
        return None
    return i if i is None or INT64[0] <= i <= INT64[1] else None


def _float_or_none(v) -> float | None:
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _one_type(members) -> bool:
    return all(isinstance(m, int) for m in members) or all(isinstance(m, str) for m in members)


def _names_every_member(prompt: str, members) -> bool:
    """Whether the prompt text shows every operand member (words case-insensitively)."""
    text = prompt.lower()
    return all(str(m).lower() in text for m in members)


def reference_row(rec: dict, pos: int, name: str, meta: dict) -> dict:
    """One reference row in our export layout (see the module docstring)."""
    from core.tasks.setops.scoring import reference_result, set_metrics, strict_from_reference

    r = pos + 1
    op_raw = str(rec.get("op_name") or "").strip().lower()
    operation = OPERATION_NAMES.get(op_raw)
    if operation is None:
        raise ImportFileError(f"{name}: row {r}, column 'op_name' is {op_raw[:30]!r}; expected union, "
                              "intersection, difference or symmetric_difference")
    set_a = _literal_set(rec.get("set_A"), name, r, "set_A")
    set_b = _literal_set(rec.get("set_B"), name, r, "set_B")
    truth = _literal_set(rec.get("ground_truth"), name, r, "ground_truth")
    if set_a is None or set_b is None or truth is None:
        raise ImportFileError(f"{name}: row {r} has {{-1}} in set_A, set_B or ground_truth")
    answer = _literal_set(rec.get("result_obj"), name, r, "result_obj")
    llm_vs_gt = read_bool(rec.get("llm_vs_gt"), name, r, "llm_vs_gt")
    members = meta.get("members") or ("numbers" if all(isinstance(m, int) for m in set_a + set_b) else "words")
    file_truth = truth
    prompt = rec.get("prompt") or ""
    reason = None
    if not _one_type(set_a + set_b):
        reason = "operands"    # members of mixed types: no operation result to check anything against
    elif not _names_every_member(prompt, set_a + set_b):
        reason = "prompt"
    elif rec.get("result_obj") is None:
        reason = "response"
    factors = {
        "operation": operation, "members": members,
        "size_a": _int_or_none(meta.get("MA") or meta.get("M")) or len(set_a),
        "size_b": _int_or_none(meta.get("MB") or meta.get("M")) or len(set_b),
        "length": _int_or_none(meta.get("L")), "decile": _int_or_none(meta.get("Decile")),
        "overlap": _float_or_none(meta.get("O")), "condition": meta.get("condition"),
        "phrasing": _REFERENCE_PHRASINGS.get(meta.get("phrasing"), meta.get("phrasing")),
        "approach": _REFERENCE_APPROACHES.get(meta.get("approach"), meta.get("approach")),
        "shots": _int_or_none(meta.get("K")) or 0,
    }
    extra = {k: rec.get(k) for k in REFERENCE_OPTIONAL if rec.get(k) is not None}
    extra.update({f"reference_{k}": meta[k] for k in ("phrasing", "approach")
                  if meta.get(k) is not None and meta[k] != factors[k]})
    extra["llm_vs_gt"] = llm_vs_gt
    if meta.get("N") is not None:
        extra["number_max"] = meta.get("N")
    out = {
        **factors,
        "idx": pos, "sample": pos, "seed": _int_or_none(meta.get("S")),
        "config_id": stable_id({"source": "setlexsem-reference", **factors, "N": meta.get("N")}),
        "prompt": prompt, "truth": truth, "set_a": set_a, "set_b": set_b,
        "response": None if rec.get("result_obj") is None else str(rec.get("result_obj")),
        "tokens_in": _int_or_none(rec.get("context_length_in")),
        "tokens_out": _int_or_none(rec.get("context_length_out")),
        "extra_json": json.dumps(extra, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str),
        "_reason": reason, "_claimed": (llm_vs_gt, llm_vs_gt), "_file_truth": file_truth,
    }
    if reason is not None:
        return out
    # the truth is the operation's result on the operands, whatever the file's ground_truth says
    out["truth"] = truth = set_truth(operation, set_a, set_b)
    metrics = set_metrics(truth, answer, set_a, set_b)
    # strict = the reference's own reading of result_obj, judged by us against the recomputed truth; its made-up
    # count compares with A and B as written
    ref_a, ref_b = reference_result(rec.get("set_A")), reference_result(rec.get("set_B"))
    read = reference_result(rec.get("result_obj"))
    ref_truth = frozenset(set_truth(operation, sorted(ref_a, key=str), sorted(ref_b, key=str))) \
        if ref_a is not None and ref_b is not None and _one_type(ref_a | ref_b) else frozenset(truth)
    strict = strict_from_reference(rec.get("result_obj"), read is not None and read == ref_truth,
                                   ref_a or set_a, ref_b or set_b)
    out.update({"parsed": json.dumps(answer, ensure_ascii=False) if answer is not None else None,
                "followed": answer is not None, **metrics, "correct": bool(metrics["correct"]), **strict})
    return out


def claim_digest_cells(rec: dict) -> list:
    """What identifies a reference row's claims for the import's content digest: its cells as written (whitespace
    at the ends and line endings aside)."""
    out = []
    for col in REFERENCE_COLUMNS:
        v = rec.get(col)
        out.append(None if v is None else str(v).replace("\r\n", "\n").replace("\r", "\n").strip())
    return out
