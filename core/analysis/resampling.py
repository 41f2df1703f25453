"""Resampling for the statistics (core/analysis/stats.py): sign flips, bootstrap resamples and label arrangements,
drawn once per number of units (or layout of strata) and seed and kept for the process.

    sign_flip_p(d, observed) / sign_flip_null(d)     two-sided sign-flip p (scipy's to the bit) / its null, slowly
    bootstrap_interval(d, confidence) / bootstrap_means(d)   percentile bootstrap interval (scipy's) / its means
    label_plan(sizes, n_a) / group_bootstrap_plan(sizes)     the stratified permutation's and bootstrap's drawings
    pattern_sums(packed, values) / random_subsets(rng, size, k)   sums over packed 0/1 patterns / uniform subsets

The sign flips and bootstrap resamples are drawn from the same generator calls as ``scipy.stats.permutation_test``
(one-sample, ``permutation_type="samples"``) and ``scipy.stats.bootstrap`` (percentile) make: p and interval are
scipy's to the bit (tests/analysis/test_stats.py checks it; scipy is the tests' reference), without scipy's per-call
cost. What is drawn depends only on the number of units and the seed, so every contrast over the same number of
draws reuses one drawing (``PLANS``, kept for the process). The sign patterns, and each bootstrap resample's count of
every unit, are kept as float32 matrices: a contrast's null distribution and bootstrap means are then one
matrix-vector product each. Only the patterns whose fast sum lies within its float32 error of the observed value,
and the resamples within that error of the two order statistics the interval needs, are summed again unit by unit
in scipy's order; those alone decide. The stratified permutation's statistic is linear in the labels: above
EXACT_MAX arrangements, each stratum labels a uniformly random subset of its units (selection sampling, for every
resample at once), drawn once per layout of strata and summed by table lookups over the packed labels; its
stratified bootstrap resamples each (stratum, level) group from counts drawn once per layout.
"""

from __future__ import annotations

import threading

import numpy as np

RESAMPLES = 9999        # Monte Carlo permutations / bootstrap resamples
EXACT_MAX = 20000       # enumerate every arrangement up to this many
SEED = 20240531         # fixed: a report is the same on every run


def _batches(total: int, width: int) -> list[int]:
    """Row counts of batches of at most ~4 million cells (a resampling never holds all its draws at once)."""
    rows = max(1, 4_000_000 // max(1, width))
    return [min(rows, total - k) for k in range(0, total, rows)]


class _Memo:
    """A few large resampling plans kept for the process, keyed by (what, units, seed): every contrast over the same
    number of units draws the same sign patterns and bootstrap indices from the same seed, so they are drawn once.
    Single-flight: a contrast asking for a plan another thread is building waits for it. Least recently used plans
    are dropped beyond ``keep`` (each is tens of MB at a few thousand units)."""

    def __init__(self, keep: int = 4):
        self.keep = keep
        self.lock = threading.Lock()
        self.entries: dict = {}

    def get(self, key, make):
        with self.lock:
            entry = self.entries.pop(key, None) or {"lock": threading.Lock(), "value": None}
            self.entries[key] = entry   # most recently used last
            while len(self.entries) > self.keep:
                self.entries.pop(next(iter(self.entries)))
        with entry["lock"]:
            if entry["value"] is None:
                entry["value"] = make()
            return entry["value"]


PLANS = _Memo()


def _sign_bits(n: int, seed: int):
    """Batches of sign patterns (rows of n, 1 = +, as uint8) — every pattern when 2^n ≤ EXACT_MAX, else RESAMPLES
    drawn as scipy.stats.permutation_test draws them for the one-sample ``permutation_type="samples"`` test: one
    uint32 per unit and pattern (``Generator.permuted`` of (0, 1)), its lowest bit the sign. The uint32s are the
    halves of the generator's raw 64-bit outputs, low half first, as numpy hands them out."""
    if 2 ** n <= EXACT_MAX:
        yield ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(np.uint8)
        return
    bitgen = np.random.default_rng(seed).bit_generator
    rows = 2 * max(1, 2_000_000 // max(1, n))   # even: a batch takes whole 64-bit outputs, nothing left buffered
    for k in range(0, RESAMPLES, rows):
        b = min(rows, RESAMPLES - k)
        raw = bitgen.random_raw((b * n + 1) // 2)
        low_bytes = raw.view(np.uint8)[::4] if raw.dtype.byteorder in "=<|" and np.little_endian else \
            raw.astype("<u8").view(np.uint8)[::4]   # the first byte of each uint32 half: its lowest bit
        yield (low_bytes[:b * n] & 1).reshape(b, n)


def _packed_signs(n: int, seed: int) -> np.ndarray:
    """``_sign_bits`` of (n, seed), every batch, packed 8 units to a byte (little bit order), drawn once per
    process (``PLANS``): RESAMPLES × n / 8 bytes."""
    return PLANS.get(("signs", n, seed), lambda: np.concatenate(
        [np.packbits(bits, axis=1, bitorder="little") for bits in _sign_bits(n, seed)]))


def pattern_sums(packed: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Σ_i bit[r, i] · d[i] per row of packed sign patterns: each byte's sum looked up in a table of the 256 subsets
    of its 8 units (not in scipy's order of additions: ``sign_flip_p`` re-adds the close calls)."""
    width = packed.shape[1]
    units = np.zeros(width * 8)
    units[:d.size] = d
    subsets = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
    table = (subsets @ units.reshape(width, 8).T).T.ravel()          # (byte position, byte value) -> sum
    return table[(np.arange(width) * 256)[None, :] + packed].sum(axis=1)


def _sequential_means(bits: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The mean of ±d per row of signs, adding unit by unit as scipy's reduction does (the same float result)."""
    acc = np.zeros(bits.shape[0])
    cols = np.ascontiguousarray(bits.T).astype(bool)
    for i in range(d.size):
        acc += np.where(cols[i], d[i], -d[i])
    return acc / d.size


def sign_flip_null(d: np.ndarray, seed: int = SEED) -> tuple[np.ndarray, bool]:
    """The null distribution of the mean of ``d`` under random signs (``_sign_bits``) and whether it is exact,
    every value computed as scipy computes it (slow: ``sign_flip_p`` is what the contrasts use)."""
    return np.concatenate([_sequential_means(bits, d) for bits in _sign_bits(d.size, seed)]), 2 ** d.size <= EXACT_MAX


# above this many units a drawing is not kept as a float matrix (RESAMPLES × units × 4 bytes: 80 MB at 2,000)
PLAN_UNITS = 4096
_U32 = float(np.finfo(np.float32).eps)


def _sign_matrix(n: int, seed: int) -> np.ndarray:
    """``_packed_signs`` as a float32 matrix of ±1 (RESAMPLES × n), kept for the process (``PLANS``): every
    pattern's sum of ±d is then one matrix-vector product."""
    def make():
        table = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float32) * 2 - 1
        packed = _packed_signs(n, seed)
        return np.ascontiguousarray(table[packed].reshape(packed.shape[0], -1)[:, :n])
    return PLANS.get(("sign matrix", n, seed), make)


def _float_error(n: int, d: np.ndarray) -> float:
    """A bound on the error of a mean of n terms ±d (or counts × d) computed in float32 from ``d``: the rounding of
    each d, then of each of the n additions, then of the division."""
    return (n + 4) * _U32 * float(np.abs(d).max())


def sign_flip_p(d: np.ndarray, observed: float, seed: int = SEED) -> tuple[float, bool]:
    """The two-sided sign-flip p of ``observed`` = mean(d), and whether it is exact — scipy's p to the bit. The
    patterns (``_packed_signs``, drawn once per size) are summed fast — one float32 matrix-vector product
    (``_sign_matrix``), or table lookups above PLAN_UNITS units (``pattern_sums``) — and those whose sum lies within
    the fast sum's error of the observed value (where the order of additions could decide a comparison) are summed
    again in scipy's order; only those decide a close call."""
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    packed = _packed_signs(d.size, seed)
    if d.size <= PLAN_UNITS:
        null = (_sign_matrix(d.size, seed) @ d.astype(np.float32)).astype(np.float64) / d.size
        margin = 2 * _float_error(d.size, d) + gamma
    else:
        null = (2 * pattern_sums(packed, d) - float(d.sum())) / d.size
        margin = 64 * np.finfo(np.float64).eps * float(np.abs(d).sum()) + gamma
    near = np.flatnonzero(np.abs(null - observed) <= margin)
    if near.size:
        bits = np.unpackbits(packed[near], axis=1, count=d.size, bitorder="little")
        null[near] = _sequential_means(bits, d)
    less = int(np.count_nonzero(null <= observed + gamma))
    greater = int(np.count_nonzero(null >= observed - gamma))
    exact = 2 ** d.size <= EXACT_MAX
    adjustment = 0 if exact else 1
    p = 2 * min(less + adjustment, greater + adjustment) / (null.size + adjustment)
    return float(min(1.0, max(0.0, p))), exact


def _bootstrap_plan(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap's RESAMPLES rows of n indices, drawn as scipy.stats.bootstrap draws them (uint32 bounded
    integers in batches: the same stream as one call), kept as (indices, counts): ``counts[r, j]`` = how many times
    resample r drew unit j, as float32 (exact: small integers). Drawn once per (n, seed) (``PLANS``)."""
    def make():
        rng = np.random.default_rng(seed)
        idx = np.empty((RESAMPLES, n), dtype=np.uint16 if n <= np.iinfo(np.uint16).max else np.uint32)
        start = 0
        for b in _batches(RESAMPLES, n):
            idx[start:start + b] = rng.integers(0, n, (b, n), dtype=np.uint32)
            start += b
        counts = np.empty((RESAMPLES, n), dtype=np.float32)
        for r in range(RESAMPLES):   # a row at a time: a small count array stays in cache (faster than one flat count)
            counts[r] = np.bincount(idx[r], minlength=n)
        return idx, counts
    return PLANS.get(("bootstrap", n, seed), make)


def bootstrap_means(d: np.ndarray, seed: int = SEED) -> np.ndarray:
    """RESAMPLES means of units drawn with replacement from ``d``, drawn and averaged as scipy.stats.bootstrap does
    (the indices as uint32: numpy draws the same bounded integers for either width)."""
    rng = np.random.default_rng(seed)
    return np.concatenate([d[rng.integers(0, d.size, (b, d.size), dtype=np.uint32)].mean(axis=-1)
                           for b in _batches(RESAMPLES, d.size)])


def _type7(p: float, count: int) -> tuple[int, int, float]:
    """Positions and weight of the p-quantile of ``count`` sorted values (Hyndman & Fan type 7), computed as
    scipy.stats.quantile computes them: (1 − g) · y[j] + g · y[j + 1]."""
    p = np.float64(p)
    jg = p * count + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = 0.0 if j < 0 else jg % 1
    return int(np.clip(j, 0, count - 1)), int(np.clip(jp1, 0, count - 1)), g


def bootstrap_interval(d: np.ndarray, confidence: float, seed: int = SEED) -> tuple[float, float]:
    """The percentile interval of ``bootstrap_means(d)`` (``d`` sorted) — scipy.stats.bootstrap's to the bit — from
    the few order statistics it needs. Up to PLAN_UNITS units, each resample's mean is first one float32
    matrix-vector product of its counts (``_bootstrap_plan``); the resamples within that product's error of the
    wanted order statistics are averaged again unit by unit, as scipy averages them, and only those decide."""
    alpha = (1 - confidence) / 2
    probs = (np.float64(alpha), np.float64(1 - alpha))
    if d.size > PLAN_UNITS:
        means = np.sort(bootstrap_means(d, seed))
        return tuple(float((1 - g) * means[j] + g * means[jp1]) for j, jp1, g in
                     (_type7(p, RESAMPLES) for p in probs))
    idx, counts = _bootstrap_plan(d.size, seed)
    approx = (counts @ d.astype(np.float32)).astype(np.float64) / d.size
    margin = 2 * _float_error(d.size, d)
    order = np.sort(approx)
    out = []
    for p in probs:
        j, jp1, g = _type7(p, RESAMPLES)
        low, high = order[j] - 2 * margin, order[jp1] + 2 * margin
        below = int(np.count_nonzero(approx < low))
        near = np.flatnonzero((approx >= low) & (approx <= high))
        exact = np.sort(d[idx[near]].mean(axis=-1))
        out.append(float((1 - g) * exact[j - below] + g * exact[jp1 - below]))
    return out[0], out[1]


def random_subsets(rng, size: int, k: int) -> np.ndarray:
    """RESAMPLES uniformly random k-subsets of ``size`` units, as a (RESAMPLES × size) 0/1 matrix: selection sampling
    (Knuth's algorithm S) run for every resample at once — unit i is taken with probability (still needed) /
    (units left)."""
    need = np.full(RESAMPLES, k, dtype=np.int64)
    out = np.zeros((size, RESAMPLES), dtype=np.uint8)   # unit by unit: contiguous rows, transposed at the end
    for i in range(size):
        take = rng.random(RESAMPLES) * (size - i) < need
        out[i] = take
        need -= take
    return out.T


def group_bootstrap_plan(sizes: tuple, seed: int) -> list[np.ndarray]:
    """Per group of ``sizes`` units (in order, from one generator): RESAMPLES draws of as many units with replacement,
    kept as cumulative counts — ``cum[r, j]`` = how many of resample r's draws fell below position j. Drawn once per
    (layout, seed) and process (``PLANS``)."""
    def make():
        rng = np.random.default_rng(seed)
        out = []
        for m in sizes:
            idx = rng.integers(0, m, (RESAMPLES, m), dtype=np.uint32).astype(np.int64)
            idx += (np.arange(RESAMPLES, dtype=np.int64) * m)[:, None]
            cum = np.zeros((RESAMPLES, m + 1), dtype=np.int16 if m <= np.iinfo(np.int16).max else np.int32)
            cum[:, 1:] = np.bincount(idx.ravel(), minlength=RESAMPLES * m).reshape(RESAMPLES, m)
            out.append(np.cumsum(cum, axis=1, out=cum))
        return out
    return PLANS.get(("group bootstrap", sizes, seed), make)


def label_plan(sizes: tuple, n_a: tuple, seed: int) -> np.ndarray:
    """RESAMPLES random arrangements of labels within strata (contiguous blocks of ``sizes`` units, ``n_a`` of each
    labelled a; ``random_subsets`` per stratum, in order, from one generator), packed 8 units to a byte: drawn once
    per (layout, seed) and process (``PLANS``) — the contrasts of one finding for two series, or two findings over
    the same draws, share a layout."""
    def make():
        rng = np.random.default_rng(seed)
        bits = np.zeros((RESAMPLES, sum(sizes)), dtype=np.uint8)
        start = 0
        for size, na in zip(sizes, n_a):
            bits[:, start:start + size] = random_subsets(rng, size, na)
            start += size
        return np.packbits(bits, axis=1, bitorder="little")
    return PLANS.get(("labels", sizes, n_a, seed), make)
