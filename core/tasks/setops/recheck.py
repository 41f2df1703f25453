"""Checking a set-operation row that a result file claims, before it is judged again (imports; core/store/rescore.py).

    recheck(row) -> None | reason      None: the row is ours to judge — its truth is recomputed in place;
                                        otherwise why it cannot be checked ("operation", "operands", "prompt")
    render_prompt(row) -> str | None    the prompt a zero-shot item renders to with the default templates

A row is checked when its operation is one of the four, its operands are lists of members of one kind that fits
its ``members`` (whole numbers for numbers, words otherwise), and its prompt is the one its item renders to with
the default templates: the prompt is rendered again from the row's operation, operands, sizes, phrasing, approach
and shots and compared. With shots, the demonstrations between the task and the instructions depend on the run's
sampler and are not re-drawn: the prompt must begin with the rendered persona, operands and task and end with the
rendered instructions. A prompt made with edited templates (or with the default templates of another version of this
tool) is not re-rendered from a file, so such a row is not checked either: it stays the file's claim.
"""

from __future__ import annotations

from core.tasks.setops.operations import OPERATIONS, truth as set_truth
from core.tasks.setops.prompts import render as R
from core.tasks.setops.prompts.templates import load_templates

MEMBER_KINDS = ("numbers", "words", "deciles", "deceptive")


def _operands_ok(members: str, a, b) -> bool:
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    every = a + b
    if members == "numbers":
        return all(isinstance(m, int) and not isinstance(m, bool) for m in every)
    return all(isinstance(m, str) for m in every)


def _whole(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _parts(row: dict):
    """(templates, [persona, construction, task], instructions + cue) of the row's item, or None."""
    t = load_templates(None)
    phrasing, approach = row.get("phrasing"), row.get("approach")
    if phrasing not in t.phrasings or approach not in t.approaches:
        return None
    phr = t.phrasings[phrasing]
    size_a, size_b = _whole(row.get("size_a")), _whole(row.get("size_b"))
    if size_a is None or size_b is None:
        return None
    a, b, op = row["set_a"], row["set_b"], row["operation"]
    words = row.get("members") != "numbers"
    head = [R.persona(t, approach, phr), R.construction(t, a, b, words, phr), R.task(phr, op, size_a, size_b)]
    instructions = t.separator.join(p for p in (R.instructions(t, approach, phr), R.cue(t, approach)) if p)
    return t, head, instructions


def render_prompt(row: dict) -> str | None:
    """The prompt of a zero-shot item (operation, members, set_a, set_b, size_a, size_b, phrasing, approach) with the
    default templates; None when its phrasing or approach is not one of them."""
    parts = _parts(row)
    if parts is None:
        return None
    t, head, instructions = parts
    return R.assemble(t, [*head, instructions])


def rendered_prompt_matches(row: dict) -> bool:
    """Whether ``row['prompt']`` is what the row's item renders to (see the module docstring)."""
    prompt, shots = row.get("prompt"), _whole(row.get("shots") or 0)
    parts = _parts(row)
    if parts is None or shots is None or not isinstance(prompt, str):
        return False
    t, head, instructions = parts
    if shots == 0:
        return prompt == R.assemble(t, [*head, instructions])
    start = R.assemble(t, head) + t.separator
    end = (t.separator + instructions) if instructions else ""
    return len(prompt) > len(start) + len(end) and prompt.startswith(start) and prompt.endswith(end)


def recheck(row: dict) -> str | None:
    """See the module docstring; sets ``row['truth']`` to the operation's result on the operands when checked."""
    op, members = row.get("operation"), row.get("members")
    if op not in OPERATIONS:
        return "operation"
    if members not in MEMBER_KINDS or not _operands_ok(members, row.get("set_a"), row.get("set_b")):
        return "operands"
    if not rendered_prompt_matches(row):
        return "prompt"
    row["truth"] = set_truth(op, row["set_a"], row["set_b"])
    return None
