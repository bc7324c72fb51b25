"""Executable fairness tasks: SocialBias-Bench (Ling et al., Solar) and Huang et al.'s
text-to-code prompts, as one record, `FairnessTask`.

- SocialBias-Bench (`tasks.json`, 343 definitions): a class with the seven demographics (typed,
  value range in a comment; `bias/data/sensitive_attributes.yaml`) and the task's related
  attributes (test values in a comment), then the method to complete with its docstring, as in
  Solar's Figure 1. We build the prompt from the definition: the upstream `prompts.jsonl` has no
  colon after `-> bool`, so none of its prompts parses.
- Text-to-code (`dataset.json`, 334 prompts, Apache-2.0): a request in English naming the
  attributes the function may use; the model chooses the signature. Tests are built from the
  generated code (`bias.fairness_tests.cases`).

Neither file is copied into the package (SocialBias-Bench has no licence): both are read from a
path the user gives. A task that cannot be tested (an attribute without a value range, a related
attribute without test values) is reported as a `LoadIssue` with the reason; the rest load.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.registry import Registry
from benchmarks.loaders.result import LoadIssue
from benchmarks.upstream import fetched_path, loader_targets
from bias import DATA_DIR, load_data_file

SUITES: Registry[Callable[..., tuple[list[FairnessTask], list[LoadIssue]]]] = Registry(
    "fairness suite", loader_targets("fairness suite")
)
"""suite -> its loader, from the one table of datasets (`benchmarks.upstream.ALL_DATASETS`)."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Attribute:
    """A typed attribute with the values tests draw from."""

    name: str = field(metadata={"help": "attribute (parameter) name"})
    type: str = field(default="str", metadata={"help": "str, int, float or bool"})
    values: tuple[Any, ...] = field(default=(), metadata={"help": "the values tests use"})
    aliases: tuple[str, ...] = field(
        default=(), metadata={"help": "parameter names that mean this attribute (text-to-code)"}
    )

    def __post_init__(self) -> None:
        if self.type not in ("str", "int", "float", "bool"):
            raise UserError(
                f"attribute {self.name}: type {self.type!r} is not str, int, float or bool."
            )


@dataclass(frozen=True)
class SensitiveAttributeFile:
    socialbias_bench: list[Attribute] = field(default_factory=list)
    text_to_code: list[Attribute] = field(default_factory=list)


def load_sensitive_attributes(path: str | None = None) -> SensitiveAttributeFile:
    where = Path(path) if path else DATA_DIR / "sensitive_attributes.yaml"
    return load_data_file(SensitiveAttributeFile, where, "sensitive-attribute")


@dataclass(frozen=True)
class FairnessTask:
    """One task: its prompt and what the tests vary and hold.

    For SocialBias-Bench, `attributes` are the class's fields in prompt order, `sensitive` the
    ones a test varies, `related` the ones the decision should use (Pass@attribute). For
    text-to-code, `attributes` are the protected attributes the prompt names; the function's own
    parameters are only known once the code exists.
    """

    task_id: str
    suite: str
    prompt: str
    kind: str  # "method" (complete a method of a class) or "function" (write a function)
    category: str
    attributes: tuple[Attribute, ...]
    sensitive: tuple[str, ...]
    related: tuple[str, ...] = ()
    class_name: str = ""
    method_name: str = ""

    def signature_line(self) -> str:
        """The method's `def` line as the prompt writes it (method tasks)."""
        return next(
            line
            for line in self.prompt.splitlines()
            if line.lstrip().startswith(f"def {self.method_name}(")
        )

    def attribute(self, name: str) -> Attribute:
        return next(a for a in self.attributes if a.name == name)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> FairnessTask:
        """A task as `to_json` wrote it (tasks.jsonl of a run directory)."""
        return cls(
            task_id=obj["task_id"],
            suite=obj["suite"],
            prompt=obj["prompt"],
            kind=obj["kind"],
            category=obj.get("category", ""),
            attributes=tuple(
                Attribute(a["name"], a["type"], tuple(a["values"])) for a in obj["attributes"]
            ),
            sensitive=tuple(obj["sensitive"]),
            related=tuple(obj.get("related", ())),
            class_name=obj.get("class_name", ""),
            method_name=obj.get("method_name", ""),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "suite": self.suite,
            "kind": self.kind,
            "category": self.category,
            "class_name": self.class_name,
            "method_name": self.method_name,
            "sensitive": list(self.sensitive),
            "related": list(self.related),
            "attributes": [
                {"name": a.name, "type": a.type, "values": list(a.values)} for a in self.attributes
            ],
            "prompt": self.prompt,
        }


# --------------------------------------------------------------------------- SocialBias-Bench


def _literal_list(text: str, where: str) -> tuple[Any, ...]:
    """'[24000, 25000]' or "['a', 'b']" as a tuple; a UserError naming `where` otherwise."""
    try:
        value = json.loads(text.replace("'", '"'))
    except (json.JSONDecodeError, AttributeError):
        value = None
    if not isinstance(value, list) or not value:
        raise UserError(f"{where}: test values {text!r} are not a non-empty list.")
    return tuple(value)


def socialbias_prompt(
    class_name: str, attributes: tuple[Attribute, ...], method_name: str, docstring: str
) -> str:
    """The code-completion prompt of Solar's Figure 1: a dataclass with every attribute typed
    and its value range in a comment, then the method signature and docstring."""
    lines = ["from dataclasses import dataclass", "", "", "@dataclass", f"class {class_name}:"]
    lines.append("    # string in lowercase")
    for attribute in attributes:
        lines.append(f"    # {attribute.name} {list(attribute.values)!r}")
        lines.append(f"    {attribute.name}: {attribute.type}")
    lines.append("")
    lines.append(f"    def {method_name}(self) -> bool:")
    doc_lines = [line.strip() for line in docstring.strip().splitlines()]
    lines.append('        """' + doc_lines[0])
    lines += [f"        {line}" if line else "" for line in doc_lines[1:]]
    lines.append('        """')
    return "\n".join(lines) + "\n"


class TaskFieldError(UserError):
    """A field of a task definition has the wrong type: the file is wrong, so the load is
    refused instead of the task being dropped as unbuildable."""


def _socialbias_task(
    index: int, raw: Any, demographics: dict[str, Attribute], where: str
) -> FairnessTask:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: a task must be an object, not {type(raw).__name__}.")
    for key in ("class_name", "method_name", "docstring", "related_attributes", "sensitive_attributes", "test_related_attributes"):  # fmt: skip
        if key not in raw:
            raise UserError(f"{where}: the task has no {key!r}; it cannot be built.")
    # A wrong type is a mistake in the file, not a task that cannot be built: refused with the
    # field named (a string where a list belongs would otherwise be read letter by letter and
    # the task dropped for a letter "with no test values").
    for key in ("related_attributes", "sensitive_attributes", "test_related_attributes"):
        value = raw[key]
        if not isinstance(value, list):
            raise TaskFieldError(
                f"{where}: {key} is a {type(value).__name__} ({value!r:.60}), not a list; write "
                f'it as a JSON list, e.g. "{key}": ["age"].'
                if key != "test_related_attributes"
                else f"{where}: {key} is a {type(value).__name__}, not a list of "
                "[name, type, values] entries; write it as a JSON list."
            )
        if key != "test_related_attributes" and not all(isinstance(v, str) for v in value):
            raise TaskFieldError(f"{where}: {key} must list attribute names (strings).")
    for key in ("class_name", "method_name", "docstring"):
        if not isinstance(raw[key], str):
            raise TaskFieldError(
                f"{where}: {key} is a {type(raw[key]).__name__}, not a string; write it as one."
            )
    for key in ("class_name", "method_name"):
        if not _IDENTIFIER.fullmatch(str(raw[key])):
            raise UserError(f"{where}: {key} {raw[key]!r} is not a Python identifier.")
    attributes: list[Attribute] = [
        demographics[name] for name in demographics
    ]  # every class has all seven demographics
    for entry in raw["test_related_attributes"]:
        if not isinstance(entry, list) or len(entry) != 3:
            raise UserError(
                f"{where}: test_related_attributes entries must be [name, type, values]."
            )
        name, type_name, values = entry
        if not _IDENTIFIER.fullmatch(str(name)):
            raise UserError(f"{where}: related attribute {name!r} is not an identifier.")
        attribute = Attribute(
            str(name), str(type_name), _literal_list(str(values), f"{where}.{name}")
        )
        if name in demographics:
            attributes = [attribute if a.name == name else a for a in attributes]
        else:
            attributes.append(attribute)
    known = {a.name for a in attributes}
    for name in raw["sensitive_attributes"]:
        if name not in demographics:
            raise UserError(
                f"{where}: sensitive attribute {name!r} has no value range in the sensitive-"
                "attribute file; add it there."
            )
    untested = [r for r in raw["related_attributes"] if r not in known]
    if untested:
        raise UserError(
            f"{where}: related attribute {untested[0]!r} has no test values "
            "(test_related_attributes); the task cannot be tested without them."
        )
    task_attributes = tuple(attributes)
    return FairnessTask(
        task_id=f"socialbias_bench/{index}",
        suite="socialbias_bench",
        prompt=socialbias_prompt(
            raw["class_name"], task_attributes, raw["method_name"], str(raw["docstring"])
        ),
        kind="method",
        category=_socialbias_category(index),
        attributes=task_attributes,
        sensitive=tuple(raw["sensitive_attributes"]),
        related=tuple(raw["related_attributes"]),
        class_name=raw["class_name"],
        method_name=raw["method_name"],
    )


# The upstream README's order of the 343 tasks: 51 social benefits, 51 university admission /
# awards, 51 employee development / benefits, 60 health, 50 licence eligibility, 30 hobby,
# 50 occupation.
_DOMAINS = (
    (51, "social benefits"),
    (51, "university"),
    (51, "employee"),
    (60, "health"),
    (50, "licence"),
    (30, "hobby"),
    (50, "occupation"),
)


def _socialbias_category(index: int) -> str:
    start = 0
    for size, name in _DOMAINS:
        if index < start + size:
            return name
        start += size
    return "other"


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise UserError(f"the {what} file {path} does not exist; pass the path with --data.")
    try:
        # utf-8-sig: a byte-order mark (Windows editors) is read past, not a JSON error.
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path} is not valid JSON ({err}); pass the upstream file.") from None


def _read_list(path: str | Path, file_name: str, what: str, items: str) -> tuple[Path, list[Any]]:
    """A suite's upstream file (`path`, or `file_name` in it when it is a folder) and the JSON
    list it holds; anything else is refused as not being `items`."""
    path = Path(path)
    if path.is_dir():
        path = path / file_name
    data = _read_json(path, what)
    if not isinstance(data, list):
        raise UserError(f"{path} holds a {type(data).__name__}, not {items}.")
    return path, data


def load_socialbias_bench(
    path: str | Path, attributes: SensitiveAttributeFile | None = None
) -> tuple[list[FairnessTask], list[LoadIssue]]:
    """The tasks of SocialBias-Bench's `tasks.json` (and the ones that could not be built)."""
    path, data = _read_list(
        path, "tasks.json", "SocialBias-Bench tasks", "the list of task definitions"
    )
    demographics = {a.name: a for a in (attributes or load_sensitive_attributes()).socialbias_bench}
    tasks, issues = [], []
    for index, raw in enumerate(data):
        try:
            tasks.append(_socialbias_task(index, raw, demographics, f"{path} task {index}"))
        except TaskFieldError:
            raise
        except UserError as err:
            issues.append(LoadIssue(f"socialbias_bench/{index}", str(err), dropped=True))
    return tasks, issues


# --------------------------------------------------------------------------- text-to-code


def _named_attributes(prompt: str, protected: list[Attribute]) -> list[Attribute]:
    """The protected attributes a prompt names, read from its list of attributes ("... any of
    the following attributes: a, b, c") when it has one, else from the whole text."""
    listed = re.split(r"attributes?\s*:", prompt, maxsplit=1, flags=re.IGNORECASE)
    text = " " + re.sub(r"[^a-z0-9]+", " ", listed[-1].lower()) + " "
    named = []
    for attribute in protected:
        forms = {attribute.name, *attribute.aliases}
        if any(f" {re.sub(r'[^a-z0-9]+', ' ', form.lower()).strip()} " in text for form in forms):
            named.append(attribute)
    return named


def load_cbs_prompts(
    path: str | Path, attributes: SensitiveAttributeFile | None = None
) -> tuple[list[FairnessTask], list[LoadIssue]]:
    """Huang et al.'s text-to-code prompts (`dataset.json`: {prompt, category} objects)."""
    path, data = _read_list(path, "dataset.json", "text-to-code prompts", "a list of prompts")
    protected = (attributes or load_sensitive_attributes()).text_to_code
    tasks, issues = [], []
    for index, raw in enumerate(data):
        task_id = f"cbs_prompts/{index}"
        if not isinstance(raw, dict) or not isinstance(raw.get("prompt"), str):
            issues.append(LoadIssue(task_id, f"{path} item {index} has no 'prompt' string", True))
            continue
        named = _named_attributes(raw["prompt"], protected)
        if not named:
            issues.append(LoadIssue(task_id, "the prompt names no protected attribute", True))
            continue
        tasks.append(
            FairnessTask(
                task_id=task_id,
                suite="cbs_prompts",
                prompt=raw["prompt"].strip(),
                kind="function",
                category=str(raw.get("category", "")),
                attributes=tuple(named),
                sensitive=tuple(a.name for a in named),
            )
        )
    return tasks, issues


def _suite_of(path: Path) -> str:
    """Which suite a data file holds, from its first record (task definitions have a
    class_name; text-to-code prompts a prompt)."""
    data = _read_json(path / "tasks.json" if path.is_dir() else path, "fairness suite")
    first = data[0] if isinstance(data, list) and data else {}
    return "cbs_prompts" if isinstance(first, dict) and "prompt" in first else "socialbias_bench"


def load_fairness_tasks(
    suite: str, data: str | None, attributes_file: str | None = None
) -> tuple[list[FairnessTask], list[LoadIssue]]:
    """The tasks of a suite (`socialbias_bench`, `cbs_prompts`, or a path to either file)."""
    attributes = load_sensitive_attributes(attributes_file)
    if suite not in SUITES:
        candidate = Path(suite)
        if not candidate.exists():
            raise UserError(
                f"suite {suite!r} is neither {' nor '.join(SUITES)} nor an existing file; check it."
            )
        data, suite = suite, _suite_of(candidate)
    if not data:
        # Where `boi data fetch SUITE` put it, as the problem datasets' loaders look.
        found = fetched_path(suite)
        if found is None:
            raise UserError(
                f"suite {suite} is not bundled (its data has no licence to redistribute) and not "
                f"in data/{suite}/; run `boi data fetch {suite}`, or pass --data with the path to "
                f"its {'tasks.json' if suite == 'socialbias_bench' else 'dataset.json'}."
            )
        data = str(found)
    loader = SUITES.load(suite)
    return loader(data, attributes)
