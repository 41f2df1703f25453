"""How a quantifier reply ends and what form it has (see core/tasks/setops/answers.py for the set task).

The GQG prompts ask for "only one word, true or false": no stop sequence is needed (the word is the answer); an
answer-only reply gets a cap of ``ONE_WORD_CAP`` tokens — room for the word, punctuation and a short lead-in — when
the template asks for one word (every named template does; a custom template that asks for more gets none).
Constrained decoding allows exactly ``true`` or ``false``, as GQG's own evaluation constrained the Pythia models'
output to the two words.
"""

from __future__ import annotations

STOP: tuple[str, ...] = ()
ONE_WORD_CAP = 16


def reply_cap(cfg, item: dict) -> int | None:
    return ONE_WORD_CAP if "one word" in cfg.template_text.lower() else None


def answer_grammar(cfg, item: dict, members: bool = False) -> dict:
    return {"gbnf": 'root ::= "true" | "false"\n', "regex": "(?:true|false)"}
