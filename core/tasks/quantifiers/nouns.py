"""Noun groups for quantifier prompts: frequency bands, made-up nouns and the GQG pilot lists.

``load_noun_groups()`` reads the shipped file ``data/nouns/noun_groups.json`` (no wordfreq / WordNet needed at run
time). The file is produced by ``build()`` — run ``python -m core.tasks.quantifiers.nouns build`` (needs ``wordfreq``,
``english-words``, ``nltk`` and WordNet 3.0 as described in data/nouns/README.md); the result is deterministic.

Rules (see data/nouns/README.md for the numbers):
- Frequency groups: concrete, countable WordNet 3.0 nouns (hyponyms of artifact, natural object, animal, plant,
  geological formation; people excluded), one lower-case alphabetic word, pluralised (WordNet's irregular plural list,
  else regular English rules), plural ≠ singular, plural form attested in wordfreq and used by the prompt, so the
  band is judged on the plural's Zipf frequency (see BANDS: common ≥ 4.5, then 0.75-wide bands down to 1.5).
  Excluded: words whose most frequent noun sense is not such a thing ("issue", "kid"), plurals that read more as a
  verb form in WordNet's sense counts ("does", "changes"), plurals that are nouns of their own ("media", "goods"),
  and plurals far rarer than their singular (mass nouns, wrong plurals: "sheeps"). Inside a band, nouns are ordered by SHA-256 of the plural and the first PER_GROUP kept, in that
  order (so a config's ``nouns_per_group: k`` takes a fair, fixed subset).
- Made-up nouns: pronounceable pseudo-words from consonant–vowel syllables drawn with a fixed seed; neither the
  singular nor the plural is in the web2 word list, in WordNet, or known to wordfreq (Zipf 0); pluralised with the
  regular rules.
- The GQG pilot lists (Wang & Steinert-Threlkeld 2023, Appendix A and their generator's made-up list) are shipped
  verbatim as pilot_* groups for the paper's Figure 1 setup.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from functools import lru_cache
from pathlib import Path

from core.files import DATA_DIR

DATA_FILE = DATA_DIR / "nouns" / "noun_groups.json"

GROUP_ORDER = ("common", "less_common", "rare", "rarer", "rarest", "made_up")
# Zipf bands of the plural form, [low, high).
BANDS: dict[str, tuple[float, float]] = {
    "common": (4.5, 8.0),
    "less_common": (3.75, 4.5),
    "rare": (3.0, 3.75),
    "rarer": (2.25, 3.0),
    "rarest": (1.5, 2.25),
}
PER_GROUP = 20
MAX_PLURAL_DROP = 1.5  # plural at most this many Zipf units below the singular
EXCLUDED_WORDS = ("media",)  # reads as "the press", a mass noun, not as a plural of countable things
ROOT_SYNSETS = ("artifact.n.01", "natural_object.n.01", "animal.n.01", "plant.n.02", "geological_formation.n.01")
EXCLUDED_SYNSETS = ("person.n.01",)
MADE_UP_SEED = 20231206

# GQG frequency pilot (paper Appendix A) and the made-up nouns of its generator — verbatim.
PILOT_GROUPS: dict[str, tuple[str, ...]] = {
    "pilot_common": ("books", "chairs", "doors", "participants", "activities", "systems", "wars", "blocks", "words",
                     "reports"),
    "pilot_less_common": ("crowds", "negotiations", "cup holders", "arteries", "identifiers", "payrolls", "hostages",
                          "coupons", "remedies", "butterflies"),
    "pilot_rare": ("jaws", "turbines", "rooftops", "hikers", "purses", "empires", "insurers", "camels", "entitlements",
                   "coils"),
    "pilot_rarer": ("auroras", "borrowers", "fasteners", "headscarves", "hickories", "geneticists", "catapults",
                    "blurbs", "glaciers", "eyewitnesses"),
    "pilot_rarest": ("ocean basins", "jests", "lidars", "inequalities", "microchips", "humanoids", "philanthropies",
                     "medullas", "ornamentals", "jabs"),
    "pilot_made_up": ("blexes", "ptexes", "rangaloons", "treslings", "baroue", "questries", "sarphines", "zofonikl",
                      "arijkes", "bnouba"),
}


@lru_cache(maxsize=1)
def _load() -> dict:
    with open(DATA_FILE, encoding="utf-8") as fh:
        return json.load(fh)


def load_noun_groups() -> dict[str, tuple[str, ...]]:
    """group name -> plural nouns, for the groups in GROUP_ORDER followed by the pilot_* groups."""
    data = _load()
    groups = {g: tuple(e["noun"] for e in data["groups"][g]) for g in GROUP_ORDER}
    groups.update(PILOT_GROUPS)
    return groups


def noun_table() -> list[dict]:
    """Every shipped noun with its group, singular and Zipf frequency (for the UI / README)."""
    data = _load()
    return [{"group": g, **e} for g in GROUP_ORDER for e in data["groups"][g]]


def noun_group_info() -> dict:
    """Provenance and rules as stored with the data."""
    return {k: v for k, v in _load().items() if k != "groups"}


# ---------------------------------------------------------------------------------------------- building (offline)

def pluralise(word: str, irregular: dict[str, str] | None = None) -> str:
    """English plural: an irregular form when known, else the regular spelling rules."""
    if irregular and word in irregular:
        return irregular[word]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _sha(word: str) -> str:
    return hashlib.sha256(word.encode("utf-8")).hexdigest()


def _irregular_plurals(wn) -> dict[str, str]:
    """singular -> plural from WordNet's noun.exc (plural -> singular), keeping one plural per singular."""
    path = Path(wn.root.path if hasattr(wn.root, "path") else str(wn.root)) / "noun.exc"
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].isalpha() and parts[1].isalpha():
            plural, singular = parts[0], parts[1]
            if plural != singular and singular not in out:
                out[singular] = plural
    return out


def _sense_count(wn, word: str, pos: str) -> int:
    """How often ``word`` was tagged in the SemCor-based WordNet counts with part of speech ``pos``."""
    return sum(lemma.count() for s in wn.synsets(word, pos) for lemma in s.lemmas() if lemma.name() == word)


def _candidates(wn, zipf) -> list[dict]:
    excluded: set[str] = set()
    for name in EXCLUDED_SYNSETS:
        s = wn.synset(name)
        excluded.add(s.name())
        excluded.update(x.name() for x in s.closure(lambda t: t.hyponyms() + t.instance_hyponyms()))
    allowed: set[str] = set()
    lemmas: set[str] = set()
    for root in ROOT_SYNSETS:
        r = wn.synset(root)
        for s in [r, *r.closure(lambda t: t.hyponyms())]:
            if s.name() in excluded:
                continue
            allowed.add(s.name())
            for lemma in s.lemma_names():
                if lemma.isalpha() and lemma.islower() and 3 <= len(lemma) <= 14:
                    lemmas.add(lemma)
    irregular = _irregular_plurals(wn)
    out = []
    for singular in sorted(lemmas):
        # the word's most frequent noun sense must be a concrete thing (not e.g. "issue", "kid", "hand")
        if wn.synsets(singular, "n")[0].name() not in allowed:
            continue
        plural = pluralise(singular, irregular)
        if plural == singular or plural in EXCLUDED_WORDS:
            continue
        # the plural must not be a noun of its own ("media", "goods", "alps")
        if any(lemma.name().lower() == plural for s in wn.synsets(plural, "n") for lemma in s.lemmas()):
            continue
        # the plural must read as a noun rather than a verb form ("does", "changes", "plans")
        noun_count = _sense_count(wn, singular, "n")
        verb_count = sum(_sense_count(wn, base, "v") for base in wn._morphy(plural, "v"))
        if verb_count > noun_count:
            continue
        z_plural, z_singular = zipf(plural, "en"), zipf(singular, "en")
        # a rarely pluralised (mass) noun or a wrong plural ("sheeps", "stuffings") is no fair countable object
        if z_plural < z_singular - MAX_PLURAL_DROP:
            continue
        if any(o["noun"] == plural for o in out[-3:]):
            continue  # two spellings of one word ("adz", "adze" → "adzes")
        out.append({"noun": plural, "singular": singular, "zipf": z_plural})
    return out


def _made_up(n: int, known_words: set[str], wn_lemmas: set[str], zipf) -> list[dict]:
    first = ["b", "bl", "br", "d", "dr", "f", "fl", "fr", "g", "gl", "gr", "k", "kl", "kr", "l", "m", "n", "p",
             "pl", "pr", "r", "s", "sl", "sn", "sp", "st", "t", "tr", "v", "z"]
    inner = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"]
    vowels = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "u", "ai", "oo", "ee"]
    codas = ["", "", "n", "m", "l", "r", "k", "p", "t", "x"]
    rng = random.Random(MADE_UP_SEED)
    out: list[dict] = []
    seen: set[str] = set()
    while len(out) < n:
        syllables = rng.choice((2, 2, 3))
        word = (rng.choice(first) + rng.choice(vowels)
                + "".join(rng.choice(inner) + rng.choice(vowels) for _ in range(syllables - 1)) + rng.choice(codas))
        if word in seen or not 5 <= len(word) <= 10:
            continue
        seen.add(word)
        plural = pluralise(word)
        if (word in known_words or plural in known_words or word in wn_lemmas or plural in wn_lemmas
                or zipf(word, "en") > 0 or zipf(plural, "en") > 0):
            continue
        out.append({"noun": plural, "singular": word, "zipf": 0.0})
    return out


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def build(out_path: Path = DATA_FILE) -> dict:
    """Build data/nouns/noun_groups.json (deterministic). Needs wordfreq, english-words, nltk + WordNet 3.0."""
    import wordfreq
    from english_words import get_english_words_set
    from nltk.corpus import wordnet as wn

    zipf = wordfreq.zipf_frequency
    cands = _candidates(wn, zipf)
    groups: dict[str, list[dict]] = {}
    counts: dict[str, int] = {}
    for g, (lo, hi) in BANDS.items():
        band = [c for c in cands if lo <= c["zipf"] < hi]
        counts[g] = len(band)
        band.sort(key=lambda c: _sha(c["noun"]))
        groups[g] = band[:PER_GROUP]  # kept in this (pseudo-random) order: the first k form a fair subset
    known = set(get_english_words_set(["web2"], lower=True))
    wn_lemmas = {lemma.lower() for lemma in wn.all_lemma_names(pos="n")}
    groups["made_up"] = _made_up(PER_GROUP, known, wn_lemmas, zipf)
    for entries in groups.values():
        for e in entries:
            e["zipf"] = round(float(e["zipf"]), 2)
    data = {
        "description": "Noun groups for quantifier prompts; built by `python -m core.tasks.quantifiers.nouns build`.",
        "wordfreq_version": _version("wordfreq"),
        "english_words_version": _version("english-words"),
        "nltk_version": _version("nltk"),
        "wordnet_version": wn.get_version(),
        "zipf_bands": {g: list(b) for g, b in BANDS.items()},
        "root_synsets": list(ROOT_SYNSETS),
        "excluded_synsets": list(EXCLUDED_SYNSETS),
        "excluded_words": list(EXCLUDED_WORDS),
        "max_plural_drop": MAX_PLURAL_DROP,
        "per_group": PER_GROUP,
        "candidates": len(cands),
        "candidates_per_band": counts,
        "made_up_seed": MADE_UP_SEED,
        "groups": groups,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data


if __name__ == "__main__":  # python -m core.tasks.quantifiers.nouns build
    if sys.argv[1:] != ["build"]:
        print("usage: python -m core.tasks.quantifiers.nouns build", file=sys.stderr)
        sys.exit(2)
    d = build()
    print(f"wrote {DATA_FILE}: " + ", ".join(f"{g} {len(v)}" for g, v in d["groups"].items())
          + f" (candidates {d['candidates']}, per band {d['candidates_per_band']})")
