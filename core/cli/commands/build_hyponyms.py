"""`python -m core build-hyponyms` — build the WordNet hyponym groups shipped in data/hyponyms/.

    python -m core build-hyponyms                                   # NLTK over /usr/share/wordnet (Debian WordNet 3.0)
    python -m core build-hyponyms --wordnet-dir DIR --out FILE      # any WNDB directory (data.noun, index.noun, …)
    python -m core build-hyponyms --backend wn --lexicon FILE.xml   # the `wn` package over a WN-LMF file
"""

from __future__ import annotations

import os
import time

from core.errors import UserError
from core.files import check_output_path
from core.lexicon import wordnet_build as wb
from core.lexicon.datafile import dump_json_gz, write_atomic
from core.lexicon.hyponyms import DEFAULT_PATH, write_groups
from core.lexicon.words import POS_FORMAT, SOURCE as WORDS_SOURCE, word_list

DEFAULT_WORDNET_DIR = "/usr/share/wordnet"


def register(subparsers) -> None:
    p = subparsers.add_parser("build-hyponyms", help="build the WordNet hyponym groups file (deceptive sets)",
                              description="Build the WordNet hyponym groups behind deceptive sets (shipped in "
                                          "data/hyponyms/, so the app never needs WordNet) from Debian's WordNet 3.0 "
                                          "via NLTK, any WNDB directory, or a WN-LMF lexicon via the wn package. "
                                          "Output is byte-identical across runs.")
    p.add_argument("--backend", choices=("nltk", "wn"), default="nltk",
                   help="nltk: NLTK's WordNet reader over WNDB files (default); wn: the `wn` package over WN-LMF")
    p.add_argument("--wordnet-dir", default=DEFAULT_WORDNET_DIR,
                   help=f"WNDB directory for --backend nltk (default {DEFAULT_WORDNET_DIR})")
    p.add_argument("--lexicon", help="WN-LMF XML file for --backend wn")
    p.add_argument("--out", default=str(DEFAULT_PATH), help="output .json.gz (default: the shipped file)")
    p.add_argument("--pos", default="all", choices=("all", *wb.POS_TAGS),
                   help="part of speech of the hypernyms: all (default; every synset, as the SetLexSem code walks "
                        "them: in WordNet 3.0 nouns and verbs have hyponyms) or one of n, v, a, r")
    p.add_argument("--min-size", type=int, default=wb.DEFAULT_MIN_SIZE,
                   help=f"drop smaller groups (default {wb.DEFAULT_MIN_SIZE})")
    p.add_argument("--max-size", type=int, default=wb.DEFAULT_MAX_SIZE,
                   help="drop larger groups as too generic (default 30)")
    p.add_argument("--min-edit-distance", type=int, default=wb.DEFAULT_MIN_EDIT_DISTANCE,
                   help="lemmas of one synset closer than this are near-duplicates (default 3)")
    p.add_argument("--pos-out", help="also write the part-of-speech table of the word list (words_by_pos) to this "
                                     ".json.gz, e.g. data/lexicon/wordnet_pos.json.gz (NLTK backend only)")
    p.set_defaults(func=run)


def _shown(path: str) -> str:
    """The path as the user knows it: relative to here when it is below here, else as given."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel


def write_pos_table(reader, source: dict, path: str) -> None:
    started = time.perf_counter()
    table = wb.build_pos_table(reader, word_list())
    doc = {"format": POS_FORMAT, "source": dict(source, words=WORDS_SOURCE, word_count=len(word_list())),
           "rule": "word has at least one synset of the part of speech in NLTK's synsets(word, pos) (after morphy); "
                   "'a' includes satellite adjectives",
           "counts": {pos: len(words) for pos, words in table.items()}, "pos": table}
    try:
        write_atomic(path, dump_json_gz(doc))
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote the part-of-speech table ({', '.join(f'{p}: {len(w)}' for p, w in table.items())}) to "
          f"{_shown(path)} in {time.perf_counter() - started:.1f} s")


def run(args) -> int:
    if args.min_edit_distance < 1:
        raise UserError("--min-edit-distance must be at least 1")
    if args.pos_out and args.backend != "nltk":
        raise UserError("--pos-out needs --backend nltk")
    check_output_path(args.out, (".json.gz",), flag="--out")
    if args.pos_out:
        check_output_path(args.pos_out, (".json.gz",), flag="--pos-out")
    started = time.perf_counter()
    if args.backend == "nltk":
        # the POS table needs every part of speech; the groups only the hypernyms' one
        files = tuple(wb.POS_FILES[t] for t in (wb.POS_TAGS if args.pos_out else wb.pos_tags(args.pos)))
        reader, close = wb.open_nltk_wordnet(args.wordnet_dir, files)
    else:
        if not args.lexicon:
            raise UserError("--backend wn needs --lexicon FILE.xml (a WN-LMF lexicon)")
        reader, close = wb.open_wn_lexicon(args.lexicon)
    try:
        if args.backend == "nltk":
            source = wb.nltk_source_info(reader, args.wordnet_dir)
        else:
            source = wb.wn_source_info(reader, args.lexicon)
        groups, counts = wb.build(reader, pos=args.pos, min_size=args.min_size, max_size=args.max_size,
                                  min_edit_distance=args.min_edit_distance)
        if args.pos_out:
            write_pos_table(reader, source, args.pos_out)
    except UserError:
        raise
    except Exception as exc:  # a damaged WordNet makes the readers fail in many ways: one clear line
        raise UserError(f"cannot read the WordNet ({type(exc).__name__}: {exc})") from None
    finally:
        close()
    if not groups:
        raise UserError("no hyponym group satisfies the rules; nothing written")
    meta = {"source": source, "rules": wb.rules(args.pos, args.min_size, args.max_size, args.min_edit_distance),
            "counts": counts}
    try:
        write_groups(groups, args.out, meta)
    except OSError as exc:
        raise UserError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    seconds = time.perf_counter() - started
    by_pos = ", ".join(f"{n} {p}" for p, n in counts["groups_by_pos"].items())
    print(f"wrote {counts['groups']} groups ({by_pos}; {counts['vocabulary']} distinct members; "
          f"{counts['groups_by_min_size']['8']} with >= 8, {counts['groups_by_min_size']['16']} with >= 16 members) "
          f"from {counts['synsets']} synsets to {_shown(args.out)} in {seconds:.1f} s")
    return 0
