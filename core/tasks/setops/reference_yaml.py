"""The SetLexSem reference's experiment YAML (``configs/experiments/*.yaml``), translated to our config.

``core.config.run_spec`` calls :func:`translate` for any document holding the reference's upper-case keys, so
``generate``, ``run``, the pages and resume all accept such a file as it is. The translation follows the code of
the paper era (the first public commit): one list ``M`` gives |A| = |B| = m (``M_A`` + ``M_B``, a later addition,
are crossed), overlap applies only to the ``overlapping_*`` set types, ``N`` is the number range only when
``ITEM_LEN`` is ``None``. What we cannot honour exactly becomes one ``note`` line each (the CLI prints them, the
pages show them); what we cannot run at all is a ``ConfigError`` naming the key.

    is_reference(doc) -> bool
    translate(doc) -> Translation(config, model, name, notes)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.errors import ConfigError
from core.tasks.setops import aliases

# every key the reference's read_config knows (paper era + later additions)
REFERENCE_KEYS = (
    "STUDY_NAME", "N_RUN", "LOAD_GENERATED_DATA", "RANDOM_SEED_VAL", "OP_LIST", "MODEL_NAME", "SET_TYPES", "N", "M",
    "M_A", "M_B", "ITEM_LEN", "OVERLAP_FRACTION", "DECILE_NUM", "K_SHOT", "PROMPT_TYPE", "PROMPT_APPROACH",
    "IS_FIX_SHOT", "SWAP_STATUS",
)
_REQUIRED = ("N_RUN", "RANDOM_SEED_VAL", "OP_LIST", "SET_TYPES", "K_SHOT", "PROMPT_TYPE", "PROMPT_APPROACH")
_OVERLAPPING = {"overlapping_basicnumbersampler": "numbers", "overlapping_basicwordsampler": "words"}


@dataclass(frozen=True)
class Translation:
    config: dict                       # our setops config mapping (validated later by Config.from_dict)
    model: str | None = None           # our model spec for MODEL_NAME, when we have that provider
    name: str | None = None            # STUDY_NAME (a run label)
    notes: tuple[str, ...] = field(default=())


def is_reference(doc) -> bool:
    """True when ``doc`` is written in the reference's experiment-YAML keys."""
    return isinstance(doc, dict) and any(k in REFERENCE_KEYS for k in doc)


def _none(v) -> bool:
    # the reference's YAML writes None as the *string* "None"; its replace_none maps it to Python None
    return v is None or (isinstance(v, str) and v.strip().lower() in ("none", "null", ""))


def _values(doc: dict, key: str, default=None) -> list:
    if key not in doc:
        if default is None:
            raise ConfigError(f"reference config: {key} is missing")
        return list(default)
    v = doc[key]
    values = list(v) if isinstance(v, (list, tuple)) else [v]
    if not values:
        raise ConfigError(f"reference config: {key} must not be empty")
    return [None if _none(x) else x for x in values]


def _one(doc: dict, key: str):
    v = doc.get(key)
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise ConfigError(f"reference config: {key} must be one value, not {len(v)}")
        v = v[0]
    return v


def _bools(values: list, key: str) -> list[bool]:
    out = []
    for v in values:
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            v = v.strip().lower() == "true"
        if not isinstance(v, bool):
            raise ConfigError(f"reference config: {key} values must be True or False, not {v!r}")
        out.append(v)
    return list(dict.fromkeys(out))


def model_spec(model_name) -> str | None:
    """Our model spec for a reference MODEL_NAME (Bedrock ids of Claude, OpenAI names), None when we have no
    provider for it (Mistral, Llama and Nova ran on Bedrock)."""
    if _none(model_name) or not isinstance(model_name, str):
        return None
    name = model_name.strip()
    m = re.fullmatch(r"(?:[a-z]{2}\.)?anthropic\.(claude-[A-Za-z0-9.\-]+?)(?:-v\d+(?::\d+)?)?", name)
    if m:
        return f"anthropic/{m.group(1)}"
    if re.fullmatch(r"(?:gpt-|o\d)[A-Za-z0-9.\-]*", name):
        return f"openai/{name}"
    return None


def _members(set_types: list) -> tuple[list[str], bool]:
    """(our member types, whether they are the overlapping_* samplers)."""
    members, overlapping = [], []
    for t in set_types:
        if not isinstance(t, str):
            raise ConfigError(f"reference config: SET_TYPES value {t!r} is not a set type")
        low = t.strip().lower()
        if low in _OVERLAPPING:
            members.append(_OVERLAPPING[low])
            overlapping.append(True)
            continue
        ours = aliases.canonical("members", t)
        if ours not in ("numbers", "words", "deciles", "deceptive"):
            raise ConfigError(f"reference config: SET_TYPES value {t!r} is not one of numbers, words, decile_words, "
                              "deceptive_words, overlapping_BasicNumberSampler, overlapping_BasicWordSampler")
        members.append(ours)
        overlapping.append(False)
    if any(overlapping) and not all(overlapping):
        raise ConfigError("reference config: SET_TYPES mixes overlapping_* with other set types; this tool crosses "
                          "overlap with every set type, so put them in two files")
    return list(dict.fromkeys(members)), bool(overlapping and overlapping[0])


def translate(doc: dict) -> Translation:
    """Our config for a reference experiment YAML (raises ConfigError with one line for what cannot run)."""
    unknown = [k for k in doc if k.isupper() and k not in REFERENCE_KEYS]
    if unknown:
        raise ConfigError(f"reference config: unknown key {unknown[0]!r} (known: {', '.join(REFERENCE_KEYS)})")
    for key in _REQUIRED:
        if key not in doc:
            raise ConfigError(f"reference config: {key} is missing")
    notes: list[str] = []
    ours = {k: v for k, v in doc.items() if not k.isupper()}   # our own keys may be added; they win
    cfg: dict = {"task": "setops", "samples": doc["N_RUN"], "seed": doc["RANDOM_SEED_VAL"]}

    members, overlapping = _members(_values(doc, "SET_TYPES"))
    cfg["members"] = members
    cfg["operations"] = _values(doc, "OP_LIST")

    if "M" in doc:
        if "M_A" in doc or "M_B" in doc:
            raise ConfigError("reference config: give either M or M_A + M_B, not both")
        cfg["sizes"] = _values(doc, "M")
    elif "M_A" in doc and "M_B" in doc:
        cfg["sizes_a"], cfg["sizes_b"] = _values(doc, "M_A"), _values(doc, "M_B")   # crossed, as the reference does
    else:
        raise ConfigError("reference config: M (or M_A and M_B) is missing")
    for key in ("sizes", "sizes_a", "sizes_b"):
        if None in cfg.get(key, ()):
            raise ConfigError(f"reference config: {key.upper().replace('SIZES', 'M')} must list set sizes, not None")

    lengths = _values(doc, "ITEM_LEN", [None])
    n_values = [v for v in _values(doc, "N", [None]) if v is not None]
    if "deceptive" in members and any(v is not None for v in lengths):
        notes.append("ITEM_LEN does not apply to deceptive_words (the reference's deceptive sampler ignores it too)")
    cfg["lengths"] = lengths
    if None in lengths and ("numbers" in members or "words" in members):
        if "numbers" in members:
            if len(set(n_values)) > 1:
                raise ConfigError("reference config: N lists several number ranges; this tool takes one per config "
                                  "(number_max), so put them in separate files")
            if n_values:
                cfg["number_max"] = n_values[0]
        if "words" in members:
            notes.append("words with ITEM_LEN None: the reference drew from a random subset of N words; here every "
                         "word of the list is used")

    overlaps = [v for v in _values(doc, "OVERLAP_FRACTION", [None]) if v is not None]
    if overlapping:
        fractions = []
        for v in overlaps:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"reference config: OVERLAP_FRACTION value {v!r} is not a fraction")
            fractions.append(float(v))
        cfg["overlap"] = fractions or [None]
    elif overlaps:
        notes.append("OVERLAP_FRACTION is ignored: the reference applies it only to the overlapping_* set types")

    deciles = [v for v in _values(doc, "DECILE_NUM", [None]) if v is not None]
    if "deciles" in members:
        if not deciles:
            raise ConfigError("reference config: SET_TYPES decile_words needs DECILE_NUM values (1-10)")
        cfg["deciles"] = deciles
        cfg["decile_mode"] = ["log_width"]   # the reference's bins: equal widths of normalised log counts
        if "frequency_source" not in ours:
            notes.append("decile_words: log-width deciles over wordfreq counts; the reference binned Google Books "
                         "2008 counts (set frequency_source to a word,count file to use those)")
    elif deciles:
        notes.append("DECILE_NUM is ignored: it applies only to decile_words")

    cfg["shots"] = _values(doc, "K_SHOT")
    cfg["phrasings"] = _values(doc, "PROMPT_TYPE")
    cfg["approaches"] = _values(doc, "PROMPT_APPROACH")
    fixed = _bools(_values(doc, "IS_FIX_SHOT", [True]), "IS_FIX_SHOT")
    if len(fixed) > 1:
        raise ConfigError("reference config: IS_FIX_SHOT lists both True and False; this tool takes one value per "
                          "config, so put them in separate files")
    cfg["fixed_shots"] = fixed[0]

    study = _one(doc, "STUDY_NAME")
    study = None if _none(study) else str(study)
    if "deceptive" in members:
        if "SWAP_STATUS" in doc and not all(v is None for v in _values(doc, "SWAP_STATUS")):
            swaps = _bools([v for v in _values(doc, "SWAP_STATUS") if v is not None], "SWAP_STATUS")
            cfg["conditions"] = ["swapped" if s else "not_swapped" for s in swaps]
        else:
            # the paper-era code hard-coded the swap; its analysis names the condition by the study
            swapped = not (study and "noswap" in study.lower())
            cfg["conditions"] = ["swapped" if swapped else "not_swapped"]
            notes.append(f"SWAP_STATUS absent: condition {cfg['conditions'][0]!r} taken from STUDY_NAME "
                         f"{study!r}, as the reference's analysis labels its deceptive studies")
    if _one(doc, "LOAD_GENERATED_DATA") in (True, "True", "true"):
        notes.append("LOAD_GENERATED_DATA: the reference read pre-generated pairs (not published); the pairs here "
                     f"are drawn from seed {doc['RANDOM_SEED_VAL']} - the same distribution, not the same pairs")

    model_name = _one(doc, "MODEL_NAME")
    model = model_spec(model_name)
    if model_name is not None and not _none(model_name) and model is None:
        notes.append(f"MODEL_NAME {model_name!r} has no provider here; pass a model (--model)")
    cfg.update(ours)
    return Translation(cfg, model, study, tuple(notes))
