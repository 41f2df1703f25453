"""Published figures of the SetLike paper (cosine measure), to show beside our own results.

C1 = Table 1 (TextOverlap, four-way shares of CO1/CO2), C3 = Table 2 (TextDifference, CD1/CD2), C4 = Table 3
(cosine and NED). All are percentages averaged over the paper's ε grid (132 × 132 margins spanning the observed
range; appendix A.5) on its CNN-DailyMail-derived dataset — compare them with our ``*_grid`` figures first.
"""

from __future__ import annotations

CLASSICAL = ("SBERT-mini", "LASER", "USE", "RoBERTa", "SBERT-L", "SimCSE", "InferSent")
LLMS = ("GPT3", "LLaMA2", "Mistral", "LLaMA3", "OLMo", "OpenELM", "LLaMA3.2", "Qwen", "Gemma")

# model: (TT, TF, FT, FF)
C1_COSINE = {
    "SBERT-mini": (28.96, 24.22, 25.24, 21.57), "LASER": (24.51, 25.47, 24.41, 25.61),
    "USE": (28.07, 24.72, 24.88, 22.33), "RoBERTa": (24.0, 26.11, 23.89, 26.0),
    "SBERT-L": (28.67, 24.47, 25.05, 21.81), "SimCSE": (26.91, 25.11, 24.69, 23.29),
    "InferSent": (24.66, 25.69, 24.26, 25.4), "GPT3": (25.15, 25.8, 24.2, 24.85),
    "LLaMA2": (24.57, 25.29, 24.55, 25.59), "Mistral": (24.77, 25.27, 24.64, 25.32),
    "LLaMA3": (24.4, 25.13, 24.71, 25.76), "OLMo": (25.18, 25.01, 24.85, 24.96),
    "OpenELM": (23.93, 25.6, 24.19, 26.27), "LLaMA3.2": (24.44, 25.53, 24.42, 25.6),
    "Qwen": (24.12, 25.85, 24.13, 25.91), "Gemma": (24.58, 24.98, 24.83, 25.6),
}
C3_COSINE = {
    "SBERT-mini": (34.8, 27.25, 22.33, 15.62), "LASER": (18.87, 26.58, 22.81, 31.74),
    "USE": (31.86, 27.38, 22.66, 18.1), "RoBERTa": (12.29, 24.53, 21.09, 42.1),
    "SBERT-L": (32.97, 27.36, 22.46, 17.21), "SimCSE": (26.66, 27.4, 23.01, 22.93),
    "InferSent": (16.68, 26.19, 22.3, 34.84), "GPT3": (16.53, 26.31, 22.11, 35.04),
    "LLaMA2": (18.31, 26.38, 22.58, 32.73), "Mistral": (18.06, 26.39, 22.5, 33.05),
    "LLaMA3": (19.0, 26.51, 22.8, 31.69), "OLMo": (20.1, 26.82, 22.85, 30.23),
    "OpenELM": (15.43, 25.59, 21.98, 37.0), "LLaMA3.2": (15.73, 25.9, 22.03, 36.34),
    "Qwen": (14.05, 25.29, 21.61, 39.06), "Gemma": (19.58, 26.69, 22.94, 30.79),
}
# model: (cosine, NED)
C4 = {
    "SBERT-mini": (76.14, 75.35), "LASER": (59.95, 67.39), "USE": (74.01, 73.69), "RoBERTa": (42.83, 36.75),
    "SBERT-L": (74.75, 73.87), "SimCSE": (69.59, 67.69), "InferSent": (56.2, 64.27),
    "GPT3": (56.16, 50.5), "LLaMA2": (59.02, 55.63), "Mistral": (58.4, 54.74), "LLaMA3": (60.01, 57.05),
    "OLMo": (62.21, 59.91), "OpenELM": (52.26, 46.53), "LLaMA3.2": (54.26, 49.61), "Qwen": (49.45, 43.22),
    "Gemma": (61.26, 59.01),
}

# Which paper row an encoder of ours corresponds to (for side-by-side tables).
COUNTERPART = {"minilm": "SBERT-mini", "openai": "GPT3"}


def rows() -> list[dict]:
    """One dict per paper encoder: C1/C3 four-way shares, C4 cosine and NED."""
    out = []
    for model in CLASSICAL + LLMS:
        r = {"encoder": model, "kind": "classical" if model in CLASSICAL else "LLM", "source": "paper"}
        for q, v in zip(("TT", "TF", "FT", "FF"), C1_COSINE[model]):
            r[f"C1_{q}"] = v
        for q, v in zip(("TT", "TF", "FT", "FF"), C3_COSINE[model]):
            r[f"C3_{q}"] = v
        r["C4_cosine"], r["C4_ned"] = C4[model]
        out.append(r)
    return out


def llm_range(key: str) -> tuple[float, float]:
    """(min, max) of a column over the paper's nine LLM encoders, e.g. 'C1_TT'."""
    vals = [r[key] for r in rows() if r["kind"] == "LLM"]
    return min(vals), max(vals)
