"""CacheKeys (the runner's per-plan key maker) writes the same key as cache_key, byte for byte: cached answers of
every earlier run stay found."""

from __future__ import annotations

import random
import string

from core.store.cache import CacheKeys, cache_key


def test_shared_head_keys_equal_cache_key():
    rng = random.Random(0)
    for _ in range(3000):
        model = rng.choice(["reference/solver", "openai-compatible/x", "ünï/ç", "a\"b"])
        base_url = rng.choice([None, "", "http://127.0.0.1:8000/v1"])
        params = {"temperature": rng.choice([None, 0.0, rng.random()]), "max_tokens": rng.randint(1, 4096),
                  "stop": rng.choice([[], ["</answer>"], ["\n", "é"]]), "seed": rng.choice([None, 7]),
                  "extra": {"b": 1, "a": [1, "\u2028"]}}
        prompt = "".join(rng.choice(string.printable + "éü\u2028\"\\{}[]") for _ in range(rng.randint(0, 80)))
        draw = rng.randint(0, 9)
        assert CacheKeys(model, base_url, params)(prompt, draw) == cache_key(model, base_url, params, prompt, draw)
