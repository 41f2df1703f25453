"""How a set-operation reply ends and what form it has: the stop sequence, the reply cap of answer-only
approaches, and the answer's form for constrained decoding.

* ``STOP`` — ``</answer>``: every approach asks for the answer inside ``<answer></answer>`` and nothing after it, so
  a reply is complete at the closing tag.
* ``reply_cap(cfg, item)`` — for an approach marked ``answer_only`` in the templates (baseline, baseline allowing
  the empty set, domain expertise): room for the longest answer any of the four operations could give on this item
  — every member of A ∪ B, quoted and separated — inside the tags, counted in characters (a token is at least one
  character in the tokenisers of the models we run, so this is a ceiling on the tokens a complete answer needs) plus
  a small margin for a lead-in such as "Answer:". A wrong answer of plausible size is never cut short (the error
  analysis needs it whole); a model that rambles instead stops soon. None for approaches that reason first.
* ``answer_grammar(cfg, item)`` — ``<answer>{m1, m2, …}</answer>`` with members shaped like the item's (numbers:
  digits; words: letters, quoted or not) as a llama.cpp grammar and as the equivalent regular expression. It fixes
  the form only, never which members: made-up members stay possible. With ``members=True`` (answer format
  ``members``) only members of A ∪ B are allowed: a demo model cannot invent one, only choose wrongly.
"""

from __future__ import annotations

import re

from core.tasks.setops.grid import plan

STOP: tuple[str, ...] = ("</answer>",)
LEAD_IN = 12                                    # "Answer: " and the like before the tag
TAGS = len("<answer>{}</answer>")
PER_MEMBER = 4                                  # quotes and ", " around each member
MAX_NUMBER_DIGITS = 12
MAX_WORD = 40


def _union(item: dict) -> list:
    return list(dict.fromkeys([*(item.get("set_a") or []), *(item.get("set_b") or [])]))


def reply_cap(cfg, item: dict) -> int | None:
    """Tokens an answer-only reply to ``item`` may need (see the module docstring); None: the approach reasons."""
    approach = plan(cfg).templates.approaches.get(item.get("approach"))
    if approach is None or not approach.answer_only:
        return None
    return LEAD_IN + TAGS + sum(len(str(m)) + PER_MEMBER for m in _union(item))


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def answer_grammar(cfg, item: dict, members: bool = False) -> dict:
    """``{"gbnf": …, "regex": …}``: the form of a set answer to ``item`` (see the module docstring). ``members``
    (answer format "members"): the members may only be members of A ∪ B (quoted or not) — the model chooses which,
    it cannot invent one; the empty set stays possible."""
    if members:
        union = [str(m) for m in _union(item)]
        if item.get("members") == "numbers":
            alts_g = [_gbnf_literal(m) for m in union]
            alts_r = [re.escape(m) for m in union]
        else:
            alts_g = [f"{_gbnf_literal(q + m + q)}" for m in union for q in ("'", "")]
            alts_r = [f"'?{re.escape(m)}'?" for m in union]
        member_g = " | ".join(alts_g) or '"∅"'
        member_r = "(?:" + "|".join(alts_r) + ")" if alts_r else "(?!)"
        more = max(0, len(union) - 1)   # never more members than A ∪ B has: a repeating model still closes the set
        gbnf = (f'root ::= "<answer>{{" (member ("," " "? member){{0,{more}}})? "}}</answer>"\n'
                f"member ::= {member_g}\n")
        regex = rf"<answer>\{{(?:{member_r}(?:, ?{member_r}){{0,{more}}})?\}}</answer>"
        return {"gbnf": gbnf, "regex": regex}
    if item.get("members") == "numbers":
        member_g = f'"-"? [0-9]{{1,{MAX_NUMBER_DIGITS}}}'
        member_r = f"-?[0-9]{{1,{MAX_NUMBER_DIGITS}}}"
    else:
        chars = "[^'\",{}<>\\n ]"             # GBNF and regex read this class alike (\n: a newline)
        body = chars + "{1,%d}" % MAX_WORD
        member_g = f"\"'\" {body} \"'\" | {body}"
        member_r = f"(?:'{body}'|{body})"
    gbnf = ('root ::= "<answer>{" (member ("," " "? member)*)? "}</answer>"\n'
            f"member ::= {member_g}\n")
    regex = rf"<answer>\{{(?:{member_r}(?:, ?{member_r})*)?\}}</answer>"
    return {"gbnf": gbnf, "regex": regex}
