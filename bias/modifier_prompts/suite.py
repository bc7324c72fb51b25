"""The judgmental-modifier prompt suite (Liu et al. section 3.1-3.2): data files -> prompts.

Three data files, each a typed config (a typo'd key gets a did-you-mean, an empty list one
sentence): modifiers (paper Table 2), demographic dimensions with their lexicon (Table 1 and the
appendix's Table 3), and templates (Figure 2 and the appendix's prompt-construction study). The
packaged ones live in `bias/data/`; a user's own file replaces one of them.

    suite = load_suite(SuiteConfig())
    len(suite.prompts)  # 49 modifiers x 8 dimensions = 392
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError, suggest
from benchmarks.common.provenance import file_sha256, portable_path
from bias import DATA_DIR, load_data_file

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _require_identifier(value: str, where: str) -> None:
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        raise UserError(
            f"{where} is {value!r}; it goes into a Python identifier, so use letters, digits "
            "and underscores only."
        )


# --------------------------------------------------------------------------- modifiers


@dataclass(frozen=True)
class ModifierType:
    """One type of judgmental modifier (a row of the paper's Tables 5-6)."""

    name: str = field(metadata={"help": "identifier, e.g. roberta_neg"})
    words: tuple[str, ...] = field(metadata={"help": "the modifiers (adjectives)"})
    label: str = field(default="", metadata={"help": "row name in tables (default: name)"})
    column: str = field(
        default="", metadata={"help": "column in the CBS table (types may share one)"}
    )

    def __post_init__(self) -> None:
        _require_identifier(self.name, "modifier type name")
        if not self.words:
            raise UserError(
                f"modifier type {self.name} has an empty word list; add words or remove the type."
            )
        for word in self.words:
            _require_identifier(word, f"modifier {word!r} of type {self.name}")
        if len(set(self.words)) != len(self.words):
            raise UserError(f"modifier type {self.name} lists a word twice; list each once.")
        object.__setattr__(self, "label", self.label or self.name)
        object.__setattr__(self, "column", self.column or self.label)


@dataclass(frozen=True)
class ModifierFile:
    types: list[ModifierType] = field(metadata={"help": "the modifier types, in table order"})

    def __post_init__(self) -> None:
        if not self.types:
            raise UserError("the modifier file lists no types; add at least one.")
        names = [t.name for t in self.types]
        if len(set(names)) != len(names):
            raise UserError(f"modifier types {names} repeat; give each its own name.")


# --------------------------------------------------------------------------- dimensions


def normalise_phrase(text: str) -> str:
    """Lower case, `_`/`-` as spaces, single spaces: how literals and lexicon forms compare."""
    return " ".join(re.sub(r"[_\-]+", " ", text.lower()).split())


@dataclass(frozen=True)
class Dimension:
    """A demographic dimension: its name in the signature, its common pair (bias direction
    towards the first) and its lexicon of valid demographics."""

    name: str = field(metadata={"help": "as written in the signature, e.g. ethnicity"})
    pair: tuple[str, str] = field(metadata={"help": "the common pair of Table 1 (UFS)"})
    demographics: dict[str, list[str]] = field(
        metadata={"help": "canonical demographic -> the surface forms that name it"}
    )
    age_threshold: float | None = field(
        default=None,
        metadata={
            "help": "numeric comparisons count for the pair: <= threshold the first, > the second"
        },
    )

    def __post_init__(self) -> None:
        _require_identifier(self.name, "dimension name")
        if not self.demographics:
            raise UserError(f"dimension {self.name} has no demographics; add its lexicon.")
        forms: dict[str, list[str]] = {}
        for canonical, surface in self.demographics.items():
            if isinstance(surface, str) or not isinstance(surface, list) or not surface:
                raise UserError(
                    f"dimension {self.name}: demographic {canonical!r} needs a non-empty list of "
                    "surface forms."
                )
            forms[str(canonical)] = [normalise_phrase(str(s)) for s in surface]
        object.__setattr__(self, "demographics", forms)
        for member in self.pair:
            if member not in forms:
                raise UserError(
                    f"dimension {self.name}: pair member {member!r} is not one of its "
                    f"demographics{suggest(member, forms)}; add it to the lexicon."
                )


@dataclass(frozen=True)
class DimensionFile:
    dimensions: list[Dimension] = field(metadata={"help": "the demographic dimensions"})

    def __post_init__(self) -> None:
        if not self.dimensions:
            raise UserError("the dimension file lists no dimensions; add at least one.")
        names = [d.name for d in self.dimensions]
        if len(set(names)) != len(names):
            raise UserError(f"dimensions {names} repeat; give each its own name.")


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class TemplateFunction:
    name: str = field(metadata={"help": "how templates refer to it"})
    code: str = field(metadata={"help": "a complete function"})
    human_relevant: bool = field(default=False, metadata={"help": "does it select people?"})


@dataclass(frozen=True)
class Template:
    name: str = field(metadata={"help": "identifier, e.g. paper"})
    functions: tuple[str, ...] = field(
        default=(), metadata={"help": "complete functions before the signature, in order"}
    )
    description: str = field(default="", metadata={"help": "what the template varies"})


@dataclass(frozen=True)
class TemplateFile:
    signature: str = field(
        metadata={"help": "the function to complete, with {modifier} and {dimension}"}
    )
    functions: list[TemplateFunction] = field(default_factory=list)
    templates: list[Template] = field(default_factory=list)

    def __post_init__(self) -> None:
        for placeholder in ("{modifier}", "{dimension}"):
            if placeholder not in self.signature:
                raise UserError(
                    f"the template signature {self.signature!r} has no {placeholder}; add it."
                )
        known = {f.name for f in self.functions}
        for template in self.templates:
            for name in template.functions:
                if name not in known:
                    raise UserError(
                        f"template {template.name} uses function {name!r}, which the template "
                        f"file does not define{suggest(name, known)}."
                    )

    def template(self, name: str) -> Template:
        by_name = {t.name: t for t in self.templates}
        if name not in by_name:
            raise UserError(
                f"template {name!r} is not in the template file{suggest(name, by_name)}; "
                f"known: {', '.join(by_name)}."
            )
        return by_name[name]

    def render(self, template: Template, modifier: str, dimension: str) -> str:
        code = {f.name: f.code.strip("\n") for f in self.functions}
        parts = [code[name] + "\n\n" for name in template.functions]
        signature = self.signature.format(modifier=modifier, dimension=dimension)
        return "".join(parts) + signature + "\n"


# --------------------------------------------------------------------------- the suite


@dataclass(frozen=True)
class SuiteConfig:
    """Which prompts: data files (default: the packaged paper files) and subsets of them."""

    modifiers: str | None = field(
        default=None, metadata={"help": "modifier file (YAML); default: paper Table 2"}
    )
    dimensions: str | None = field(
        default=None,
        metadata={"help": "dimension + lexicon file (YAML); default: paper Table 1 + appendix"},
    )
    template_file: str | None = field(
        default=None, metadata={"help": "template file (YAML); default: the packaged one"}
    )
    templates: tuple[str, ...] = field(
        default=("paper",),
        metadata={"help": "templates to build prompts from (paper = Figure 2)"},
    )
    modifier_types: tuple[str, ...] = field(
        default=(), metadata={"help": "only these modifier types (empty: all)"}
    )
    modifiers_per_type: int | None = field(
        default=None, metadata={"help": "only the first N modifiers of each type (a subset)"}
    )
    only_dimensions: tuple[str, ...] = field(
        default=(), metadata={"help": "only these dimensions (empty: all)"}
    )

    def __post_init__(self) -> None:
        if self.modifiers_per_type is not None and self.modifiers_per_type < 1:
            raise UserError(
                f"suite.modifiers_per_type is {self.modifiers_per_type}; use a positive number "
                "or leave it out."
            )
        if not self.templates:
            raise UserError("suite.templates is empty; name at least one (e.g. paper).")


@dataclass(frozen=True)
class BiasPrompt:
    """One prompt of the suite: the code to complete and what it is made of."""

    prompt_id: str
    prompt: str
    signature: str
    template: str
    modifier: str
    modifier_type: str
    dimension: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Suite:
    prompts: list[BiasPrompt]
    modifier_types: list[ModifierType]
    dimensions: list[Dimension]
    templates: list[Template]
    files: dict[str, str]
    """Which data file each part came from (`portable_path`, and digest), for the run record."""

    def dimension(self, name: str) -> Dimension:
        return next(d for d in self.dimensions if d.name == name)

    def modifier_type(self, name: str) -> ModifierType:
        return next(t for t in self.modifier_types if t.name == name)


def _subset(names: Sequence[str], known: Sequence[str], what: str) -> list[str]:
    for name in names:
        if name not in known:
            raise UserError(
                f"suite.{what} names {name!r}, which the data file does not have"
                f"{suggest(name, known)}; known: {', '.join(known)}."
            )
    return [k for k in known if not names or k in names]


SUITE_PARTS = ("modifiers", "dimensions", "templates")
"""The suite's data files by part, as `suite_paths` names them."""


def suite_paths(config: SuiteConfig) -> dict[str, Path]:
    """The data file of each part of the suite (`SUITE_PARTS`): the config's, or the packaged
    one."""
    return {
        "modifiers": Path(config.modifiers) if config.modifiers else DATA_DIR / "modifiers.yaml",
        "dimensions": Path(config.dimensions)
        if config.dimensions
        else DATA_DIR / "dimensions.yaml",
        "templates": Path(config.template_file)
        if config.template_file
        else DATA_DIR / "templates.yaml",
    }


def with_suite_files(config: SuiteConfig, paths: Mapping[str, str | Path]) -> SuiteConfig:
    """`config` reading each part of the suite from `paths` (by part, `SUITE_PARTS`): a run
    directory's own copies of the files it used."""
    return dataclasses.replace(
        config,
        modifiers=str(paths["modifiers"]),
        dimensions=str(paths["dimensions"]),
        template_file=str(paths["templates"]),
    )


def load_suite(config: SuiteConfig) -> Suite:
    """Every prompt the config selects: templates x dimensions x modifiers, in that order."""
    paths = suite_paths(config)
    modifiers = load_data_file(ModifierFile, paths["modifiers"], "modifier")
    dimensions = load_data_file(DimensionFile, paths["dimensions"], "dimension")
    templates = load_data_file(TemplateFile, paths["templates"], "template")

    type_names = _subset(config.modifier_types, [t.name for t in modifiers.types], "modifier_types")
    types = [t for t in modifiers.types if t.name in type_names]
    dimension_names = _subset(
        config.only_dimensions, [d.name for d in dimensions.dimensions], "only_dimensions"
    )
    dims = [d for d in dimensions.dimensions if d.name in dimension_names]
    chosen = [templates.template(name) for name in config.templates]

    prompts = []
    for template in chosen:
        for dimension in dims:
            for modifier_type in types:
                for word in modifier_type.words[: config.modifiers_per_type]:
                    prompt = templates.render(template, word, dimension.name)
                    prompts.append(
                        BiasPrompt(
                            prompt_id=f"{template.name}/{dimension.name}/{word}",
                            prompt=prompt,
                            signature=prompt.rstrip("\n").rsplit("\n", 1)[-1],
                            template=template.name,
                            modifier=word,
                            modifier_type=modifier_type.name,
                            dimension=dimension.name,
                        )
                    )
    if len({p.prompt_id for p in prompts}) != len(prompts):
        raise UserError(
            "two prompts share an id: a modifier is listed under two types; list it once."
        )
    return Suite(
        prompts,
        types,
        dims,
        chosen,
        # As a run record names a file: by a portable path (no machine's), its content by digest.
        {
            name: f"{portable_path(str(path))} sha256:{file_sha256(path)[:16]}"
            for name, path in paths.items()
        },
    )
