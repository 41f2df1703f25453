"""Output files named by users (CLI ``--out`` flags, exports): refused *before* any slow work when they cannot be
written, with one clear line — never a traceback after minutes of work, never a silently created folder."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from core.errors import UserError


def check_output_path(path: str | os.PathLike, suffixes: Sequence[str], *, flag: str | None = None,
                      probe: bool = True) -> Path:
    """The output path as a Path, or UserError when its name does not end in one of ``suffixes``, it is a
    directory, its folder does not exist, or (``probe``) the file cannot be created there — probed by opening it for
    appending, and removed again if it did not exist before."""
    p = Path(path).expanduser()
    label = f"{flag} {str(path)!r}" if flag else repr(str(path))
    if not any(p.name.lower().endswith(s) for s in suffixes):
        *rest, last = suffixes
        raise UserError(f"{label}: use a {', '.join(rest) + ' or ' if rest else ''}{last} file name")
    if p.is_dir():
        raise UserError(f"{flag + ' ' if flag else ''}{path} is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"output directory does not exist: {parent}")
    if probe:
        existed = p.exists()
        try:
            open(p, "ab").close()
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
        if not existed:
            p.unlink(missing_ok=True)
    return p
