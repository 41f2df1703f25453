"""`python -m core …` — one entry point, subcommands live in core/commands/.

Each module in COMMANDS defines ``register(subparsers)`` which adds its sub-parser and sets
``func`` (a callable taking the parsed args and returning an exit code). Modules are imported
lazily so that e.g. ``generate`` never pays for importing llama.cpp or torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from core.errors import UserError

# name -> module that registers it.  One module per command (or command group).
COMMANDS = {
    "generate": "core.commands.generate",
    "run": "core.commands.run",
    "export": "core.commands.export",
    "import": "core.commands.import_",
    "serve-local": "core.commands.serve_local",
    "embeddings": "core.commands.embeddings",
    "build-hyponyms": "core.commands.build_hyponyms",
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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
