"""Display labels of the result columns: the readable axis, legend and table names every view uses."""

from __future__ import annotations

LABELS = {
    "operation": "Operation", "size_a": "|A|", "size_b": "|B|", "members": "Token type", "length": "Token length",
    "pos": "Part of speech",
    "decile": "Frequency decile", "decile_mode": "Decile mode", "condition": "Deceptive condition",
    "hypernym_a": "Hypernym A", "hypernym_b": "Hypernym B", "swap_count": "Swapped members", "overlap": "Overlap",
    "phrasing": "Phrasing", "approach": "Prompting approach", "shots": "k (shots)", "model": "Model", "task": "Task",
    "name": "Run name", "run_id": "Run", "quantifier": "Quantifier", "object": "Object", "noun_group": "Noun group",
    "total": "Total", "count_large": "# large", "count_small": "# small", "predicate": "Predicate",
    "template": "Template", "label": "Gold label", "series": "Series", "answer_format": "Answer format",
    "reasoning": "Reasoning effort",
}


def label(column: str) -> str:
    """Readable axis / legend label of a column."""
    return LABELS.get(column, column.replace("_", " ").capitalize())
