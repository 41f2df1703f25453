"""Shipped noun groups: sizes, frequency bands, made-up nouns are not words, deterministic build."""

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import wordfreq

from core.tasks import quantifiers as Q
from core.tasks.quantifiers import nouns as NG
from tests.support import ROOT


def test_groups_and_sizes():
    groups = NG.load_noun_groups()
    for g in NG.GROUP_ORDER:
        assert len(groups[g]) == NG.PER_GROUP, g
        assert len(set(groups[g])) == NG.PER_GROUP
    for g, words in NG.PILOT_GROUPS.items():
        assert groups[g] == words and len(words) == 10
    info = NG.noun_group_info()
    assert info["zipf_bands"] == {g: list(b) for g, b in NG.BANDS.items()}


def test_frequency_bands_hold_with_installed_wordfreq():
    for row in NG.noun_table():
        if row["group"] == "made_up":
            continue
        lo, hi = NG.BANDS[row["group"]]
        z = wordfreq.zipf_frequency(row["noun"], "en")
        assert lo <= z < hi, row
        assert abs(z - row["zipf"]) < 0.01


def test_groups_are_ordered_by_frequency():
    table = NG.noun_table()
    means = [sum(r["zipf"] for r in table if r["group"] == g) / NG.PER_GROUP for g in NG.GROUP_ORDER]
    assert means == sorted(means, reverse=True)


def test_made_up_nouns_are_not_words_and_pluralised():
    from english_words import get_english_words_set

    web2 = get_english_words_set(["web2"], lower=True)
    for row in NG.noun_table():
        if row["group"] != "made_up":
            continue
        noun, singular = row["noun"], row["singular"]
        assert re.fullmatch(r"[a-z]+", noun)
        assert noun == NG.pluralise(singular) and noun.endswith("s")
        assert noun not in web2 and singular not in web2
        assert wordfreq.zipf_frequency(noun, "en") == 0 and wordfreq.zipf_frequency(singular, "en") == 0
        # pronounceable: no run of more than two consonants, vowels present in every syllable-sized chunk
        assert not re.search(r"[^aeiou]{3}", singular), singular


def test_pluralise_rules():
    assert NG.pluralise("box") == "boxes"
    assert NG.pluralise("bench") == "benches"
    assert NG.pluralise("puppy") == "puppies"
    assert NG.pluralise("toy") == "toys"
    assert NG.pluralise("shelf", {"shelf": "shelves"}) == "shelves"
    assert NG.pluralise("drozugox") == "drozugoxes"


def test_noun_groups_in_configs():
    cfg = Q.load_config({"noun_groups": ["common", "made-up", "less common"], "nouns_per_group": 3,
                         "quantifiers": ["all"]})
    groups = NG.load_noun_groups()
    assert [n for n, _ in cfg.nouns] == [*groups["common"][:3], *groups["made_up"][:3], *groups["less_common"][:3]]
    it = Q.item(cfg, 0)
    assert it["noun_group"] == "common" and it["object"] == groups["common"][0]
    # a noun in two groups (books: common and GQG pilot) is allowed; its cells stay apart by noun_group
    both = Q.load_config({"noun_groups": ["common", "pilot_common"], "quantifiers": ["all"], "total": 2})
    ids = {(it["object"], it["noun_group"]): it["config_id"] for it in Q.items(both)}
    assert ids[("books", "common")] != ids[("books", "pilot_common")]


def _wordnet_dir(tmp_path: Path) -> Path | None:
    src = Path("/usr/share/wordnet")
    lexnames_gz = Path("/usr/share/man/man5/lexnames.5WN.gz")
    if not (src / "data.noun").exists() or not lexnames_gz.exists():
        return None
    dst = tmp_path / "nltk_data" / "corpora" / "wordnet"
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.name.startswith(("data.", "index.")) or f.suffix == ".exc" or f.name == "cntlist.rev":
            shutil.copy(f, dst / f.name)
    lines = []
    for line in gzip.open(lexnames_gz, "rt", encoding="utf-8", errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 2 and re.fullmatch(r"[0-9]{2}", parts[0]):
            name = parts[1].rstrip()
            pos = {"noun": 1, "verb": 2, "adj": 3}.get(name.split(".")[0], 4)
            lines.append(f"{parts[0]}\t{name}\t{pos}\n")
    (dst / "lexnames").write_text("".join(lines), encoding="utf-8")
    return tmp_path / "nltk_data"


@pytest.mark.slow
def test_build_reproduces_shipped_file(tmp_path):
    data = _wordnet_dir(tmp_path)
    if data is None:
        pytest.skip("WordNet 3.0 (Debian wordnet-base) not installed")
    out = tmp_path / "noun_groups.json"
    code = f"from pathlib import Path; from core.tasks.quantifiers.nouns import build; build(Path({str(out)!r}))"
    env = {**os.environ, "NLTK_DATA": str(data), "PYTHONHASHSEED": "123"}
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=600)
    shipped = NG.DATA_FILE.read_bytes()
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(shipped).hexdigest()
