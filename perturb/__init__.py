"""Blocks of Influence: the splitter, droppable keywords, and the transformation catalogue."""

from perturb.blocks import split_blocks, split_dataset
from perturb.catalogue import CatalogueResult, PerturbConfig, apply_catalogue, run_catalogue
from perturb.keywords import KeywordConfig, analyze_keywords
from perturb.transforms import (
    CATALOGUE,
    FAMILIES,
    TRANSFORMS,
    NotApplicable,
    Variant,
    get_transform,
    register_chain,
    transform,
    transform_baselines,
    transform_labels,
    transforms_of_family,
)

# ReCode's families register themselves on import, beside the catalogue above.
import perturb.recode  # noqa: F401  isort: skip

__all__ = [
    "CATALOGUE",
    "FAMILIES",
    "TRANSFORMS",
    "CatalogueResult",
    "KeywordConfig",
    "NotApplicable",
    "PerturbConfig",
    "Variant",
    "analyze_keywords",
    "apply_catalogue",
    "get_transform",
    "register_chain",
    "run_catalogue",
    "split_blocks",
    "split_dataset",
    "transform",
    "transform_baselines",
    "transform_labels",
    "transforms_of_family",
]
