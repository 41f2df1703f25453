"""Tables shaped like the SetLike paper's (encoders as rows), from one or more REPORT dicts. No Streamlit here."""

from __future__ import annotations

from core.embeddings import paper
from core.embeddings.criteria import fmt

FOUR = ("TT", "TF", "FT", "FF")


def _suffix(eps) -> str:
    return "grid" if eps in ("grid", None) else f"eps{fmt(float(eps))}"


def criteria_table(reports: dict[str, dict], criterion: str, measure: str = "cosine", eps="grid",
                   with_paper: bool = False) -> list[dict]:
    """C1 or C3 four-way shares (columns TT, TF, FT, FF), or C4 (one column), one row per encoder."""
    sfx = _suffix(eps)
    out = []
    for label, r in reports.items():
        row = {"encoder": label, "source": "this run", "samples": _n(r, criterion)}
        if criterion == "C4":
            row["C4"] = r.get(f"C4_{measure}_{sfx}")
        else:
            for q in FOUR:
                row[q] = r.get(f"{criterion}_{q}_{measure}_{sfx}")
        out.append(row)
    if with_paper and measure in ("cosine", "ned"):
        for p in paper.rows():
            if criterion == "C4":
                out.append({"encoder": p["encoder"], "source": f"paper ({p['kind']})", "samples": None,
                            "C4": p["C4_cosine"] if measure == "cosine" else p["C4_ned"]})
            elif measure == "cosine":
                out.append({"encoder": p["encoder"], "source": f"paper ({p['kind']})", "samples": None,
                            **{q: p[f"{criterion}_{q}"] for q in FOUR}})
    return out


def _n(report: dict, criterion: str):
    counts = report.get("data", {}).get("counts", {})
    return counts.get("overlap" if criterion == "C1" else "difference")


def geometry_table(reports: dict[str, dict]) -> list[dict]:
    """C2, C5, C6 shares (measure-free), one row per encoder."""
    out = []
    for label, r in reports.items():
        out.append({"encoder": label,
                    "C2 between (tol 0.05)": r.get("C2_between_tol0.05"),
                    "C5 near A (θ 0.25)": r.get("C5_near_a_theta0.25"),
                    "C6 met (θ 0.25)": r.get("C6_met_theta0.25"),
                    "C6 norms comparable": r.get("C6_case_comparable"),
                    "mean ∠(B,proj) overlap": r.get("angle_b_mean_overlap"),
                    "mean ∠(B,proj) difference": r.get("angle_b_mean_difference"),
                    "mean ∠(B,proj) union": r.get("angle_b_mean_union"),
                    "mean ‖A‖/‖B‖ union": r.get("norm_ratio_mean_union")})
    return out


def headline(reports: dict[str, dict]) -> list[dict]:
    """The three headline figures per encoder (cosine, ε = 0 and grid average) beside the paper's."""
    out = []
    for label, r in reports.items():
        ref = r.get("paper", {})
        out.append({"encoder": label,
                    "C1 both (ε=0)": r.get("C1_both_cosine_eps0"), "C1 both (grid)": r.get("C1_both_cosine_grid"),
                    "C3 both (ε=0)": r.get("C3_both_cosine_eps0"), "C3 both (grid)": r.get("C3_both_cosine_grid"),
                    "C4 (ε=0)": r.get("C4_cosine_eps0"), "C4 (grid)": r.get("C4_cosine_grid"),
                    "paper counterpart": ref.get("counterpart", "—")})
    return out


def display_frame(rows: list[dict], digits: int = 2, blank: str = "—"):
    """Rows as a DataFrame for a person: numbers rounded to ``digits``, and a cell with no value (a paper row has no
    sample count, the paper gives no NED for some criteria) written ``blank`` — never "None" or "nan"."""
    import math

    import pandas as pd

    df = pd.DataFrame(rows)

    def missing(v) -> bool:
        return v is None or (isinstance(v, float) and math.isnan(v))

    for c in df.columns:
        values = df[c].tolist()
        if not any(missing(v) for v in values):
            if pd.api.types.is_float_dtype(df[c]):
                df[c] = df[c].round(digits)
            continue
        if all(missing(v) or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
            counts = all(float(v).is_integer() for v in values if not missing(v))   # e.g. sample counts
            df[c] = [blank if missing(v) else (str(int(v)) if counts else f"{float(v):.{digits}f}") for v in values]
        else:
            df[c] = [blank if missing(v) else v for v in values]
    return df
