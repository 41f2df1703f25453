"""The hyponym-group builder, run for real over a tiny WordNet written here in WNDB format (read by NLTK's
WordNetCorpusReader) and, when the `wn` package is installed, as a tiny WN-LMF file."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.lexicon import hyponyms as H, wordnet_build as wb
from tests.support import ROOT

# (key, lemmas, gloss, hyponym keys) — a small noun hierarchy exercising every cleaning rule.
TINY = [
    ("entity", ["entity"], "that which exists", ["organism", "relative"]),
    ("organism", ["organism", "being"], "a living thing", ["dog", "cat", "bird"]),
    # 'dog' reaches its breeds only through a synset whose lemmas are all multi-word: two identical member sets
    ("dog", ["dog", "domestic_dog", "Canis_familiaris"], "a domesticated canine", ["hunting_dog"]),
    ("hunting_dog", ["hunting_dog"], "a dog used in hunting", ["beagle", "pointer", "setter", "hound", "terrier"]),
    ("beagle", ["beagle"], "a small hound", []),
    ("pointer", ["pointer", "Spanish_pointer"], "a pointing dog", []),
    ("setter", ["setter"], "a long-haired dog", []),
    ("hound", ["hound", "hound_dog", "foxhound"], "a hunting dog with a keen nose", []),  # foxhound ⊃ hound
    ("terrier", ["terrier", "Jack-Russell"], "a small active dog", []),  # hyphenated lemma dropped
    ("cat", ["cat", "true_cat"], "a feline mammal", ["tabby", "tabby2", "siamese", "manx"]),
    ("tabby", ["tabby", "tabby_cat"], "a cat with a striped coat", []),
    ("tabby2", ["tabby", "queen"], "a female domestic cat", []),  # 'tabby' again: one member only
    ("siamese", ["Siamese", "Siamese_cat"], "a slender short-haired cat", []),  # upper case -> lower case
    ("manx", ["Manx", "Manx_cat", "cat"], "a tailless cat", []),  # 'cat' is the hypernym's own lemma
    ("bird", ["bird"], "a warm-blooded egg-laying vertebrate", ["robin", "wren"]),  # 3 members: too small
    ("robin", ["robin", "redbreast"], "a thrush", []),
    ("wren", ["wren"], "a small songbird", []),
    ("relative", ["relative", "relation"], "a person related by blood or marriage", ["grandparent"]),
    ("grandparent", ["grandparent"], "a parent of your father or mother", ["grandfather", "grandmother"]),
    # spelling variants inside one synset: substring or edit distance < 3 are dropped, WordNet order kept
    ("grandfather", ["grandfather", "gramps", "grandad", "granddad", "granddaddy", "grandpa"], "a father's father",
     []),
    ("grandmother", ["grandmother", "grandma", "granny", "grannie", "gran", "nan", "nanna"], "a mother's mother",
     []),
]


def write_wndb(directory: Path, synsets=TINY) -> Path:
    """Write data.noun and index.noun with correct byte offsets (what NLTK seeks to)."""
    directory.mkdir(parents=True, exist_ok=True)
    header = "  1 A tiny WordNet written by the SetLexSem Studio tests.\n"
    keys = [k for k, *_ in synsets]
    hypernyms = {k: [] for k in keys}
    for k, _, _, hypos in synsets:
        for h in hypos:
            hypernyms[h].append(k)

    def line(k, lemmas, gloss, hypos, offsets):
        ptrs = [f"@ {offsets[p]:08d} n 0000" for p in hypernyms[k]] + [f"~ {offsets[h]:08d} n 0000" for h in hypos]
        words = " ".join(f"{w} 0" for w in lemmas)
        return f"{offsets[k]:08d} 03 n {len(lemmas):02x} {words} {len(ptrs):03d} {' '.join(ptrs)} | {gloss}  \n"

    zero = {k: 0 for k in keys}
    offsets, pos = {}, len(header.encode())
    for k, lemmas, gloss, hypos in synsets:  # offsets are fixed-width, so one pass with zeros gives the lengths
        offsets[k] = pos
        pos += len(line(k, lemmas, gloss, hypos, zero).encode())
    (directory / "data.noun").write_text(header + "".join(line(*s, offsets) for s in synsets))
    senses = {}
    for k, lemmas, _, _ in synsets:
        for w in lemmas:
            senses.setdefault(w.lower(), []).append(offsets[k])
    index = "".join(f"{w} n {len(o)} 0 {len(o)} 0 {' '.join(f'{x:08d}' for x in o)}  \n" for w, o in sorted(senses.items()))
    (directory / "index.noun").write_text(header + index)
    return directory


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return write_wndb(tmp_path_factory.mktemp("wndb") / "wordnet")


@pytest.fixture(scope="module")
def tiny_groups(tiny_dir):
    reader, close = wb.open_nltk_wordnet(str(tiny_dir))
    try:
        assert reader.synset("dog.n.01").lemma_names()[0] == "dog"  # NLTK really read our files
        yield wb.build(reader, min_size=4, max_size=8)
    finally:
        close()


def by_synset(groups):
    return {g.synset: g for g in groups}


def test_cleaning_of_one_synsets_lemmas():
    # granddad/grandpa are within distance 2 of grandad; granddaddy is 3 edits away from grandad, so it stays
    assert wb.clean_lemmas(["grandfather", "gramps", "grandad", "granddad", "granddaddy", "grandpa"]) == (
        "grandfather", "gramps", "grandad", "granddaddy")
    # gran is a substring of grandmother, nanna contains nan, grannie is 2 edits from granny
    assert wb.clean_lemmas(["grandmother", "grandma", "granny", "grannie", "gran", "nan", "nanna"]) == (
        "grandmother", "grandma", "granny", "nan")
    assert wb.clean_lemmas(["hound", "hound_dog", "foxhound"]) == ("hound",)
    assert wb.clean_lemmas(["Siamese", "Siamese_cat", "x-ray", "o'clock", "3D", "siamese"]) == ("siamese",)
    assert wb.clean_lemmas(["granny", "grannie"], min_edit_distance=3) == ("granny",)
    assert wb.clean_lemmas(["granny", "grannie"], min_edit_distance=2) == ("granny", "grannie")


def test_groups_from_a_tiny_wordnet(tiny_groups):
    groups, counts = tiny_groups
    g = by_synset(groups)
    # hunting_dog (more specific) wins over dog for the identical member set
    assert g["hunting_dog.n.01"].members == ("beagle", "hound", "pointer", "setter", "terrier")
    assert "dog.n.01" not in g
    assert counts["dropped_duplicate_member_sets"] == 1
    # duplicate 'tabby' merged, upper case lowered, the hypernym's own lemma 'cat' excluded
    assert g["cat.n.01"].members == ("manx", "queen", "siamese", "tabby")
    assert g["cat.n.01"].name == "cat" and g["cat.n.01"].gloss == "a feline mammal"
    assert g["grandparent.n.01"].members == ("gramps", "grandad", "granddaddy", "grandfather", "grandma",
                                              "grandmother", "granny", "nan")
    # bird has 3 members (< min_size); organism and entity have more than max_size=8 (too generic)
    assert "bird.n.01" not in g and "organism.n.01" not in g and "entity.n.01" not in g
    assert set(g) == {"hunting_dog.n.01", "cat.n.01", "grandparent.n.01"}
    assert counts["groups"] == 3 and counts["dropped_too_small"] >= 1 and counts["dropped_too_generic"] >= 2
    for group in groups:
        assert list(group.members) == sorted(set(group.members))


def test_max_size_and_min_size_are_honoured(tiny_dir):
    reader, close = wb.open_nltk_wordnet(str(tiny_dir))
    try:
        big = by_synset(wb.build_groups(reader, min_size=2, max_size=30))
    finally:
        close()
    assert big["bird.n.01"].members == ("redbreast", "robin", "wren")  # 3 members: dropped with min_size 4 only
    assert "organism.n.01" in big and len(big["organism.n.01"].members) <= 30
    assert "entity.n.01" in big


def test_written_file_round_trips_and_loads_without_wordnet(tiny_groups, tmp_path):
    groups, counts = tiny_groups
    out = tmp_path / "groups.json.gz"
    H.write_groups(groups, out, {"source": {"wordnet": "tiny"}, "rules": wb.rules("n", 4, 8, 3), "counts": counts})
    loaded = H.load_groups(out)
    assert loaded == groups and {g.pos for g in loaded} == {"noun"}
    assert H.load_metadata(out)["counts"]["groups"] == 3
    assert H.hyponym_vocabulary(loaded) == tuple(sorted({m for g in groups for m in g.members}))
    cat, grand = H.group_by_synset("cat.n.01", out), H.group_by_synset("grandparent.n.01", out)
    assert H.disjoint(cat, grand)
    assert [g.synset for g in H.groups_with_at_least(5, out)] == ["grandparent.n.01", "hunting_dog.n.01"]
    with gzip.open(out, "rt") as fh:
        assert json.load(fh)["format"] == H.FORMAT


def run_cli(*args, seed="0"):
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_cli_output_is_byte_identical_across_hash_seeds(tiny_dir, tmp_path):
    outs = []
    for seed in ("1", "4242"):
        out = tmp_path / f"g{seed}.json.gz"
        r = run_cli("build-hyponyms", "--wordnet-dir", str(tiny_dir), "--out", str(out), "--max-size", "8", seed=seed)
        assert r.returncode == 0, r.stderr
        assert "wrote 4 groups (4 noun;" in r.stdout   # bird's 3 members are enough with the default min size 2
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.slow
def test_cli_errors_are_one_clear_line(tmp_path):
    r = run_cli("build-hyponyms", "--wordnet-dir", str(tmp_path), "--out", str(tmp_path / "x.json.gz"))
    assert r.returncode == 2
    assert r.stderr.startswith("error: no WordNet database") and "Traceback" not in r.stderr
    assert not (tmp_path / "x.json.gz").exists()
    r = run_cli("build-hyponyms", "--backend", "wn", "--out", str(tmp_path / "x.json.gz"))
    assert r.returncode == 2 and "--lexicon" in r.stderr and "Traceback" not in r.stderr


def test_damaged_wordnet_is_a_clear_error(tmp_path):
    from core.errors import UserError

    (tmp_path / "data.noun").write_text("00000000 03 n 01 dog 0 000 | a dog  \n")
    (tmp_path / "index.noun").write_text("dog n one 0 1 0 00000000  \n")
    with pytest.raises(UserError, match="cannot read WordNet"):
        wb.open_nltk_wordnet(str(tmp_path))


def test_bad_groups_file_is_a_clear_error(tmp_path):
    from core.errors import ImportFileError

    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(ImportFileError):
        H.load_groups(bad)
    with pytest.raises(ImportFileError, match="not found"):
        H.load_groups(tmp_path / "missing.json.gz")


LMF = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE LexicalResource SYSTEM "http://globalwordnet.github.io/schemas/WN-LMF-1.1.dtd">
<LexicalResource xmlns:dc="https://globalwordnet.github.io/schemas/dc/">
  <Lexicon id="tiny" label="Tiny test wordnet" language="en" email="t@example.org"
           license="https://creativecommons.org/licenses/by/4.0/" version="1.0">
{entries}
{synsets}
  </Lexicon>
</LexicalResource>
"""


def write_lmf(path: Path, synsets=TINY) -> Path:
    entries, members, order = [], {}, {}
    for k, lemmas, _, _ in synsets:
        for w in lemmas:
            members.setdefault(w, []).append(k)
    for n, (w, ks) in enumerate(sorted(members.items())):
        for i, k in enumerate(ks):
            order.setdefault(k, {})[w] = f"tiny-s{n}-{i}"
        senses = "".join(f'<Sense id="tiny-s{n}-{i}" synset="tiny-{k}-n"/>' for i, k in enumerate(ks))
        form = w.replace("_", " ")
        entries.append(f'    <LexicalEntry id="tiny-w{n}"><Lemma writtenForm="{form}" partOfSpeech="n"/>{senses}'
                       "</LexicalEntry>")
    syn = []
    for k, lemmas, gloss, hypos in synsets:
        rels = "".join(f'<SynsetRelation relType="hyponym" target="tiny-{h}-n"/>' for h in hypos)
        ids = " ".join(order[k][w] for w in lemmas)  # WordNet's lemma order (head word first)
        syn.append(f'    <Synset id="tiny-{k}-n" ili="" partOfSpeech="n" members="{ids}"><Definition>{gloss}</Definition>{rels}'
                   "</Synset>")
    path.write_text(LMF.format(entries="\n".join(entries), synsets="\n".join(syn)))
    return path


def test_wn_backend_over_a_tiny_lmf_file(tmp_path):
    pytest.importorskip("wn")
    lmf = write_lmf(tmp_path / "tiny.xml")
    reader, close = wb.open_wn_lexicon(str(lmf))
    try:
        groups = by_synset(wb.build_groups(reader, min_size=4, max_size=8))
    finally:
        close()
    assert groups["tiny-hunting_dog-n"].members == ("beagle", "hound", "pointer", "setter", "terrier")
    assert groups["tiny-cat-n"].members == ("manx", "queen", "siamese", "tabby")
    assert groups["tiny-grandparent-n"].name == "grandparent"


def test_groups_of_every_part_of_speech_record_it():
    """The reference walks every synset: verb hierarchies give groups too, each recording its part of speech; a
    build can be restricted to one part of speech."""
    N = wb.SynsetNode
    graph = {
        "animal.n.01": N("animal.n.01", ("animal",), "a living organism", ("cat.n.01", "dog.n.01"), "noun"),
        "cat.n.01": N("cat.n.01", ("cat",), "a feline", (), "noun"),
        "dog.n.01": N("dog.n.01", ("dog",), "a canine", (), "noun"),
        "cook.v.02": N("cook.v.02", ("cook",), "transform by heating", ("bake.v.01", "fry.v.01", "roast.v.01"),
                       "verb"),
        "bake.v.01": N("bake.v.01", ("bake",), "cook in an oven", (), "verb"),
        "fry.v.01": N("fry.v.01", ("fry",), "cook in fat", (), "verb"),
        "roast.v.01": N("roast.v.01", ("roast", "roast_in_oven"), "cook with dry heat", (), "verb"),
    }
    groups, counts = wb.build(graph, min_size=2, max_size=30)
    g = by_synset(groups)
    assert g["cook.v.02"].members == ("bake", "fry", "roast") and g["cook.v.02"].pos == "verb"
    assert g["animal.n.01"].pos == "noun" and counts["groups_by_pos"] == {"noun": 1, "verb": 1}
    assert wb.pos_tags("all") == ("n", "v", "a", "r") and wb.pos_tags("v") == ("v",)
    with pytest.raises(Exception, match="unknown part of speech"):
        wb.pos_tags("x")


def test_a_version_1_groups_file_still_loads_with_the_part_of_speech_of_its_synset_names(tmp_path):
    out = tmp_path / "v1.json.gz"
    doc = {"format": H.FORMAT, "format_version": 1, "groups": [
        ["cook.v.02", "cook", "transform by heating", ["bake", "fry"]],
        ["grandparent.n.01", "grandparent", "a parent of a parent", ["gramps", "granny"]]]}
    with gzip.open(out, "wt") as fh:
        json.dump(doc, fh)
    loaded = by_synset(H.load_groups(out))
    assert loaded["cook.v.02"].pos == "verb" and loaded["grandparent.n.01"].pos == "noun"
