"""Checking a quantifier row that a result file claims, before it is judged again (imports; core/store/rescore.py).

    recheck(row) -> None | reason   None: the row is ours to judge — its truth and label are recomputed in place
                                    from the quantifier's meaning; otherwise why it cannot be checked
                                    ("operands": the scenario's values are missing or impossible, "prompt")

A row is checked when its quantifier parses, its counts are whole numbers that add up (count_large + count_small =
total, the asked count one of them), its template is one of the named templates, and its prompt is what those
values render to (either order of the predicate pair that gives the stated counts).
"""

from __future__ import annotations

from core.errors import ConfigError
from core.tasks.quantifiers.catalogue import parse_quantifier
from core.tasks.quantifiers.config import TEMPLATES
from core.tasks.quantifiers.engine import render_prompt


def _whole(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def recheck(row: dict) -> str | None:
    try:
        quant = parse_quantifier(row.get("quantifier"))
    except ConfigError:
        return "operands"
    total, asked_n = _whole(row.get("total")), _whole(row.get("count_asked"))
    large, small = _whole(row.get("count_large")), _whole(row.get("count_small"))
    words = [row.get(k) for k in ("object", "predicate", "other_predicate")]
    if None in (total, asked_n, large, small) or large + small != total or asked_n not in (large, small) \
            or not all(isinstance(w, str) and w for w in words):
        return "operands"
    noun, asked, other = words
    text = TEMPLATES.get(row.get("template"))
    if text is None or not isinstance(row.get("prompt"), str):
        return "prompt"
    rendered = set()
    for pair in ((other, asked), (asked, other)):          # asked is the pair's second / first predicate
        first, second = (total - asked_n, asked_n) if asked == pair[1] else (asked_n, total - asked_n)
        if first == large:
            rendered.add(render_prompt(text, total, noun=noun, pair=pair, asked=asked, other=other,
                                       quantifier=quant.name, count_first=first, count_second=second))
    if row["prompt"] not in rendered:
        return "prompt"
    holds = quant.holds(total, asked_n, total - asked_n)
    row["truth"], row["label"] = holds, "true" if holds else "false"
    return None
