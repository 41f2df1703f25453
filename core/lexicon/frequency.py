"""Frequency deciles of the word list (the decile samplers' ten bins).

Only words of :func:`core.lexicon.words.word_list` that have a known (non-zero) frequency are binned. Two modes:

``log_width``  what the SetLexSem code did: take log(frequency), shift and scale to [0, 1] with
               (x - min) / (max - min), cut [0, 1] into ten equal-width bins; bin = min(floor(10 x), 9) + 1.
               Bins hold very different numbers of words (few in the top bins).
``rank``       what the paper's text describes: sort by frequency (ties broken alphabetically, so the cut is
               deterministic) and cut the ranking into ten equal-count groups (sizes differ by at most one).

Decile 1 is the rarest, 10 the commonest. A length filter is applied *after* binning, so length and frequency vary
independently (paper, Table 7).

Sources: ``"wordfreq"`` (default; the ``wordfreq`` package's English "best" list, read through
``wordfreq.get_frequency_dict`` — the same numbers ``word_frequency`` returns, without its rounding to three
significant digits) or the path of a user "word,count" file (comma- or tab-separated, optional header, e.g. Google
Books unigram totals; case variants are summed after lower-casing).
Everything is computed once per (source, mode) and cached; computing the wordfreq deciles takes well under a second.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from functools import lru_cache
from importlib import metadata

from core.errors import ConfigError, ImportFileError
from core.lexicon.words import word_list, word_set

MODES = ("log_width", "rank")
DEFAULT_SOURCE = "wordfreq"
N_BINS = 10


# ---------------------------------------------------------------------------------------------------------- sources
def _source_key(source) -> str | tuple:
    """A hashable cache key: "wordfreq", or the file's absolute path + mtime + size (a changed file is re-read)."""
    if source is None or source == DEFAULT_SOURCE:
        return DEFAULT_SOURCE
    path = os.path.abspath(os.fspath(source))
    try:
        st = os.stat(path)
    except OSError:
        raise ImportFileError(f"frequency file not found: {source}") from None
    if not os.path.isfile(path):
        raise ImportFileError(f"frequency file is not a regular file: {source}")
    return ("file", path, st.st_mtime_ns, st.st_size)


def _wordfreq_frequencies() -> dict[str, float]:
    import wordfreq

    table = wordfreq.get_frequency_dict("en", wordlist="best")
    return {w: table[w] for w in word_list() if table.get(w, 0.0) > 0.0}


def read_counts_file(path: str) -> dict[str, float]:
    """Parse a "word,count" file into {lower-case word: summed count}; raises ImportFileError with the line number."""
    counts: dict[str, float] = {}
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            sample = fh.read(4096)
            fh.seek(0)
            delimiter = "\t" if ("\t" in sample and "," not in sample.split("\n", 1)[0]) else ","
            for lineno, row in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
                if not row or all(not cell.strip() for cell in row):
                    continue
                if len(row) < 2:
                    raise ImportFileError(f"{path}, line {lineno}: expected 'word,count', got {delimiter.join(row)!r}")
                word, raw = row[0].strip().lower(), row[1].strip()
                try:
                    count = float(raw)
                except ValueError:
                    if lineno == 1:  # a header line
                        continue
                    raise ImportFileError(f"{path}, line {lineno}: count {raw!r} is not a number") from None
                if not math.isfinite(count) or count < 0:
                    raise ImportFileError(f"{path}, line {lineno}: count must be a non-negative number, not {raw!r}")
                if word:
                    counts[word] = counts.get(word, 0.0) + count
    except UnicodeDecodeError:
        raise ImportFileError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise ImportFileError(f"cannot read frequency file {path}: {exc.strerror}") from None
    return counts


@lru_cache(maxsize=8)
def _frequencies(key) -> dict[str, float]:
    if key == DEFAULT_SOURCE:
        return _wordfreq_frequencies()
    _, path, _, _ = key
    known = word_set()
    freqs = {w: c for w, c in read_counts_file(path).items() if c > 0 and w in known}
    if len(freqs) < N_BINS:
        raise ImportFileError(
            f"{path}: only {len(freqs)} words of the word list have a positive count; need at least {N_BINS}"
        )
    return freqs


def word_frequencies(source=DEFAULT_SOURCE) -> dict[str, float]:
    """{word: frequency or count} for the words of the word list with a known frequency (do not mutate)."""
    return _frequencies(_source_key(source))


# ---------------------------------------------------------------------------------------------------------- binning
def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigError(f"unknown decile mode {mode!r}; expected one of: {', '.join(MODES)}")
    return mode


def _check_decile(decile) -> int:
    if isinstance(decile, bool) or not isinstance(decile, int) or not 1 <= decile <= N_BINS:
        raise ConfigError(f"decile must be an integer from 1 (rarest) to {N_BINS} (commonest), not {decile!r}")
    return decile


def _log_width_bins(freqs: dict[str, float]) -> dict[str, int]:
    logs = {w: math.log(f) for w, f in freqs.items()}
    lo, hi = min(logs.values()), max(logs.values())
    if hi == lo:
        raise ImportFileError("every word has the same frequency: log_width deciles are undefined")
    span = hi - lo
    return {w: min(int(N_BINS * (x - lo) / span), N_BINS - 1) + 1 for w, x in logs.items()}


def _rank_bins(freqs: dict[str, float]) -> dict[str, int]:
    ranked = sorted(freqs, key=lambda w: (freqs[w], w))  # rarest first; ties alphabetical
    n = len(ranked)
    return {w: i * N_BINS // n + 1 for i, w in enumerate(ranked)}


@lru_cache(maxsize=16)
def _deciles(key, mode: str) -> tuple[dict[str, int], tuple[tuple[str, ...], ...]]:
    freqs = _frequencies(key)
    bins = _log_width_bins(freqs) if mode == "log_width" else _rank_bins(freqs)
    groups: list[list[str]] = [[] for _ in range(N_BINS)]
    for word in sorted(bins):
        groups[bins[word] - 1].append(word)
    return bins, tuple(tuple(g) for g in groups)


@lru_cache(maxsize=1024)
def _decile_words(key, mode: str, decile: int, length: int | None) -> tuple[str, ...]:
    words = _deciles(key, mode)[1][decile - 1]
    if length is None:
        return words
    return tuple(w for w in words if len(w) == length)


def decile_words(decile: int, mode: str = "log_width", length: int | None = None,
                 source=DEFAULT_SOURCE) -> tuple[str, ...]:
    """Words of frequency bin ``decile`` (1 = rarest … 10 = commonest), sorted; optionally only ``length`` long."""
    _check_decile(decile)
    _check_mode(mode)
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
        raise ConfigError(f"word length must be a positive integer or None, not {length!r}")
    return _decile_words(_source_key(source), mode, decile, length)


def decile_of(word: str, mode: str = "log_width", source=DEFAULT_SOURCE) -> int | None:
    """The bin of ``word`` (1–10), or None when it has no known frequency / is not in the word list."""
    return _deciles(_source_key(source), _check_mode(mode))[0].get(word)


def decile_sizes(mode: str = "log_width", length: int | None = None, source=DEFAULT_SOURCE) -> dict[int, int]:
    """{decile: number of words}, for UI hints and grid validation (e.g. 'decile 1 has no 3-letter words')."""
    return {d: len(decile_words(d, mode, length, source)) for d in range(1, N_BINS + 1)}


def frequency_source_info(source=DEFAULT_SOURCE) -> dict:
    """JSON-serialisable provenance of a frequency source, to be stored with a run."""
    key = _source_key(source)
    n_known = len(_frequencies(key))
    if key == DEFAULT_SOURCE:
        return {"source": "wordfreq", "version": metadata.version("wordfreq"), "lang": "en", "wordlist": "best",
                "known_words": n_known}
    _, path, _, size = key
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return {"source": "file", "path": path, "sha256": digest.hexdigest(), "bytes": size, "known_words": n_known}
