"""The reference pages of the documentation site, generated from the code so they cannot drift.

`docs/gen_reference.py` calls `write_pages` while `mkdocs build` runs (mkdocs-gen-files), so the
site is rebuilt from what the code says at that moment:

- `reference/cli.md`: every command and option, read from `boi.cli.make_parser()`;
- `reference/config.md`: every config key with its type, default and help, read from the config
  dataclasses (`field(metadata={"help": ...})`, the one help convention), backends' and critic
  scorers' options read from their registries;
- `reference/index.md`: the hand-written page with the table of every command, read from the
  parser, in place of its `COMMANDS_MARKER` line;
- `reference/transformations.md`: the registry `perturb.transforms.TRANSFORMS` with each one's
  family, ReCode name, parameters, and a before/after on a real HumanEval problem (computing
  the examples loads two models, so they are cached keyed by the digest of everything they are
  computed from: `cached_transformation_examples`);
- `reference/metrics.md`: the docstrings of the metric modules, which state each equation and
  the paper it comes from.

A page is refused (the build fails) when the code has something the reference cannot document:
an option or config key without help text, a config dataclass the config page does not reach, a
metric function without a docstring. `python scripts/docs_reference.py OUT_DIR` writes the pages
outside a build.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib
import inspect
import json
import pkgutil
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script or from mkdocs-gen-files
    sys.path.insert(0, str(ROOT))

LIBRARY = ("benchmarks", "perturb", "critic", "finetune", "bias", "boi")


class ReferenceError(Exception):
    """The code has something the reference cannot document; the message says what."""


# --------------------------------------------------------------------------- Markdown helpers


def md_cell(text: str) -> str:
    """`text` for a Markdown table cell: one line, pipes escaped outside code spans (inside one,
    Python-Markdown's tables already keep a pipe, and an escape would be shown as `\\|`), `<`/`>`
    escaped outside code spans (help texts say `<model>`, which a browser would take for a tag),
    and page pointers (`docs/results.md`) made links."""
    parts = " ".join(str(text).split()).split("`")
    for i, part in enumerate(parts):
        if i % 2 == 0:
            part = part.replace("|", "\\|")
            part = part.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")
            part = link_pages(part)
        parts[i] = part
    return "`".join(parts) if len(parts) % 2 else "`".join(parts[:-1]) + "\\`" + parts[-1]


PAGE_POINTER = re.compile(r"(?<![\w/])(?<!\]\()docs/((?:[\w-]+/)*[\w-]+\.md)\b")
"""A page named by its path in the repository (`docs/how-to/scale-out.md`), as help texts and
docstrings name them."""


def page_title(page: str) -> str | None:
    """The first `# ` heading of `docs/page`, or None when there is no such page."""
    path = ROOT / "docs" / page
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page


def link_pages(text: str, here: str = "reference") -> str:
    """Every pointer to a docs page in `text` (outside code) as a link to that page, titled with
    its heading, relative to the generated page's folder `here`; a path that names no page is
    left as written (the strict build reports links, not prose)."""

    def link(match: re.Match[str]) -> str:
        title = page_title(match.group(1))
        if title is None:
            return match.group(0)
        up = "../" * (here.count("/") + 1) if here else ""
        return f"[{title}]({up}{match.group(1)})"

    return PAGE_POINTER.sub(link, text)


def code(text: str) -> str:
    """`text` as an inline code span, whatever backticks it holds."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def prose(doc: str | None) -> str:
    """A docstring as Markdown paragraphs (indentation removed, so its indented lines stay
    indented blocks), page pointers outside code made links."""
    text = inspect.cleandoc(doc or "").strip()
    parts = text.split("`")
    return "`".join(link_pages(p) if i % 2 == 0 else p for i, p in enumerate(parts))


def class_doc(cls: type) -> str:
    """A config class's docstring, or "" where it has none of its own: a dataclass without one
    gets its signature (`DatasetSpec(name: 'str' = ...)`, `<factory>`), which is no prose."""
    doc = cls.__doc__ or ""
    return "" if doc.startswith(f"{cls.__name__}(") else prose(doc)


def anchor(text: str) -> str:
    """The id Python-Markdown's toc extension gives a heading `text`."""
    slug = re.sub(r"[^\w\s-]", "", text.lower()).strip()
    return re.sub(r"[-\s]+", "-", slug)


GENERATED_NOTE = (
    "<!-- Generated by scripts/docs_reference.py at build time: edit the code, not this page. -->"
)


# --------------------------------------------------------------------------- the command line


@dataclasses.dataclass(frozen=True)
class Command:
    """One command of the tree: its words (`boi bias test`) and its parser."""

    path: str
    parser: argparse.ArgumentParser
    help: str


def commands(
    parser: argparse.ArgumentParser, path: str = "boi", help: str = ""
) -> Iterator[Command]:
    """Every command and subcommand of `parser`, depth first, in the order `--help` lists them."""
    yield Command(path, parser, help)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}", helps.get(name, ""))


def documented_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a command takes (not -h, not the subcommand selector)."""
    return [
        a
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
        and a.help != argparse.SUPPRESS
    ]


def option_name(action: argparse.Action) -> str:
    """How the reference names an argument: its flags (`--out`), or a positional's dest."""
    return ", ".join(action.option_strings) if action.option_strings else action.dest


def undocumented_options(parser: argparse.ArgumentParser) -> list[str]:
    """`"boi CMD OPTION"` for every argument without help text."""
    return [
        f"{command.path} {option_name(action)}"
        for command in commands(parser)
        for action in documented_actions(command.parser)
        if not (action.help or "").strip()
    ]


def _help_text(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help:
        return ""
    return parser._get_formatter()._expand_help(action)


def _argument(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None and not action.metavar:
        return "{" + ",".join(map(str, action.choices)) + "}"
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    many = {"+": f"{metavar} [...]", "*": f"[{metavar} ...]", "?": f"[{metavar}]"}
    return many.get(str(action.nargs), metavar)


def _default(action: argparse.Action, help_text: str) -> str:
    default = action.default
    if default in (None, argparse.SUPPRESS, False) or "(default:" in help_text:
        return ""
    if isinstance(default, list | tuple):
        default = " ".join(map(str, default))
    return code(default)


def commands_table(parser: argparse.ArgumentParser, page: str = "") -> list[str]:
    """Every command and subcommand of `parser` as table rows (its words and positional
    arguments, linked to its section of the CLI reference `page`, and its help): read from the
    parser, so no command can be missing."""
    rows = ["| command | what it does |", "|---|---|"]
    for command in list(commands(parser))[1:]:
        positionals = [  # as the prose around the table names them: DATASET, RUN_DIR
            _argument(a) if a.metavar or a.choices else _argument(a).upper()
            for a in documented_actions(command.parser)
            if not a.option_strings and _argument(a)
        ]
        shown = code(" ".join([command.path, *positionals]))
        rows.append(f"| [{shown}]({page}#{anchor(command.path)}) | {md_cell(command.help)} |")
    return rows


COMMANDS_MARKER = "<!-- generated: commands at a glance -->"
"""Where `reference/index.md` gets the table of every command (`commands_table`) at build time."""


def reference_index_page(parser: argparse.ArgumentParser | None = None) -> str:
    """`docs/reference/index.md` as written, its `COMMANDS_MARKER` line replaced with the table
    of every command: the page's prose is written by hand, the list comes from the parser."""
    if parser is None:
        from boi.cli import make_parser

        parser = make_parser()
    source = (ROOT / "docs" / "reference" / "index.md").read_text(encoding="utf-8")
    if COMMANDS_MARKER not in source.splitlines():
        raise ReferenceError(
            f"docs/reference/index.md has no line {COMMANDS_MARKER!r}; put it where the table "
            "of commands goes"
        )
    table = "\n".join(commands_table(parser, "cli.md"))
    return (
        "\n".join(table if line == COMMANDS_MARKER else line for line in source.splitlines()) + "\n"
    )


def cli_page(parser: argparse.ArgumentParser | None = None) -> str:
    """The CLI reference: every command, its description, usage and arguments."""
    if parser is None:
        from boi.cli import make_parser

        parser = make_parser()
    missing = undocumented_options(parser)
    if missing:
        raise ReferenceError(
            "these command-line options have no help text, so the reference cannot say what "
            "they do; give each a help=...: " + "; ".join(missing)
        )
    tree = list(commands(parser))
    out = [
        GENERATED_NOTE,
        "# Command line",
        "",
        "Every command and option `boi` has, read from its argument parser "
        "(`boi.cli.make_parser()`) when this site was built. `boi COMMAND --help` prints the "
        "same. Options generated from a config dataclass show that dataclass's default; "
        "the same keys are described with their types in the [config reference](config.md).",
        "",
        *commands_table(parser),
    ]
    for command in tree[1:]:
        level = "#" * min(command.path.count(" ") + 1, 4)
        out += ["", f"{level} {command.path}", ""]
        out += [prose(command.parser.description or command.help), ""]
        usage = command.parser.format_usage().strip().removeprefix("usage: ")
        out += ["```text", usage, "```", ""]
        examples = (command.parser.epilog or "").splitlines()[1:]  # after "examples:"
        if examples:
            out += ["Examples:", "", "```bash", *(e.strip() for e in examples), "```", ""]
        actions = documented_actions(command.parser)
        if not actions:
            continue
        out += ["| argument | value | default | what it does |", "|---|---|---|---|"]
        for action in actions:
            text = _help_text(command.parser, action)
            names = " ".join(code(name) for name in action.option_strings) or code(action.dest)
            value = code(_argument(action)) if _argument(action) else ""
            out.append(f"| {names} | {value} | {_default(action, text)} | {md_cell(text)} |")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- config keys


@dataclasses.dataclass(frozen=True)
class ConfigRoot:
    """A config dataclass users write: as a YAML file (`--config`) or through flags."""

    cls: type
    where: str


def _config_roots() -> tuple[list[ConfigRoot], list[ConfigRoot], list[ConfigRoot]]:
    """(YAML configs, flag-only configs, data files): every config dataclass users give values."""
    from benchmarks.copy_index import IndexConfig
    from benchmarks.execution import ExecutionConfig
    from bias.fairness_tests.ablations import ExperimentConfig
    from bias.fairness_tests.mitigation import MitigationFile
    from bias.fairness_tests.run import FairnessRunConfig
    from bias.fairness_tests.tasks import SensitiveAttributeFile
    from bias.modifier_prompts.classifier import ClassifierConfig
    from bias.modifier_prompts.run import BiasRunConfig
    from bias.modifier_prompts.suite import DimensionFile, ModifierFile, SuiteConfig, TemplateFile
    from boi.analysis.attention import AttentionConfig
    from boi.analysis.copies import CopiesConfig
    from boi.analysis.hints import HintsConfig
    from boi.analysis.leaks import LeaksConfig
    from boi.analysis.minimal import MinimalConfig
    from boi.runner import RunConfig
    from critic.scoring import EndpointScorerConfig, HFScorerConfig
    from critic.similarity import PlausibilityGate
    from critic.table2 import Table2Config
    from finetune.config import TrainConfig
    from perturb.catalogue import PerturbConfig
    from perturb.keyword_embedder import EmbedderFinetuneConfig
    from perturb.keywords import KeywordConfig

    files = [
        ConfigRoot(RunConfig, "`boi run --config FILE.yaml` (bundled: `boi/configs/*.yaml`)"),
        ConfigRoot(BiasRunConfig, "`boi bias run --config FILE.yaml` (bundled: `bias/configs/`)"),
        ConfigRoot(
            FairnessRunConfig,
            "`boi bias test --config FILE.yaml` (bundled: `bias/configs/test-*.yaml`)",
        ),
        ConfigRoot(
            ExperimentConfig, "`boi bias experiment CONFIG` (bundled: `bias/configs/exp-*.yaml`)"
        ),
        ConfigRoot(TrainConfig, "`boi finetune train --config FILE.yaml`"),
    ]
    flags = [
        ConfigRoot(PerturbConfig, "`boi perturb` (and `perturb:` in a `boi run` config)"),
        ConfigRoot(
            KeywordConfig,
            "`boi perturb`, `boi keywords extract`; `perturb.keywords:` in a run config",
        ),
        ConfigRoot(EmbedderFinetuneConfig, "`boi keywords finetune-embedder`"),
        ConfigRoot(ExecutionConfig, "`boi execute`; `execution:` in a run config"),
        ConfigRoot(HFScorerConfig, "`boi critic --model`; `critic.scorer` when `critic.kind: hf`"),
        ConfigRoot(
            EndpointScorerConfig,
            "`boi critic --endpoint`; `critic.scorer` when `critic.kind: endpoint`",
        ),
        ConfigRoot(PlausibilityGate, "`boi critic` (the gate)"),
        ConfigRoot(Table2Config, "`boi critic table2`"),
        ConfigRoot(ClassifierConfig, "`boi bias train-classifier`"),
        ConfigRoot(SuiteConfig, "`boi bias prompts`; `suite:` in a bias run config"),
        ConfigRoot(CopiesConfig, "`boi analyze copies`"),
        ConfigRoot(IndexConfig, "`boi analyze copies` (the corpus index)"),
        ConfigRoot(AttentionConfig, "`boi analyze attention`"),
        ConfigRoot(HintsConfig, "`boi analyze hints`"),
        ConfigRoot(LeaksConfig, "`boi analyze leaks`"),
        ConfigRoot(MinimalConfig, "`boi analyze minimal`"),
    ]
    data = [
        ConfigRoot(ModifierFile, "`suite.modifiers` (bundled: `bias/data/modifiers.yaml`)"),
        ConfigRoot(DimensionFile, "`suite.dimensions` (bundled: `bias/data/dimensions.yaml`)"),
        ConfigRoot(TemplateFile, "`suite.templates` (bundled: `bias/data/templates.yaml`)"),
        ConfigRoot(MitigationFile, "`mitigation_file` (bundled: `bias/data/mitigation.yaml`)"),
        ConfigRoot(
            SensitiveAttributeFile,
            "the sensitive attributes (bundled: `bias/data/sensitive_attributes.yaml`)",
        ),
    ]
    return files, flags, data


@dataclasses.dataclass(frozen=True)
class ConfigKey:
    """One key of a config: its dotted path, type, default and help."""

    path: str
    type: str
    default: str
    help: str
    owner: type
    section: bool = False
    """A nested config (its keys follow); documented by its class's docstring."""
    kind: str = ""
    """The backend or scorer kind the key belongs to ("": every kind)."""


def type_name(hint: Any) -> str:
    """A type annotation as a reader writes it (`list[DatasetSpec]`, `str | None`)."""
    if hint is Any:
        return "any"
    if hint is type(None):
        return "None"
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        inner = ", ".join("..." if a is Ellipsis else type_name(a) for a in args)
        return f"{name}[{inner}]" if args else name
    return getattr(hint, "__name__", re.sub(r"\b[\w.]+\.", "", str(hint)))


def _nested(hint: Any) -> list[type]:
    """The config dataclasses a field's type holds (itself, or inside list/tuple/union/dict)."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return [hint]
    found: list[type] = []
    for arg in typing.get_args(hint):
        found += _nested(arg)
    return found


def _container_suffix(hint: Any) -> str:
    """`[]` when a field holds a list or tuple of configs (`models[].kind`), else nothing."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return "".join(_container_suffix(a) for a in typing.get_args(hint) if a is not type(None))
    return "[]" if origin in (list, tuple) else "{}" if origin is dict else ""


def _default_text(spec: dataclasses.Field[Any]) -> str:
    from benchmarks.common.config import to_dict

    if spec.default is not dataclasses.MISSING:
        value = spec.default
    elif spec.default_factory is not dataclasses.MISSING:
        value = spec.default_factory()
    else:
        return "required"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "(its defaults)"
    try:
        return json.dumps(to_dict(value), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _registry_expansions() -> dict[tuple[type, str], Callable[[], dict[str, type]]]:
    """Fields whose keys depend on a sibling `kind`: kind -> the dataclass of that kind's keys."""
    from benchmarks.generation import BACKENDS, BackendSpec
    from benchmarks.generation._spec import backend_class
    from boi.runner import CriticSpec
    from critic.scoring import SCORERS

    return {
        (BackendSpec, "options"): lambda: {kind: backend_class(kind).Options for kind in BACKENDS},
        (CriticSpec, "scorer"): lambda: {kind: SCORERS.load(kind).Config for kind in SCORERS},
    }


def config_keys(cls: type, prefix: str = "", _stack: tuple[type, ...] = ()) -> list[ConfigKey]:
    """Every key of the config dataclass `cls`, nested configs expanded as dotted paths."""
    expansions = _registry_expansions()
    hints = typing.get_type_hints(cls)
    keys: list[ConfigKey] = []
    for spec in dataclasses.fields(cls):
        if not spec.init and (cls, spec.name) not in expansions:
            continue
        hint = hints[spec.name]
        path = prefix + spec.name
        expand = expansions.get((cls, spec.name))
        if expand is not None:
            # The kind's own keys sit flat beside `kind` (backends) or under this key (scorers).
            flat = spec.name == "options"
            for kind, options in expand().items():
                inner_prefix = prefix if flat else f"{path}."
                for key in config_keys(options, inner_prefix, (*_stack, cls)):
                    keys.append(dataclasses.replace(key, kind=kind))
            continue
        nested = [n for n in _nested(hint) if n not in _stack]
        help_text = str(spec.metadata.get("help", "")).strip()
        if nested:
            docs = help_text or " ".join(
                class_doc(n).split("\n\n")[0] for n in nested if class_doc(n)
            )
            if not docs:  # a class without prose of its own: say where its keys are
                many = _container_suffix(hint)
                docs = "each item's keys follow" if many else "its keys follow"
            keys.append(ConfigKey(path, type_name(hint), _default_text(spec), docs, cls, True))
            for inner in nested:
                keys += config_keys(inner, f"{path}{_container_suffix(hint)}.", (*_stack, cls))
        else:
            keys.append(ConfigKey(path, type_name(hint), _default_text(spec), help_text, cls))
    return keys


def config_classes() -> dict[str, type]:
    """Every dataclass of the library with a field carrying help text: the house convention
    marks config dataclasses so, and each must be reachable from a documented root."""
    found: dict[str, type] = {}
    for package in LIBRARY:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if info.name.endswith("__main__"):
                continue
            loaded = importlib.import_module(info.name)
            for obj in vars(loaded).values():
                if (
                    isinstance(obj, type)
                    and dataclasses.is_dataclass(obj)
                    and obj.__module__ == loaded.__name__
                    and any(f.metadata.get("help") for f in dataclasses.fields(obj))
                ):
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def _reachable(roots: list[ConfigRoot]) -> set[type]:
    expansions = _registry_expansions()
    seen: set[type] = set()
    todo = [root.cls for root in roots]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for spec in dataclasses.fields(cls):
            expand = expansions.get((cls, spec.name))
            todo += list(expand().values()) if expand else _nested(hints[spec.name])
    return seen


def undocumented_config_keys(roots: list[ConfigRoot] | None = None) -> list[str]:
    """Config keys without help text, and config dataclasses no documented root reaches."""
    if roots is None:
        files, flags, data = _config_roots()
        roots = files + flags + data
    missing = []
    for root in roots:
        for key in config_keys(root.cls):
            if not key.section and not key.help:
                missing.append(f"{root.cls.__name__}: {key.path} ({key.owner.__name__})")
    reached = _reachable(roots)
    for name, cls in sorted(config_classes().items()):
        if cls not in reached:
            missing.append(f"{name} is a config class no reference root reaches")
    return missing


LONG_VALUE = 40
"""Characters beyond which a default is shown item by item (a code span in a table never
wraps, so one long span would push the description off the page)."""


def spaced_code(text: str) -> str:
    """`text` as a code span; one with spaces in it (`str | None`, `"name": "humaneval"`, a
    sentence) marked `wraps`, so it may wrap at those spaces and only there (extra.css) instead
    of widening its column; an identifier never wraps."""
    return code(text) + "{: .wraps }" if " " in text else code(text)


def default_cell(text: str) -> str:
    """A default as a table cell: one code span, or for a long JSON list or mapping one code span
    per item, between plain brackets and commas, so the cell wraps between items and never
    inside one; what a reader copies is still the value as JSON (which YAML reads)."""
    if len(text) <= LONG_VALUE:
        return spaced_code(text)
    try:
        value = json.loads(text)
    except ValueError:
        return spaced_code(text)

    def items(value: Any) -> str:
        if isinstance(value, list) and value:
            return "[" + ", ".join(items(v) for v in value) + "]"
        if isinstance(value, dict) and value:
            inner = (
                f"{code(json.dumps(k, ensure_ascii=False) + ':')} {items(v)}"
                if (v and isinstance(v, list | dict)) or len(json.dumps(v)) > LONG_VALUE
                else spaced_code(
                    f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
                )
                for k, v in value.items()
            )
            return "{" + ", ".join(inner) + "}"
        return spaced_code(json.dumps(value, ensure_ascii=False))

    return items(value)


def _config_section(root: ConfigRoot) -> list[str]:
    cls = root.cls
    out = ["", f"### {cls.__name__}", "", f"Given by {root.where}.", ""]
    if class_doc(cls):
        out += [class_doc(cls), ""]
    out += ["| key | type | default | what it does |", "|---|---|---|---|"]
    for key in config_keys(cls):
        name = f"**{code(key.path)}**" if key.section else code(key.path)
        kind = f"*(kind `{key.kind}`)* " if key.kind else ""
        out.append(
            f"| {name} | {spaced_code(key.type)} | {default_cell(key.default)} | "
            f"{kind}{md_cell(key.help)} |"
        )
    return out


def config_page() -> str:
    """The config reference: every key of every config users write, with type and default."""
    missing = undocumented_config_keys()
    if missing:
        raise ReferenceError(
            "the config reference cannot document these (give the field "
            'metadata={"help": ...}, or add the class to scripts/docs_reference.py\'s roots): '
            + "; ".join(missing)
        )
    files, flags, data = _config_roots()
    out = [
        GENERATED_NOTE,
        "# Configuration",
        "",
        "Every config key, read from the typed dataclasses `boi` loads its configs into "
        "(`benchmarks.common.config`) when this site was built. A YAML file gives keys at any "
        "depth (`critic: {enabled: true}`); a typo is refused with the closest key suggested. "
        "Every top-level scalar key of a config is also a flag of its command "
        "(`--keep-unchanged/--no-keep-unchanged`, `--bootstrap 1000`); a flag wins over the "
        "file. Dotted paths are nesting; `[]` marks a list of mappings (`models[].kind`). "
        "Keys marked *(kind `x`)* belong to that backend or scorer kind only and sit beside "
        "`kind` (a key another kind has is refused with the closest key of this kind).",
        "",
        "## Config files",
    ]
    for root in files:
        out += _config_section(root)
    out += [
        "",
        "## Configs given as flags",
        "",
        "These commands build their config from flags (one per scalar key; see the "
        "[command line](cli.md)); the same keys appear nested in the config files above "
        "where a run uses them.",
    ]
    for root in flags:
        out += _config_section(root)
    out += [
        "",
        "## Data files",
        "",
        "YAML files a suite or a mitigation run reads; your own file replaces the bundled one.",
    ]
    for root in data:
        out += _config_section(root)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- transformations

EXAMPLE_PROBLEMS = tuple(f"HumanEval/{i}" for i in (0, 2, 4, 7, 12, 13, 23, 29, 35, 53))
"""HumanEval problems tried in order for each transformation's example (the first it applies to)."""


def _diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "before", "after", n=2
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def transformation_examples(
    names: list[str], embedder: Any | None = None
) -> dict[str, tuple[str, str, str] | str]:
    """name -> (task id, before prompt, after prompt) on the first of EXAMPLE_PROBLEMS it applies
    to, or the reason it applied to none of them. `before` is the transformation's baseline
    (`original`, or `partial_code` for ReCode's partial-code families)."""
    from benchmarks.common.errors import UserError
    from benchmarks.loaders import load_benchmark
    from perturb.blocks import split_dataset
    from perturb.keywords import KeywordConfig, analyze_keywords, sentence_transformer_embedder
    from perturb.transforms import TRANSFORMS, NotApplicable, get_transform

    by_id = {p.task_id: p for p in load_benchmark("humaneval").problems}
    split = split_dataset([by_id[t] for t in EXAMPLE_PROBLEMS])
    problems = [p for p in split.problems if p.task_id not in split.failures]
    keywords = {}
    if any(TRANSFORMS[name].needs_keywords for name in names):
        config = KeywordConfig()
        embedder = embedder or sentence_transformer_embedder(config.embedder)
        keywords = {a.task_id: a for a in analyze_keywords(problems, config, embedder)}

    def first_variant(name: str, problem: Any) -> Any:
        outcome = get_transform(name)(problem, keywords.get(problem.task_id), 0)
        return outcome if isinstance(outcome, NotApplicable) else outcome[0]

    examples: dict[str, tuple[str, str, str] | str] = {}
    for name in names:
        reasons = []
        for problem in problems:
            try:
                after = first_variant(name, problem)
                baseline = TRANSFORMS[name].baseline
                before = problem if baseline == "original" else first_variant(baseline, problem)
            except UserError as err:  # e.g. WordNet missing on this machine: said on the page
                reasons.append(f"{problem.task_id}: {err}")
                break
            if isinstance(after, NotApplicable):
                reasons.append(f"{problem.task_id}: {after.reason}")
                continue
            if isinstance(before, NotApplicable):
                reasons.append(f"{problem.task_id}: its baseline {baseline} does not apply")
                continue
            examples[name] = (problem.task_id, before.prompt, after.prompt)
            break
        else:
            examples[name] = "; ".join(reasons)
        if name not in examples:
            examples[name] = "; ".join(reasons)
    return examples


EXAMPLES_CACHE_FORMAT = "1"
"""Bumped when the cached examples' layout or meaning changes (old entries are then ignored)."""
# What the examples are computed from, besides the installed distributions and WordNet: every
# file of these folders (the transformations, the loaders and their data, the generation
# backends, which registries load by name, the model conversion), every module of ours they
# import (`example_sources`), and `transformation_examples` itself. Not all of `benchmarks/`:
# a change to the sandbox or the reports would otherwise recompute the examples for nothing.
EXAMPLE_SOURCES = ("perturb", "benchmarks/common", "benchmarks/loaders", "benchmarks/generation")


def _module_file(root: Path, module: str) -> Path | None:
    """The file of our module `module` (`benchmarks.problem`), or None when it is not ours."""
    if module.split(".")[0] not in LIBRARY:
        return None
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(root: Path, path: Path) -> set[str]:
    """The modules `path` imports (top level or not; `from a import b` counts `a` and `a.b`),
    relative imports resolved."""
    import ast

    package = ".".join(path.relative_to(root).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    # A module's packages run their __init__ first.
    return found | {m.rsplit(".", i)[0] for m in found for i in range(1, m.count(".") + 1)}


def example_sources(root: Path | None = None) -> list[Path]:
    """Every file the examples are computed from: the `EXAMPLE_SOURCES` folders whole, and every
    module of ours their Python files import, and what those import, to the end."""
    root = root or ROOT
    files = {
        path
        for folder in EXAMPLE_SOURCES
        for path in (root / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    todo = [path for path in files if path.suffix == ".py"]
    while todo:
        for module in _imported_modules(root, todo.pop()):
            path = _module_file(root, module)
            if path is not None and path not in files:
                files.add(path)
                todo.append(path)
    return sorted(files)


def _feed_files(digest: Any, root: Path, paths: list[Path], *, contents: bool) -> None:
    """Each file into `digest`: its path under `root` and its bytes (`contents`), or its size and
    mtime (large external data, read as make would)."""
    for path in paths:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if contents:
            digest.update(path.read_bytes())
        else:
            stat = path.stat()
            digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
        digest.update(b"\0")


def examples_digest(names: list[str]) -> str:
    """The digest of everything `transformation_examples(names)` depends on: `example_sources()`
    and that function's source (the transformations, HumanEval, the keyword
    extraction, the paraphrasing backend), every installed distribution and its version (torch,
    transformers, sentence-transformers, nltk, the wheels the two models ship in), the
    registered transformations' versions and parameters, and the WordNet files the synonym
    transformations read. Equal digests give equal examples, so a cached entry stands for a
    fresh computation."""
    import hashlib
    import importlib.metadata
    import platform

    from perturb.recode.words import wordnet_location
    from perturb.transforms import TRANSFORMS

    digest = hashlib.sha256()
    distributions = sorted(
        f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
    )
    registry = [
        [n, TRANSFORMS[n].version, repr(TRANSFORMS[n].parameters)] for n in names if n in TRANSFORMS
    ]
    header = [EXAMPLES_CACHE_FORMAT, names, EXAMPLE_PROBLEMS, platform.python_version()]
    digest.update(json.dumps([header, distributions, registry]).encode())
    _feed_files(digest, ROOT, example_sources(), contents=True)
    digest.update(inspect.getsource(transformation_examples).encode())
    location = wordnet_location()
    digest.update(f"wordnet:{location}".encode())
    if location is not None and Path(str(location)).is_dir():
        folder = Path(str(location))
        data = sorted(p for p in folder.rglob("*") if p.is_file())
        _feed_files(digest, folder, data, contents=False)
    return digest.hexdigest()


def cached_transformation_examples(names: list[str]) -> dict[str, tuple[str, str, str] | str]:
    """`transformation_examples(names)`, computed once per `examples_digest` and kept in the
    machine cache (`$BOI_CACHE_DIR/docs/`): computing them loads the keyword embedder, the
    embedded model and WordNet (a minute or more on 2 cores), and the site is rebuilt far more
    often than the transformations change. A changed input is a new digest, so the page never
    shows examples the code would no longer make."""
    from benchmarks.common.atomic import write_text_atomic
    from benchmarks.common.cache import cache_dir

    folder = cache_dir("docs")
    key = examples_digest(names)
    path = folder / f"transformation-examples-{key}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("digest") == key and isinstance(stored.get("examples"), dict):
            return {
                name: value if isinstance(value, str) else (value[0], value[1], value[2])
                for name, value in stored["examples"].items()
            }
    except (OSError, ValueError, IndexError, TypeError):
        pass  # absent or unreadable: computed again below and rewritten
    print(
        "docs: computing the transformation examples (loads the keyword embedder, the "
        f"embedded model and WordNet); cached in {folder} for later builds",
        file=sys.stderr,
    )
    examples = transformation_examples(names)
    write_text_atomic(path, json.dumps({"digest": key, "examples": examples}, ensure_ascii=False))
    for old in folder.glob("transformation-examples-*.json"):
        if old != path:
            old.unlink(missing_ok=True)  # an older code's examples: never read again
    return examples


def transformations_page(
    embedder: Any | None = None, names: list[str] | None = None, *, cache: bool = False
) -> str:
    """The catalogue: every registered transformation (or only `names`) with its family, ReCode
    name, parameters and an example, in registration order. `cache`: the examples come from
    `cached_transformation_examples` (the site build), else they are computed here."""
    from perturb.transforms import CATALOGUE, FAMILIES, PROBES, TRANSFORMS

    names = list(TRANSFORMS) if names is None else [n for n in TRANSFORMS if n in names]
    if cache and embedder is None:
        examples = cached_transformation_examples(names)
    else:
        examples = transformation_examples(names, embedder)
    out = [
        GENERATED_NOTE,
        "# Transformations",
        "",
        "Every transformation registered in `perturb.transforms.TRANSFORMS` when this site was "
        f"built ({len(names)}), in registration order: the paper's catalogue "
        f"({', '.join(code(n) for n in CATALOGUE)}), the probe{'s' if len(PROBES) > 1 else ''} "
        f"({', '.join(code(n) for n in PROBES)}) and ReCode's families. `boi perturb --list` "
        "prints the same. Set a parameter with `boi perturb --param NAME.PARAM=VALUE` or "
        "`transform_params: {NAME: {PARAM: VALUE}}` in a run config. Each example is the "
        "transformation applied to the first of "
        f"{', '.join(EXAMPLE_PROBLEMS)} it applies to (seed 0), shown as a diff of the prompt "
        "against its baseline. How the catalogue is designed: "
        "[Transformations, explained](../explanation/transformations.md).",
        "",
        "## Families",
        "",
        "| family | what its transformations perturb |",
        "|---|---|",
    ]
    out += [f"| {code(f)} | {md_cell(text)} |" for f, text in FAMILIES.items()]
    out += [
        "",
        "## Catalogue",
        "",
        "| name | report row | family | ReCode name | parameters (defaults) | random | measured against |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        factory = TRANSFORMS[name]
        params = ", ".join(f"{k}={v!r}" for k, v in factory.parameters.items())
        out.append(
            f"| [{code(name)}](#{anchor(name)}) | {md_cell(factory.label or '')} | "
            f"{code(factory.family) if factory.family else 'probe'} | "
            f"{code(factory.recode_name) if factory.recode_name else ''} | "
            f"{code(params) if params else ''} | {'yes' if factory.stochastic else ''} | "
            f"{code(factory.baseline)} |"
        )
    for name in names:
        factory = TRANSFORMS[name]
        out += ["", f"### {name}", "", prose(factory.description), ""]
        facts = [f"version {code(factory.version)}"]
        if factory.family:
            facts.append(f"family {code(factory.family)}")
        if factory.recode_name:
            facts.append(f"ReCode: {code(factory.recode_name)}")
        if factory.steps:
            facts.append("a chain of " + " then ".join(code(s) for s in factory.steps))
        if factory.needs_keywords:
            facts.append("needs the problem's droppable keywords")
        if factory.stochastic:
            facts.append(
                "random: draws from `Random((seed, task id, name))`; `random_seeds: N` gives N variants"
            )
        out += ["; ".join(facts) + ".", ""]
        if factory.parameters:
            out += ["| parameter | type | default |", "|---|---|---|"]
            for key, default in factory.parameters.items():
                hint = factory.hints.get(key, Any)
                out.append(f"| {code(key)} | {code(type_name(hint))} | {code(repr(default))} |")
            out.append("")
        example = examples[name]
        if isinstance(example, str):
            out += [f"Applies to none of the example problems here: {md_cell(example)}."]
        else:
            task_id, before, after = example
            diff = _diff(before, after)
            out += [
                f"On {code(task_id)}"
                + (
                    f" (before: its {code(factory.baseline)} variant)"
                    if factory.baseline != "original"
                    else ""
                )
                + ":",
                "",
                "```diff",
                diff.rstrip("\n") if diff else "(the prompt is unchanged)",
                "```",
            ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- metrics

METRIC_MODULES = (
    ("benchmarks.passk", "pass@k"),
    ("benchmarks.robustness", "Robustness: drops, flips, intervals, ReCode's metrics"),
    ("bias.metrics", "Social bias"),
    ("benchmarks.stats", "The statistics behind the intervals and tests"),
)


def _public_functions(module: types.ModuleType) -> list[tuple[str, Callable[..., Any]]]:
    return [
        (name, obj)
        for name, obj in vars(module).items()
        if inspect.isfunction(obj)
        and obj.__module__ == module.__name__
        and not name.startswith("_")
    ]


def metrics_page() -> str:
    """The metrics: each module's docstring and each public function's signature and docstring,
    which state the equation it implements and the paper (and line) it comes from."""
    out = [
        GENERATED_NOTE,
        "# Metrics",
        "",
        "Each metric as its code states it: the docstrings below are read from the modules when "
        "this site was built, and each names the equation it implements and where it comes "
        "from (Chen et al. 2021 for pass@k, the paper's Table 3 for the relative drop, ReCode for "
        "the robust metrics, Liu et al., Solar and Huang et al. for the bias metrics; `S:133` "
        "and `H:118` are line numbers in the Solar and Huang papers' text).",
    ]
    undocumented = []
    for module_name, title in METRIC_MODULES:
        module = importlib.import_module(module_name)
        out += ["", f"## {title}", "", f"`{module_name}`", "", prose(module.__doc__)]
        for name, function in _public_functions(module):
            qualified = f"{module_name}.{name}"
            if not (function.__doc__ or "").strip():
                undocumented.append(qualified)
                continue
            signature = str(inspect.signature(function)).replace("'", "")
            out += [
                "",
                f"### {name}",
                "",
                "```python",
                f"{name}{signature}",
                "```",
                "",
                prose(function.__doc__),
            ]
    if undocumented:
        raise ReferenceError(
            "these metric functions have no docstring, so the reference cannot say what they "
            "compute: " + ", ".join(undocumented)
        )
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- all pages

PAGES: dict[str, Callable[[], str]] = {
    "reference/index.md": reference_index_page,
    "reference/cli.md": cli_page,
    "reference/config.md": config_page,
    "reference/transformations.md": lambda: transformations_page(cache=True),
    "reference/metrics.md": metrics_page,
}


def write_pages(open_file: Callable[[str, str], Any]) -> list[str]:
    """Write every generated page through `open_file(path, "w")` (mkdocs-gen-files' `open`, or
    a plain one); returns the paths written."""
    for path, page in PAGES.items():
        with open_file(path, "w") as handle:
            handle.write(page())
    return list(PAGES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write reference/*.md into")
    args = parser.parse_args(argv)

    def open_file(path: str, mode: str) -> Any:
        target = args.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.open(mode, encoding="utf-8")

    try:
        for path in write_pages(open_file):
            print(args.out / path)
    except ReferenceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
