"""Set-like samples built from sentence tuples (S_prev, S_curr, S_next, S1, S2) — feature E1.

S_prev, S_curr and S_next are consecutive sentences of a passage; S1 fuses (S_prev, S_curr) and S2 fuses
(S_curr, S_next). Each tuple yields nine samples (A, B, target):

* overlap     ({S1, S2}, S_curr)
* difference  ((S1, S_prev), S_curr), ((S1, S_curr), S_prev), ((S1, S2), S_prev),
              ((S2, S_curr), S_next), ((S2, S_next), S_curr), ((S2, S1), S_next)
* union       ({S_prev, S_curr}, S1), ({S_curr, S_next}, S2)

Tuples come from a CSV with the columns ``id, topic, s_prev, s_curr, s_next, s1, s2`` (id and topic optional);
ready-made samples from a CSV with ``operator, a, b, target`` (``id`` optional). Bad files raise ImportFileError with
one clear line.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from core.errors import ImportFileError
from core.files import DATA_DIR, restore, write_csv

OPERATORS = ("overlap", "difference", "union")
TUPLE_FIELDS = ("s_prev", "s_curr", "s_next", "s1", "s2")
MAX_ROWS = 50_000
MAX_TEXT_CHARS = 4_000

# (operator, role of A, role of B, role of the target) — in this order for every tuple.
SAMPLE_SPECS: tuple[tuple[str, str, str, str], ...] = (
    ("overlap", "s1", "s2", "s_curr"),
    ("difference", "s1", "s_prev", "s_curr"),
    ("difference", "s1", "s_curr", "s_prev"),
    ("difference", "s1", "s2", "s_prev"),
    ("difference", "s2", "s_curr", "s_next"),
    ("difference", "s2", "s_next", "s_curr"),
    ("difference", "s2", "s1", "s_next"),
    ("union", "s_prev", "s_curr", "s1"),
    ("union", "s_curr", "s_next", "s2"),
)

_ALIASES = {
    "s_prev": ("s_prev", "sprev", "prev", "previous"),
    "s_curr": ("s_curr", "scurr", "curr", "current"),
    "s_next": ("s_next", "snext", "next"),
    "s1": ("s1", "fusion1", "fused1"),
    "s2": ("s2", "fusion2", "fused2"),
    "id": ("id", "tuple_id", "sample_id"),
    "topic": ("topic",),
    "operator": ("operator", "op", "operation"),
    "a": ("a", "input_a", "sentence_a"),
    "b": ("b", "input_b", "sentence_b"),
    "target": ("target", "output", "o", "d", "u"),
}


@dataclass(frozen=True)
class SentenceTuple:
    tuple_id: str
    s_prev: str
    s_curr: str
    s_next: str
    s1: str
    s2: str
    topic: str = ""


@dataclass(frozen=True)
class Sample:
    sample_id: str
    tuple_id: str
    operator: str     # overlap | difference | union
    variant: str      # e.g. "(S1,S_prev)->S_curr"; "" for uploaded samples
    a: str
    b: str
    target: str
    topic: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


_ROLE_LABEL = {"s_prev": "S_prev", "s_curr": "S_curr", "s_next": "S_next", "s1": "S1", "s2": "S2"}


def variant_label(a_role: str, b_role: str, target_role: str, operator: str) -> str:
    a, b, t = _ROLE_LABEL[a_role], _ROLE_LABEL[b_role], _ROLE_LABEL[target_role]
    pair = f"({a},{b})" if operator == "difference" else f"{{{a},{b}}}"
    return f"{pair}->{t}"


def build_samples(tuples: Iterable[SentenceTuple], operators: Iterable[str] = OPERATORS) -> list[Sample]:
    """All samples of the tuples, tuple by tuple in SAMPLE_SPECS order (deterministic)."""
    wanted = tuple(operators)
    bad = [op for op in wanted if op not in OPERATORS]
    if bad:
        raise ImportFileError(f"unknown operator {bad[0]!r}; expected one of: {', '.join(OPERATORS)}")
    out: list[Sample] = []
    for t in tuples:
        for k, (op, ra, rb, rt) in enumerate(SAMPLE_SPECS):
            if op not in wanted:
                continue
            out.append(Sample(f"{t.tuple_id}#{k}", t.tuple_id, op, variant_label(ra, rb, rt, op),
                              getattr(t, ra), getattr(t, rb), getattr(t, rt), t.topic))
    return out


def count_samples(n_tuples: int) -> dict[str, int]:
    per = {op: sum(1 for s in SAMPLE_SPECS if s[0] == op) for op in OPERATORS}
    return {op: n * n_tuples for op, n in per.items()}


# ---------------------------------------------------------------- CSV reading
@dataclass(frozen=True)
class _Text:
    text: str
    name: str


def _read_text(source) -> tuple[str, str]:
    """(text, display name) from a path, bytes, a text/binary file object (e.g. a Streamlit upload)."""
    if isinstance(source, _Text):
        return source.text, source.name
    name = getattr(source, "name", None) or "upload"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = str(path)
        if not path.is_file():
            raise ImportFileError(f"{name}: file not found")
        data = path.read_bytes()
    elif isinstance(source, bytes):
        data = source
    elif hasattr(source, "read"):
        data = source.read()
        if hasattr(source, "seek"):
            source.seek(0)
    else:
        raise ImportFileError("expected a CSV file")
    if isinstance(data, str):
        return data, name
    if b"\x00" in data[:4096]:
        raise ImportFileError(f"{name}: not a text CSV file (binary content)")
    try:
        return data.decode("utf-8-sig"), name
    except UnicodeDecodeError:
        raise ImportFileError(f"{name}: not UTF-8 text; save the CSV as UTF-8") from None


def _rows_of(source, required: tuple[str, ...], optional: tuple[str, ...]) -> tuple[list[dict], str]:
    text, name = _read_text(source)
    if not text.strip():
        raise ImportFileError(f"{name}: the file is empty")
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        raise ImportFileError(f"{name}: cannot read a CSV header ({exc})") from None
    norm = [h.strip().lower().replace(" ", "_").replace("-", "_") for h in header]
    col: dict[str, int] = {}
    for key in required + optional:
        for alias in _ALIASES[key]:
            if alias in norm:
                col[key] = norm.index(alias)
                break
    missing = [k for k in required if k not in col]
    if missing:
        raise ImportFileError(f"{name}: missing column(s) {', '.join(missing)}; the header must contain "
                              f"{', '.join(required)} (found: {', '.join(h for h in header if h) or 'nothing'})")
    rows: list[dict] = []
    try:
        for line_no, rec in enumerate(reader, start=2):
            if not any(c.strip() for c in rec):
                continue
            if len(rows) >= MAX_ROWS:
                raise ImportFileError(f"{name}: more than {MAX_ROWS} rows; split the file")
            row = {}
            for key, j in col.items():
                value = restore(rec[j]).strip() if j < len(rec) else ""   # our write_tuples neutralised it
                if key in required and not value:
                    raise ImportFileError(f"{name}: line {line_no}: column {key} is empty")
                if len(value) > MAX_TEXT_CHARS:
                    raise ImportFileError(f"{name}: line {line_no}: {key} is longer than {MAX_TEXT_CHARS} characters")
                row[key] = value
            row["_line"] = line_no
            rows.append(row)
    except csv.Error as exc:
        raise ImportFileError(f"{name}: malformed CSV ({exc})") from None
    if not rows:
        raise ImportFileError(f"{name}: no data rows")
    return rows, name


def _tuples_of(rows: list[dict], name: str) -> list[SentenceTuple]:
    seen: set[str] = set()
    out = []
    for k, r in enumerate(rows, start=1):
        tid = r.get("id") or f"t{k:03d}"
        if tid in seen:
            raise ImportFileError(f"{name}: line {r['_line']}: duplicate id {tid!r}")
        seen.add(tid)
        out.append(SentenceTuple(tid, r["s_prev"], r["s_curr"], r["s_next"], r.get("s1", ""), r.get("s2", ""),
                                 r.get("topic", "")))
    return out


def load_tuples(source) -> list[SentenceTuple]:
    """Read sentence tuples from a CSV (path, bytes or file object). Ids default to t001, t002, …"""
    return _tuples_of(*_rows_of(source, TUPLE_FIELDS, ("id", "topic")))


def load_triples(source) -> list[SentenceTuple]:
    """Read consecutive-sentence triples (s_prev, s_curr, s_next; s1/s2 optional) — the input of fusion."""
    return _tuples_of(*_rows_of(source, ("s_prev", "s_curr", "s_next"), ("id", "topic", "s1", "s2")))


def load_samples(source) -> list[Sample]:
    """Read ready-made samples (operator, a, b, target) from a CSV."""
    rows, name = _rows_of(source, ("operator", "a", "b", "target"), ("id", "topic"))
    out = []
    seen: set[str] = set()
    for k, r in enumerate(rows, start=1):
        op = r["operator"].strip().lower()
        op = {"intersection": "overlap", "textoverlap": "overlap", "textdifference": "difference",
              "textunion": "union"}.get(op, op)
        if op not in OPERATORS:
            raise ImportFileError(f"{name}: line {r['_line']}: unknown operator {r['operator']!r}; expected one of: "
                                  f"{', '.join(OPERATORS)}")
        sid = r.get("id") or f"s{k:04d}"
        if sid in seen:
            raise ImportFileError(f"{name}: line {r['_line']}: duplicate id {sid!r}")
        seen.add(sid)
        out.append(Sample(sid, sid, op, "", r["a"], r["b"], r["target"], r.get("topic", "")))
    return out


def load_any(source) -> tuple[str, list[Sample], list[SentenceTuple]]:
    """Detect the CSV kind from its header: ('tuples', samples, tuples) or ('samples', samples, [])."""
    text, name = _read_text(source)
    head = text.splitlines()[0].lower() if text.strip() else ""
    if "operator" in head or "target" in head:
        return "samples", load_samples(_Text(text, name)), []
    tuples = load_tuples(_Text(text, name))
    return "tuples", build_samples(tuples), tuples


def demo_path() -> Path:
    return DATA_DIR / "sentences" / "demo_tuples.csv"


def load_demo() -> list[SentenceTuple]:
    return load_tuples(demo_path())


def write_tuples(tuples: Iterable[SentenceTuple], path_or_file) -> None:
    fields = ["id", "topic", *TUPLE_FIELDS]
    rows = ({"id": t.tuple_id, "topic": t.topic, **dict(zip(TUPLE_FIELDS, (t.s_prev, t.s_curr, t.s_next, t.s1, t.s2)))}
            for t in tuples)
    write_csv(rows, path_or_file, fields)   # the one CSV writer; _rows_of restores what it neutralised
