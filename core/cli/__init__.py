"""`python -m core …` — one entry point, subcommands live in core/cli/commands/.

Each module in COMMANDS defines ``register(subparsers)`` which adds its sub-parser and sets
``func`` (a callable taking the parsed args and returning an exit code). Modules are imported
lazily so that e.g. ``generate`` never pays for importing llama.cpp or torch.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys

from core.errors import UserError
from core.redaction import redact

# name -> module that registers it.  One module per command (or command group).
COMMANDS = {
    "generate": "core.cli.commands.generate",
    "run": "core.cli.commands.run",
    "batches": "core.cli.commands.batches",
    "export-batch": "core.cli.commands.export_batch",
    "import-batch": "core.cli.commands.import_batch",
    "export": "core.cli.commands.export",
    "report": "core.cli.commands.report",
    "import": "core.cli.commands.import_",
    "serve-local": "core.cli.commands.serve_local",
    "embeddings": "core.cli.commands.embeddings",
    "build-hyponyms": "core.cli.commands.build_hyponyms",
    "backup": "core.cli.commands.backup",
    "restore": "core.cli.commands.restore",
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="SetLexSem Studio command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only import the module of the command actually asked for (fast start, fewer deps).
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, module in COMMANDS.items():
        if wanted is not None and name != wanted:
            sub.add_parser(name, help=f"(see python -m core {name} --help)")
            continue
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("core."):
                continue  # command not built yet
            raise
        mod.register(sub)
    return parser


_STDERR = None   # stderr as it was when the command started (see error_line)


def error_line(text: str) -> None:
    """Print one line to the stderr the command started with, redacted of every known key (core/redaction.py).

    llama-cpp-python silences fds 1 and 2 (and swaps ``sys.stderr``) while it loads a model, in whatever thread
    loads it; an error or "interrupted" line printed by the main thread at that moment would vanish. A duplicate of
    the original descriptor keeps such lines visible."""
    stream = _STDERR or sys.stderr
    try:
        print(redact(text), file=stream, flush=True)
    except (OSError, ValueError):
        pass


def _open_stderr():
    stream = sys.stderr
    try:
        fd = os.dup(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):   # e.g. a test's capture object
        return stream, False
    return os.fdopen(fd, "w", encoding=getattr(stream, "encoding", None) or "utf-8", errors="replace"), True


EXIT_FAST = False   # set by main() when the command that just returned allows exit_fast (``python -m core``)


def main(argv: list[str] | None = None) -> int:
    global _STDERR, EXIT_FAST
    EXIT_FAST = False
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    _STDERR, owned = _open_stderr()
    try:
        code = int(args.func(args) or 0)
        EXIT_FAST = bool(getattr(args, "exit_fast", False))
        return code
    except UserError as exc:
        error_line(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    finally:
        if owned:
            _STDERR.close()
        _STDERR = None


def exit_fast(code: int) -> None:
    """End the process the way Python's own exit does, minus tearing the interpreter down object by object.

    After a command whose connections, journals and files are all closed (``run``: every DuckDB connection is a
    closed context, the journal is closed, the HTTP session too), what Python does at exit that anyone can observe is:
    wait for the threads that are not daemons (``threading._shutdown``, which also stops idle thread pools), run the
    atexit handlers, flush stdout and stderr. The rest — freeing every module's objects one by one, ~130,000 of them
    once pandas, pyarrow and DuckDB are loaded — takes 0.1–0.2 s and changes nothing, so it is skipped with
    ``os._exit``. Where this Python has no ``threading._shutdown`` (not CPython), the ordinary exit is taken."""
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    if not callable(shutdown):
        sys.exit(code)
    shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            code = code or 120   # what Python's exit returns when it cannot flush stdout
    os._exit(code)
