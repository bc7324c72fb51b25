"""The Table 2 protocol end to end with the tiny model and stand-in transformations."""

from __future__ import annotations

import json

from benchmarks.problem import LineageStep
from critic.table2 import METHODS, Table2Config, format_table2, run_table2
from tests.critic_helpers import tiny_scorer


def _stand_in_variants(problems, caf, seed):
    """Renames for anonymization, word drops for the rest; without the CAF more words go."""
    out = {}
    for _, name in METHODS:
        variants = []
        for p in problems:
            prompt = p.prompt
            if "anon" in name:
                prompt = prompt.replace(p.entry_point, "func")
            if "drop" in name:
                prompt = prompt.replace(" the ", " ", 1 if caf else 5)
            if name == "drop_all" and p.task_id.startswith("MBPP"):
                prompt = p.prompt  # "did not apply"-like: the prompt is unchanged
            variants.append(
                p.replace(
                    task_id=f"{p.task_id}::{name}", prompt=prompt, lineage=(LineageStep(name, "1"),)
                )
            )
        out[name] = variants
    return out


def test_table2_runs_and_writes_its_files(mbpp_path, tmp_path):
    config = Table2Config(n=8, seed=3, mbpp_data=str(mbpp_path))
    result = run_table2(
        config, tiny_scorer(), tmp_path, variant_maker=_stand_in_variants, log=lambda _: None
    )
    assert len(result["sample"]) == 8 and len(set(result["sample"])) == 8
    rows = {r["method"]: r for r in result["rows"]}
    assert list(rows) == [label for label, _ in METHODS]
    for row in rows.values():
        for key in ("with_caf", "without_caf"):
            cell = row[key]
            assert cell["variants"] + cell["unchanged"] == 8
            if cell["variants"]:
                assert 0 <= cell["mean"] <= 100 and cell["std"] >= 0
    # identical prompts across the CAF runs give identical figures
    assert rows["Anonymization"]["with_caf"] == rows["Anonymization"]["without_caf"]
    saved = json.loads((tmp_path / "table2.json").read_text())
    assert saved["rows"] == result["rows"] and saved["config"]["seed"] == 3
    assert (tmp_path / "table2.csv").read_text().count("\n") == 1 + 2 * len(METHODS)
    text = format_table2(result)
    assert "Anon+Drop All" in text and "98.5 / 98.5" in text
    # the same seed draws the same sample
    again = run_table2(
        config,
        tiny_scorer(),
        tmp_path / "again",
        variant_maker=_stand_in_variants,
        log=lambda _: None,
    )
    assert again["sample"] == result["sample"]
