"""Which backend generates: the registry of kinds, the spec that names one, and `load_backend`.

A new backend is one module whose class subclasses `BackendBase` (with its own `Options`
dataclass) plus one line:

    BACKENDS.register("mykind", "mypackage.mymodule:MyBackend")

after which `BackendSpec(kind="mykind", ...)`, `load_backend` and `models: [{kind: mykind, ...}]`
in a `boi run` config all know it. Registry entries are strings, so naming a kind imports
nothing; its module (which must not import heavy libraries at module level) is imported when a
spec of that kind is built, and its heavy dependencies when the backend is loaded.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.config import convert_value
from benchmarks.common.config import from_mapping as options_from_mapping
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.models import check_backends
from benchmarks.common.registry import Registry
from benchmarks.generation._backend import Backend, BackendBase, check_seeds

BACKENDS: Registry[type[BackendBase]] = Registry(
    "backend kind",
    {
        "hf": "benchmarks.generation._hf:HFBackend",
        "vllm": "benchmarks.generation._vllm:VLLMBackend",
        "openai": "benchmarks.generation._openai:OpenAIBackend",
        "reference": "benchmarks.generation._reference:ReferenceBackend",
        "completions": "benchmarks.generation.given:GivenCompletionsBackend",
    },
    base=BackendBase,
)

SHARED_KEYS = ("kind", "model")


def backend_class(kind: str) -> type[BackendBase]:
    """The backend class registered as `kind` (a UserError with did-you-mean when unknown)."""
    if not isinstance(kind, str):
        raise UserError(f"backend kind must be one of {BACKENDS.choices_help()}, not {kind!r}.")
    cls: type[BackendBase] = BACKENDS.load(kind)
    options = getattr(cls, "Options", None)
    if not (isinstance(options, type) and dataclasses.is_dataclass(options)):
        raise TypeError(f"backend {kind!r} ({cls.__name__}) must declare an Options dataclass")
    clash = [f.name for f in dataclasses.fields(options) if f.name in SHARED_KEYS]
    if clash:
        raise TypeError(f"{cls.__name__}.Options must not redefine {', '.join(clash)}")
    return cls


def option_keys(kind: str) -> tuple[str, ...]:
    """The config keys a spec of `kind` accepts: kind, model, then its options."""
    options = backend_class(kind).Options
    return SHARED_KEYS + tuple(f.name for f in dataclasses.fields(options) if f.init)


def _options(kind: str, data: Mapping[str, Any], where: str) -> Any:
    """The kind's options from flat keys, with a did-you-mean among that kind's keys."""
    known = option_keys(kind)
    for key in data:
        if key not in known:
            raise UserError(
                f"{where}.{key} is not a config key of backend kind {kind!r}"
                f"{suggest(str(key), known)}; known keys: {', '.join(known)}."
            )
    return options_from_mapping(backend_class(kind).Options, data, where)


@dataclass(frozen=True, init=False)
class BackendSpec:
    """Which model generates, and how to reach it: `kind` (a `BACKENDS` name), `model`, and
    `options`, an instance of that kind's `Options` dataclass.

    Options may be given as keywords, as in configs, where they sit flat beside `kind`:
    `BackendSpec(kind="openai", model="m", base_url="http://127.0.0.1:8000/v1", retries=3)`
    is `BackendSpec("openai", "m", OpenAIOptions(base_url=..., retries=3))`; a key that is not
    an option of that kind is a UserError naming the closest one.
    """

    kind: str = field(
        default="hf",
        metadata={
            "help": f"which backend generates: {BACKENDS.choices_help()} (each has its own "
            "options, given beside kind)"
        },
    )
    model: str | None = field(
        default=None,
        metadata={
            "help": "the model id the backend loads: HF id, local folder, or None/'embedded' "
            "for the embedded SmolLM2-135M; servers: the served model name"
        },
    )
    options: Any = field(
        default=None,
        metadata={"help": "the kind's options (its Options dataclass; default: its defaults)"},
    )

    def __init__(
        self, kind: str = "hf", model: str | None = None, options: Any = None, **flat: Any
    ) -> None:
        cls = backend_class(kind)
        if options is None:
            options = _options(kind, flat, "backend")
        elif flat:
            raise TypeError("give backend options as options=... or as keywords, not both")
        elif not isinstance(options, cls.Options):
            raise UserError(
                f"backend kind {kind!r} takes {cls.Options.__name__} options, not "
                f"{type(options).__name__}."
            )
        required = getattr(cls, "model_required", "")
        if required and not model:
            raise UserError(f"a backend of kind {kind} needs model: {required}.")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "options", options)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "backend") -> BackendSpec:
        """A spec from a flat config mapping `{kind: ..., model: ..., <options of kind>}`
        (the hook `benchmarks.common.config` uses for `models: [...]`)."""
        data = dict(data)
        kind = data.pop("kind", "hf")
        model = convert_value(data.pop("model", None), str | None, f"{where}.model")
        return cls(kind, model, _options(kind, data, where))

    def to_mapping(self) -> dict[str, Any]:
        """The flat mapping `from_mapping` reads: kind, model, then the kind's options."""
        options = {f.name: getattr(self.options, f.name) for f in dataclasses.fields(self.options)}
        return {"kind": self.kind, "model": self.model, **options}

    def identity_mapping(self, content: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`to_mapping` without what only decides how requests travel (the options an Options
        class marks `metadata={"operational": True}`: concurrency, timeouts, retries, the key's
        variable; a pool's servers, through its `identity_options`): what a run's identity
        hashes, so a run resumes after such a change. `content`: the backend's
        `content_identity` as a record holds it (a run rebuilt from its manifest reads no file
        the manifest names only by its last part); None: read from the files."""
        options = {
            f.name: getattr(self.options, f.name)
            for f in dataclasses.fields(self.options)
            if not f.metadata.get("operational")
        }
        hook = getattr(self.options, "identity_options", None)
        if callable(hook):  # what the options' class hashes instead of a field's own value
            options.update(hook())
        if content is None:
            content = backend_class(self.kind).content_identity(self)
        return {"kind": self.kind, "model": self.model, **options, **content}

    @property
    def label(self) -> str:
        """The model's label, its short name in tables, result rows (`model`) and results paths:
        kind and the model id's last path part."""
        backend = backend_class(self.kind)
        name = self.model or backend.default_model
        own = backend.label_name(self)
        text = f"{self.kind}-{own or Path(name).name or name}" if own or name else self.kind
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)

    def describe(self) -> dict[str, Any]:
        """The spec as JSON for run records (an API key's variable name, never its value)."""
        return self.to_mapping()


def model_flag_specs(names: Sequence[str]) -> list[dict[str, Any]]:
    """Config entries for the commands' `--model NAME` flags: a backend kind whose backend takes
    no model (`reference`) by its name, anything else a local `hf` model (HF id, folder,
    'embedded')."""
    return [
        {"kind": name} if name in BACKENDS and not backend_class(name).default_model and not backend_class(name).model_required
        else {"kind": "hf", "model": name}
        for name in names
    ]  # fmt: skip


def check_models(specs: Iterable[Any], seeds: Sequence[int] = ()) -> None:
    """Before a run claims its directory: every model it will use can be reached
    (`benchmarks.common.models.check_backends`: servers answer, local models are there) and
    passes its backend's own check (`BackendBase.check`); a backend whose samples do not
    depend on the seed is refused under several `seeds`."""
    specs = list(specs)
    check_backends(specs)
    for spec in specs:
        backend_class(spec.kind).check(spec)
        check_seeds(backend_class(spec.kind), spec.label, seeds)


def load_backend(spec: BackendSpec) -> Backend:
    """The backend `spec` names, loaded (models are read here; servers are first contacted on
    the first request)."""
    return backend_class(spec.kind)(spec)
