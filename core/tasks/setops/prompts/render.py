"""Rendering the four parts of a set-operation prompt from compiled templates (see ``templates.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from core.tasks.setops.operations import apply, keeps
from core.tasks.setops.prompts.templates import Phrasing, Templates


def construction(t: Templates, a: Sequence, b: Sequence, words: bool, phrasing: Phrasing) -> str:
    fmt = phrasing.set_format
    return t.construction.render(
        {"set_a": fmt.render(a, words), "set_b": fmt.render(b, words), "size_a": len(a), "size_b": len(b)}
    )


def task(phrasing: Phrasing, op: str, size_a: int, size_b: int) -> str:
    return phrasing.task[op].render({"size_a": size_a, "size_b": size_b})


def _steps(phrasing: Phrasing, op: str, a: Sequence, b: Sequence) -> str:
    sa, sb = set(a), set(b)
    seen = set()
    order = []
    for m in list(a) + list(b):
        if m not in seen:
            seen.add(m)
            order.append(m)
    fmt = phrasing.set_format
    out = []
    for m in order:
        in_a, in_b = m in sa, m in sb
        where = phrasing.where["both" if in_a and in_b else "a_only" if in_a else "b_only"]
        verdict = phrasing.verdict["keep" if keeps(op, in_a, in_b) else "drop"]
        shown = fmt.members([m], not isinstance(m, int))[0]
        out.append(phrasing.step.render({"member": shown, "where": where, "verdict": verdict}))
    return phrasing.step_separator.join(out)


def demo(phrasing: Phrasing, op: str, a: Sequence, b: Sequence, words: bool, n: int,
         shown: tuple[str, str] | None = None, result: list | None = None, quoted: dict | None = None) -> str:
    """One demonstration: A, B and the result of ``op`` (members in order of appearance).

    Optional caches of the caller: ``shown`` = (A, B) rendered in this phrasing's set format, ``result`` = the
    result of ``op`` in order of appearance, ``quoted`` = member -> its shown text."""
    if result is None:
        result = apply(op, a, b)
    tpl = phrasing.demo_empty.get(op) if not result else None
    tpl = tpl or phrasing.demo[op]
    fmt = phrasing.set_format
    if shown is None:
        shown = (fmt.render(a, words, quoted), fmt.render(b, words, quoted))
    values = {
        "set_a": shown[0],
        "set_b": shown[1],
        "result": fmt.render(result, words, quoted),
        "result_members": fmt.render_list(result, words, quoted),
        "verb": phrasing.verbs[0] if len(result) == 1 else phrasing.verbs[1],
        "n": n,
        "steps": _steps(phrasing, op, a, b) if "steps" in tpl.fields else "",
    }
    if "from_a" in tpl.fields or "from_b" in tpl.fields:
        sa, sb = set(a), set(b)
        values["from_a"] = fmt.render([m for m in result if m in sa], words, quoted)
        values["from_b"] = fmt.render([m for m in result if m in sb], words, quoted)
    return phrasing.demo_item.render({"demo": tpl.render(values), "n": n})


def demonstrations(t: Templates, lines: Sequence[str]) -> str:
    """The demonstrations part around rendered ``demo`` lines (one per shot, numbered from 1); callers leave the
    part out when k = 0."""
    return t.demonstrations.render({"demos": "\n".join(lines), "k": len(lines)})


def persona(t: Templates, approach: str, phrasing: Phrasing) -> str:
    return t.approaches[approach].persona.render({"empty": phrasing.set_format.empty})


def instructions(t: Templates, approach: str, phrasing: Phrasing) -> str:
    return t.approaches[approach].instructions.render({"empty": phrasing.set_format.empty})


def cue(t: Templates, approach: str) -> str:
    """The prompt's last part: the reference's ending (an opening <thinking> for the reasoning approaches)."""
    return t.approaches[approach].cue.render({})


def assemble(t: Templates, parts: Sequence[str]) -> str:
    """Join the non-empty parts (persona, construction, task, demonstrations, instructions, cue) with the templates'
    separator: every prompt (and every run of its parts) is joined here, except the engine's last step, which
    concatenates the three pieces it already holds (persona, construction, the rest) by the same rule."""
    return t.separator.join(p for p in parts if p)
