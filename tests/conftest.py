"""Fixtures shared by several test files."""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture()
def cli(capsys):
    """``python -m core …`` in-process (``core.cli.main``): exit code, stdout and stderr as a user sees them —
    much faster than a subprocess per command."""
    from core.cli import main

    def call(*args):
        capsys.readouterr()
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    return call
