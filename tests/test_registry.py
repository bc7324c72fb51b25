"""The one registry mechanism (`benchmarks.common.registry.Registry`): lazy string entries are
imported only when resolved, a name registered twice is an error naming both, entries are
checked against the registry's base class or protocol, and an unknown name is one UserError
sentence with a did-you-mean; and every registry of boi is one of these."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pytest

from benchmarks.common.errors import UserError
from benchmarks.common.registry import Registry
from benchmarks.generation import BACKENDS, BackendBase
from benchmarks.languages import LANGUAGES
from benchmarks.loaders import DATASETS
from benchmarks.report import PLOTS, plot
from bias.fairness_tests.ablations import ABLATIONS, TEMPERATURE, ablation
from boi.analysis import ANALYSES
from boi.cli import COMMANDS
from boi.studies import STUDIES
from critic.scoring import SCORERS
from perturb.transforms import TRANSFORMS, get_transform, register_chain, transform


class Part:
    """The base of the widgets below."""


class Gear(Part):
    pass


class Stray:
    """Not a Part."""


class Speaker(Protocol):
    volume: int

    def speak(self) -> str: ...


class Loud:
    volume = 11

    def speak(self) -> str:
        return "hi"


class Mute:
    def whisper(self) -> str:
        return ""


@pytest.fixture
def lazy_module(tmp_path, monkeypatch):
    """A module on sys.path that records being imported: `boi_registry_probe`."""
    name = "boi_registry_probe"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from tests.test_registry import Gear, Stray

            class Sprocket(Gear):
                pass

            NOT_A_PART = Stray()
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    yield name
    sys.modules.pop(name, None)


def test_a_lazy_entry_is_imported_only_when_resolved(lazy_module):
    widgets: Registry[type[Part]] = Registry(
        "widget", {"sprocket": (f"{lazy_module}:Sprocket", "a toothed wheel")}, base=Part
    )
    widgets.register("gear", Gear)
    # Naming, listing, checking, helping and membership import nothing.
    assert "sprocket" in widgets and list(widgets) == ["sprocket", "gear"] and len(widgets) == 2
    assert widgets.check("sprocket") == "sprocket"
    assert widgets.choices_help() == "sprocket or gear"
    assert widgets.help("sprocket") == "a toothed wheel" and widgets.help("gear") == ""
    assert widgets.target("sprocket") == f"{lazy_module}:Sprocket"
    assert widgets.target("gear") == "tests.test_registry:Gear"
    assert ["x"] not in widgets  # a list where a name belongs is no name, not a TypeError
    assert lazy_module not in sys.modules
    sprocket = widgets.load("sprocket")
    assert lazy_module in sys.modules and sprocket.__name__ == "Sprocket"
    assert widgets["sprocket"] is sprocket and widgets.get("gear") is Gear
    assert widgets.get("missing") is None
    with pytest.raises(KeyError):
        widgets["missing"]  # a plain mapping lookup; `load` says it in a sentence


def test_a_module_target_is_the_module(lazy_module):
    modules: Registry[Any] = Registry("module", {"probe": lazy_module})
    assert modules.load("probe") is sys.modules[lazy_module]


def test_registering_a_name_twice_names_both(lazy_module):
    widgets: Registry[type[Part]] = Registry("widget", {"sprocket": f"{lazy_module}:Sprocket"})
    with pytest.raises(
        ValueError,
        match=rf"widget 'sprocket' is registered twice: by {lazy_module}:Sprocket and by "
        r"tests\.test_registry:Gear; unregister the first",
    ):
        widgets.register("sprocket", Gear)
    with pytest.raises(ValueError, match="registered twice"):
        widgets.add("sprocket")(Gear)
    assert widgets.target("sprocket") == f"{lazy_module}:Sprocket"  # the first one stays
    widgets.unregister("sprocket")
    widgets.add("sprocket", origin="the gear shop")(Gear)  # replaced on purpose
    assert widgets.load("sprocket") is Gear
    with pytest.raises(ValueError, match=r"by the gear shop and by tests\.test_registry:Stray"):
        widgets.register("sprocket", Stray)


def test_a_target_must_name_a_module():
    widgets: Registry[Any] = Registry("widget")
    for bad in ("", "pkg.mod:", "pkg/mod:Thing", "pkg.mod:Thing:More", "1pkg:Thing"):
        with pytest.raises(ValueError, match=r"must look like 'package\.module:Attribute'"):
            widgets.register("bad", bad)
    assert "bad" not in widgets


def test_entries_are_checked_against_the_base_when_resolved(lazy_module):
    widgets: Registry[Any] = Registry("widget", {"stray": f"{lazy_module}:NOT_A_PART"}, base=Part)
    assert "stray" in widgets  # registering a lazy name checks nothing yet
    with pytest.raises(TypeError, match=rf"widget 'stray' \({lazy_module}:NOT_A_PART\) is Stray, which is not a Part"):  # fmt: skip
        widgets.load("stray")
    with pytest.raises(TypeError, match="is the class Stray, which is not a Part"):
        widgets.register("given", Stray)  # a given entry is resolved, so checked, at once
    assert "given" not in widgets
    widgets.register("gear", Gear)  # a subclass
    widgets.register("part", Part())  # an instance


def test_a_protocol_base_checks_its_members():
    speakers: Registry[Any] = Registry("speaker", base=Speaker)
    speakers.register("loud", Loud)  # a class: its methods (a data member may be per instance)
    speakers.register("loud_one", Loud())
    with pytest.raises(TypeError, match="is the class Mute, which is not a Speaker"):
        speakers.register("mute", Mute)

    @dataclass
    class Quiet:
        def speak(self) -> str:
            return ""

    speakers.register("quiet", Quiet)
    with pytest.raises(TypeError, match="is Quiet, which is not a Speaker"):
        speakers.register("quiet_one", Quiet())  # an instance without `volume`
    functions: Registry[Callable[..., Any]] = Registry("function", base=Callable)
    functions.register("len", len)
    with pytest.raises(TypeError, match="which is not a Callable"):
        functions.register("three", 3)  # type: ignore[arg-type]


def test_an_unknown_name_is_one_sentence_with_a_did_you_mean():
    widgets: Registry[Any] = Registry("widget")
    widgets.register("sprocket", Gear)
    widgets.register("gear", Gear)
    with pytest.raises(UserError) as caught:
        widgets.load("sprockte")
    assert str(caught.value) == (
        "widget 'sprockte' is unknown (did you mean 'sprocket'?); use one of sprocket, gear."
    )
    with pytest.raises(UserError, match=r"^widget 'zzz' is unknown; use one of sprocket, gear\.$"):
        widgets.check("zzz")
    with pytest.raises(UserError, match=r"widget \['gear'\] is unknown"):
        widgets.check(["gear"])  # type: ignore[arg-type]


def test_every_registry_of_boi_is_one_registry_and_its_entries_pass_its_check():
    registries = (
        BACKENDS,
        DATASETS,
        LANGUAGES,
        SCORERS,
        TRANSFORMS,
        PLOTS,
        ABLATIONS,
        COMMANDS,
        ANALYSES,
        STUDIES,
    )
    assert all(isinstance(r, Registry) for r in registries)
    for registry in registries:
        for name in registry:
            registry.load(name)  # imports each lazy entry and checks it against the base


def test_the_decorators_refuse_a_name_registered_twice():
    with pytest.raises(ValueError, match=r"transform 'anonymize' is registered twice: by perturb\.transforms:anonymize and by tests\.test_registry:"):  # fmt: skip

        @transform("anonymize", "2")
        def anonymize(problem: Any, keywords: Any) -> Any:
            return []

    with pytest.raises(ValueError, match="transform 'drop_one' is registered twice"):
        register_chain("drop_one", "anonymize", "drop_examples")
    assert TRANSFORMS["anonymize"].version == "1" and not TRANSFORMS["drop_one"].steps
    first_plot = next(iter(PLOTS))
    with pytest.raises(ValueError, match=f"plot {first_plot!r} is registered twice"):
        plot(first_plot)(lambda context: None)
    with pytest.raises(ValueError, match="experiment kind 'solar_temperature' is registered twice"):
        ablation("solar_temperature", axis=TEMPERATURE, what="x", example="[0]")(lambda *args: None)
    with pytest.raises(ValueError, match="backend kind 'hf' is registered twice"):
        BACKENDS.register("hf", f"{__name__}:Gear")
    assert BACKENDS.load("hf").__name__ == "HFBackend" and issubclass(BACKENDS["hf"], BackendBase)


def test_the_registries_say_an_unknown_name_the_same_way():
    with pytest.raises(UserError, match=r"^transform 'anonymise' is unknown \(did you mean 'anonymize'\?\); use one of original, "):  # fmt: skip
        get_transform("anonymise")
    with pytest.raises(UserError, match=r"^critic scorer 'hff' is unknown \(did you mean 'hf'\?\)"):
        SCORERS.load("hff")
    with pytest.raises(UserError, match=r"^language 'jav' is unknown \(did you mean 'java'\?\)"):
        LANGUAGES.load("jav")
