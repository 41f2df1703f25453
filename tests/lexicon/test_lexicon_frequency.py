"""Frequency deciles (SPEC S5) in both modes, from wordfreq and from a user "word,count" file."""

import statistics

import pytest

from core.errors import ConfigError, ImportFileError
from core.lexicon import frequency as F
from core.lexicon.words import word_set


@pytest.mark.parametrize("mode", F.MODES)
def test_deciles_partition_the_known_words(mode):
    freqs = F.word_frequencies()
    bins = [F.decile_words(d, mode) for d in range(1, 11)]
    flat = [w for b in bins for w in b]
    assert len(flat) == len(set(flat)) == len(freqs)
    assert set(flat) <= word_set()
    assert all(list(b) == sorted(b) and b for b in bins)
    assert all(F.decile_of(w, mode) == d for d, b in enumerate(bins, 1) for w in b[:50])


@pytest.mark.parametrize("mode", F.MODES)
def test_decile_10_is_commoner_than_decile_1(mode):
    freqs = F.word_frequencies()
    top = [freqs[w] for w in F.decile_words(10, mode)]
    bottom = [freqs[w] for w in F.decile_words(1, mode)]
    assert min(top) > max(bottom)
    medians = [statistics.median(freqs[w] for w in F.decile_words(d, mode)) for d in range(1, 11)]
    assert medians == sorted(medians)
    assert "the" in F.decile_words(10, mode)


def test_rank_mode_has_equal_counts_and_is_monotone():
    freqs = F.word_frequencies()
    sizes = F.decile_sizes("rank")
    assert max(sizes.values()) - min(sizes.values()) <= 1
    for d in range(1, 10):
        assert max(freqs[w] for w in F.decile_words(d, "rank")) <= min(freqs[w] for w in F.decile_words(d + 1, "rank"))


def test_log_width_bins_are_equal_width_in_log_space():
    import math

    freqs = F.word_frequencies()
    logs = {w: math.log(f) for w, f in freqs.items()}
    lo, hi = min(logs.values()), max(logs.values())
    for d in range(1, 11):
        for w in F.decile_words(d, "log_width"):
            x = (logs[w] - lo) / (hi - lo)
            assert (d - 1) / 10 - 1e-12 <= x <= d / 10 + 1e-12
    sizes = F.decile_sizes("log_width")
    assert sizes[1] > sizes[10]  # power law: few very common words


def test_length_filter_applies_after_binning():
    for mode in F.MODES:
        five = F.decile_words(4, mode, length=5)
        assert five and all(len(w) == 5 for w in five)
        assert set(five) <= set(F.decile_words(4, mode))


def test_bad_arguments_are_config_errors():
    with pytest.raises(ConfigError):
        F.decile_words(0)
    with pytest.raises(ConfigError):
        F.decile_words(11)
    with pytest.raises(ConfigError):
        F.decile_words(3, mode="quantile")
    with pytest.raises(ConfigError):
        F.decile_words(3, length=0)


def test_user_counts_file(tmp_path):
    path = tmp_path / "counts.csv"
    rows = ["word,count"] + [f"{w},{c}" for w, c in [("apple", 5), ("Apple", 5), ("zebra", 1), ("cat", 1000),
                                                       ("dog", 900), ("house", 50), ("tree", 20), ("river", 7),
                                                       ("stone", 3), ("bread", 2), ("cloud", 100), ("notaword", 99),
                                                       ("lamp", 0)]]
    path.write_text("\n".join(rows) + "\n")
    freqs = F.word_frequencies(str(path))
    assert freqs["apple"] == 10  # case variants summed
    assert "notaword" not in freqs and "lamp" not in freqs  # not in the word list / zero count
    rank = [F.decile_words(d, "rank", source=str(path)) for d in range(1, 11)]
    assert [len(b) for b in rank] == [1] * 10
    assert rank[0] == ("zebra",) and rank[9] == ("cat",)
    assert F.decile_words(10, "log_width", source=str(path)) == ("cat", "dog")  # log 900 / log 1000 > 0.9
    assert F.decile_words(1, "log_width", source=str(path)) == ("zebra",)
    info = F.frequency_source_info(str(path))
    assert info["source"] == "file" and info["known_words"] == 10 and len(info["sha256"]) == 64


def test_bad_counts_files_give_one_clear_error(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(ImportFileError, match="not found"):
        F.decile_words(1, source=str(missing))
    bad = tmp_path / "bad.csv"
    bad.write_text("apple,3\nbanana,lots\n")
    with pytest.raises(ImportFileError, match="line 2"):
        F.decile_words(1, source=str(bad))
    few = tmp_path / "few.csv"
    few.write_text("apple,3\nbanana,4\n")
    with pytest.raises(ImportFileError, match="at least 10"):
        F.decile_words(1, source=str(few))


def test_wordfreq_source_info():
    info = F.frequency_source_info()
    assert info["source"] == "wordfreq" and info["known_words"] == len(F.word_frequencies()) > 50_000
