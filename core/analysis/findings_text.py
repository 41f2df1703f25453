"""The findings in words: one sentence per contrast — whose verdict (the model and its pooled runs), direction,
size, interval, the independent units and matched strata, p and its Holm family, the spread, the paper's number —
and one line per contrast the runs cannot answer, with the reason."""

from __future__ import annotations


def level_text(factor: str, v) -> str:
    """A level as people read it (``overlapping`` and levels of derived columns as words)."""
    from core.analysis.figures import level_text as figure_level

    if factor == "overlapping":
        return str(v).replace("_", " ")
    return figure_level(factor, v)


def _p(p, adjusted: bool) -> str:
    if p is None:
        return "p not defined"
    word = "adjusted p" if adjusted else "p"
    return f"{word} < 0.001" if p < 0.001 else f"{word} = {p:.3f}"


def _where(c: dict) -> str:
    if not c.get("within"):
        return ""
    return " (" + ", ".join(f"decile {v}" if k == "decile" else f"k = {v}" if k == "shots" else level_text(k, v)
                            for k, v in c["within"].items()) + ")"


def _units(c: dict) -> str:
    if c.get("design", "").startswith("paired"):
        how = f"paired over {c['n']} draw{'s' if c['n'] != 1 else ''}"
    else:
        how = f"between draws, {c['n_a']} vs {c['n_b']} draw{'s' if c['n_b'] != 1 else ''}"
        if c.get("draw_strata", 1) > 1:
            how += f" in {c['draw_strata']} draw strata"
    return f"{how} (matched {c['strata_matched']} of {c['strata_total']} strata)"


def verdict(fd: dict, c: dict, alpha: float) -> str:
    """One sentence a person can read."""
    factor = fd["factor"]
    a, b = level_text(factor, c["a"]), level_text(factor, c["b"])
    who = f"{c['model']}: " if c.get("model") else ""
    est = c.get("estimate")
    if est is None:
        return f"{who}{a} vs {b}{_where(c)}: no estimate ({c.get('caveat') or c.get('reason') or 'no data'})."
    if est == 0:
        size = f"{a} and {b} score the same on average"
    else:   # the word follows the estimate's sign, however small (the interval and the test read the same way)
        by = f"{abs(est):.1f} points" if abs(est) >= 0.05 else "less than 0.1 points"
        size = f"{a} {'beats' if est > 0 else 'trails'} {b} by {by}"
    if c.get("testable") is False:
        text = f"{who}{size}{_where(c)}, {_units(c)}: {c.get('caveat') or 'too few draws to test'}"
    else:
        ci = (f" [{c['ci_low']:.1f}, {c['ci_high']:.1f}]"
              if c.get("ci_low") is not None and c.get("ci_high") is not None else "")
        sig = "significant" if c.get("significant") else "not significant"
        family = c.get("family")
        holm = (f"Holm over the {c.get('family_size', 1)} contrast(s) of {family}" if family else "")
        text = (f"{who}{size}{_where(c)}{ci}, {_units(c)}, {_p(c.get('p'), False)}"
                f"{'; ' + holm + ': ' + _p(c.get('p_adjusted'), True) if holm else ''} ({sig} at α = {alpha:g})")
        if (not c.get("significant") and c.get("p_adjusted") is not None and c["p_adjusted"] < alpha
                and c.get("ci_low") is not None and c["ci_low"] <= 0 <= c["ci_high"]):
            text += " — the test and the interval disagree, so it is not declared"
    sp = c.get("spread") or {}
    if sp.get("std_a") is not None and sp.get("std_b") is not None:
        text += f"; spread over configurations (std) {sp['std_a']:.1f} vs {sp['std_b']:.1f}"
        if sp.get("p") is not None:
            text += ", Brown–Forsythe p " + ("< 0.001" if sp["p"] < 0.001 else f"= {sp['p']:.3f}")
    if c.get("paper_estimate") is not None:
        text += f" — paper: {c['paper_estimate']:+.1f} points"
    notes = [n for n in (c.get("caveat"), (c.get("spread") or {}).get("caveat")) if n and n not in text]
    if c.get("testable") is not False and c.get("n") is not None and c["n"] < 10:
        notes.append("few draws: the interval understates the uncertainty")
    for model, runs in (c.get("pooled") or {}).items():
        notes.append(f"runs of {model} pooled: " + ", ".join(runs))
    if notes:
        text += f" ({'; '.join(notes)})"
    if factor == "model":   # a level is a model's name: written as it is
        return text + "."
    return who + text[len(who):][:1].upper() + text[len(who) + 1:] + "."


def verdict_lines(fd: dict, alpha: float) -> list[dict]:
    """Every sentence of a finding as {"model", "text"} (the text without the model's name; model None for a line
    about the whole finding): its contrasts, then what it could not answer (per model)."""
    if not fd["applicable"]:
        return [{"model": None, "text": f"Not answerable from these runs: {', '.join(map(str, fd['missing']))}."}]
    out = []
    for c in fd["contrasts"]:
        text = verdict(fd, c, alpha)
        who = f"{c['model']}: " if c.get("model") else ""
        out.append({"model": c.get("model"), "text": text[len(who):]})
    factor = fd["factor"]
    for u in fd.get("unanswered", []):
        text = (f"{level_text(factor, u['a'])} vs {level_text(factor, u['b'])}{_where(u)}: not answerable "
                f"({u['reason']}).")
        out.append({"model": u.get("model"), "text": text[:1].upper() + text[1:]})
    if fd.get("secondary_to"):
        out.append({"model": None, "text": f"Secondary: these split the pooled contrast of {fd['secondary_to']}; "
                                            "they are their own Holm family and do not re-test it."})
    return out


def verdicts(fd: dict, alpha: float) -> list[str]:
    """``verdict_lines`` as plain sentences, each named by its model."""
    return [f"{x['model']}: {x['text']}" if x["model"] else x["text"] for x in verdict_lines(fd, alpha)]
