"""`boi analyze attention`: the block-share reduction on a hand-made attention pattern, the
character-to-token block mapping, and the analysis end to end on a tiny run (JSON, resume,
report section, comparison, bad input)."""

from __future__ import annotations

import json
import shutil

import pytest

from benchmarks.generation import DecodingConfig
from benchmarks.problem import Block, Problem
from boi.analysis.attention import (
    COLUMNS,
    GENERATED,
    OTHER,
    AttentionConfig,
    analyze_attention,
    block_shares,
    block_spans,
    token_columns,
)
from boi.cli import main

NAME, DESCRIPTION, EXAMPLES = (COLUMNS.index(c) for c in ("name", "description", "examples"))


def test_constructed_attention_gives_the_expected_block_shares():
    import torch

    # Keys: BOS (other), two name tokens, one description token, two generated tokens.
    keys = torch.tensor([OTHER, NAME, NAME, DESCRIPTION, GENERATED, GENERATED])
    layers, heads, queries = 2, 3, 4
    torch.manual_seed(0)
    attention = torch.softmax(torch.randn(layers, heads, queries, len(keys)), dim=-1)
    # Layer 1, head 2, query 3 attends 0.5 to the name (0.3 + 0.2), 0.25 to the description
    # and 0.25 to the generated tokens (0.1 + 0.15).
    attention[1, 2, 3] = torch.tensor([0.0, 0.3, 0.2, 0.25, 0.1, 0.15])
    shares = block_shares(attention, keys)
    assert shares.shape == (layers, heads, queries, len(COLUMNS))
    expected = torch.zeros(len(COLUMNS))
    expected[[NAME, DESCRIPTION, GENERATED]] = torch.tensor([0.5, 0.25, 0.25])
    assert torch.allclose(shares[1, 2, 3], expected)
    assert torch.allclose(shares.sum(-1), torch.ones(layers, heads, queries))
    # A key's share lands in its own column only.
    assert torch.allclose(shares[..., NAME], attention[..., 1] + attention[..., 2])
    assert torch.allclose(shares[..., OTHER], attention[..., 0])


PROBLEM = Problem(
    task_id="T/0",
    benchmark="t",
    prompt='import math\n\n\ndef area(r):\n    """Area of a circle.\n    >>> area(1)\n    3.14\n    """\n',
    entry_point="area",
    blocks=(
        Block("prefix", "import math\n\n\n"),
        Block("name", "def area(r):\n"),
        Block("description", '    """Area of a circle.\n'),
        Block("examples", "    >>> area(1)\n    3.14\n"),
        Block("suffix", '    """\n'),
    ),
)


@pytest.mark.parametrize("chat", [False, True])
def test_tokens_map_to_their_blocks(chat):
    from benchmarks.generation import model_input_text
    from tests.generation_helpers import tiny_generator

    _, tokenizer = tiny_generator()
    text, special = model_input_text(tokenizer, PROBLEM.prompt, DecodingConfig(chat=chat))
    encoded = tokenizer(text, add_special_tokens=special, return_offsets_mapping=True)
    columns = token_columns(text, encoded["offset_mapping"], block_spans(PROBLEM, text))
    assert len(columns) == len(encoded["input_ids"])
    by_column = {
        column: "".join(
            text[s:e]
            for (s, e), c in zip(encoded["offset_mapping"], columns, strict=True)
            if c == column
        )
        for column in set(columns)
    }
    assert by_column[NAME].strip() == "def area(r):"
    assert "Area of a circle." in by_column[DESCRIPTION]
    assert by_column[EXAMPLES].split() == [">>>", "area(1)", "3.14"]
    assert "import math" in by_column[OTHER]  # the prefix is "other"
    if chat:
        assert "Complete the following Python function" in by_column[OTHER]


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A finished chat-mode `boi run` on the tiny model (2 problems x 3 transformations), and
    a second model folder whose first layer attends differently."""
    import torch

    from boi.runner import run_robustness
    from tests.generation_helpers import tiny_generator, tiny_run_config

    root = tmp_path_factory.mktemp("attention")
    config = tiny_run_config(
        root,
        datasets=[{"name": "humaneval", "task_ids": ["HumanEval/23", "HumanEval/53"]}],
        transforms=["original", "drop_examples", "anonymize"],
        settings=[
            {
                "label": "T=0",
                "ks": [1],
                "decoding": {"temperature": 0, "n": 1, "max_new_tokens": 6, "chat": True},
            }
        ],
    )
    run_robustness(config, log=lambda m: None)
    model, tokenizer = tiny_generator()
    tuned = type(model)(model.config)
    tuned.load_state_dict(model.state_dict())
    with torch.no_grad():
        # Random init attends almost uniformly; larger queries and keys make layer 0 peaked.
        tuned.model.layers[0].self_attn.q_proj.weight.mul_(40.0)
        tuned.model.layers[0].self_attn.k_proj.weight.mul_(40.0)
    tuned.save_pretrained(root / "tuned")
    tokenizer.save_pretrained(root / "tuned")
    return root


@pytest.fixture(autouse=True)
def _beside_the_model(request, monkeypatch):
    """The analyses run where the run's model folder is found by the name its manifest keeps
    (a manifest records a folder outside the working directory by its name only), as a user
    who keeps runs and models in one project folder does."""
    if "tiny_run" in request.fixturenames:
        monkeypatch.chdir(request.getfixturevalue("tiny_run"))


def test_a_model_folder_not_found_from_here_asks_for_model(tiny_run, tmp_path, monkeypatch, capsys):
    run_dir = fresh_copy(tiny_run, tmp_path)
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, ["analyze", "attention", str(run_dir)])
    assert "local model folder recorded as 'model'" in err and "--model" in err
    outcome = analyze_attention(
        AttentionConfig(run_dir=str(run_dir), model=str(tiny_run / "model"), limit=1),
        log=lambda m: None,
    )
    assert outcome.computed == 3


def fresh_copy(tiny_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run / "run", run_dir)
    return run_dir


def test_analysis_writes_shares_resumes_and_adds_the_section(tiny_run, tmp_path, capsys):
    run_dir = fresh_copy(tiny_run, tmp_path)
    outcome = analyze_attention(AttentionConfig(run_dir=str(run_dir)), log=lambda m: None)
    assert outcome.computed == 6 and outcome.reused == 0
    document = json.loads((run_dir / "analysis" / "attention" / "attention.json").read_text())
    assert document["columns"] == list(COLUMNS) and document["comparison"] is None
    variants = document["variants"]
    assert {v["transform"] for v in variants} == {"original", "drop_examples", "anonymize"}
    for variant in variants:
        assert variant["completion"]["text"] == "raw"  # chat mode: the model's own reply
        for row in variant["per_token"]:
            assert sum(row) == pytest.approx(1.0, abs=1e-4)
        assert sum(variant["shares"].values()) == pytest.approx(1.0, abs=1e-4)
        assert len(variant["layer_head"]) == 2 and len(variant["layer_head"][0]) == 4
        assert variant["tokens"]["generated"] == len(variant["per_token"])
        assert variant["tokens"]["name"] > 0
        if variant["transform"] == "drop_examples":
            assert variant["tokens"]["examples"] == 0 and variant["shares"]["examples"] == 0
        else:
            assert variant["tokens"]["examples"] > 0
    summary = document["summary"]["hf-model"]["original"]
    assert summary["variants"] == 2 and len(summary["layers"]) == 2
    assert sum(summary["shares"].values()) == pytest.approx(1.0, abs=1e-4)

    html = (run_dir / "report" / "report.html").read_text()
    assert 'id="analysis-attention"' in html and "Attention mass per block" in html

    # A rerun reads nothing again, through the command line as well.
    log = (run_dir / "analysis" / "attention" / "attention.jsonl").read_text()
    assert main(["analyze", "attention", str(run_dir)]) == 0
    assert "0 forward passes, 6 variants reused" in capsys.readouterr().out
    assert (run_dir / "analysis" / "attention" / "attention.jsonl").read_text() == log
    # A subset is a selection from the same records.
    again = analyze_attention(
        AttentionConfig(run_dir=str(run_dir), transforms=("original",), limit=1),
        log=lambda m: None,
    )
    assert again.computed == 0 and [v["task_id"] for v in again.document["variants"]] == [
        "HumanEval/23"
    ]


def test_compare_model_gives_a_difference_table(tiny_run, tmp_path):
    run_dir = fresh_copy(tiny_run, tmp_path)
    code = main(["analyze", "attention", str(run_dir), "--compare-model", str(tiny_run / "tuned")])
    assert code == 0
    document = json.loads((run_dir / "analysis" / "attention" / "attention.json").read_text())
    assert [m["label"] for m in document["models"]] == ["hf-model", "hf-tuned"]
    comparison = document["comparison"]
    assert comparison["first"] == "hf-model" and comparison["second"] == "hf-tuned"
    original = comparison["transforms"]["original"]
    assert original["variants"] == 2
    assert sum(original["difference"].values()) == pytest.approx(0.0, abs=1e-4)
    assert any(abs(v) > 1e-3 for v in original["difference"].values())  # layer 0 changed
    layers = original["layers"]
    assert any(abs(v) > 1e-3 for v in layers[0])
    html = (run_dir / "report" / "report.html").read_text()
    assert "Difference: hf-tuned minus hf-model" in html


def test_compare_run_dir_reads_that_runs_model(tiny_run, tmp_path):
    run_dir = fresh_copy(tiny_run, tmp_path)
    other = tmp_path / "other"
    shutil.copytree(tiny_run / "run", other)
    outcome = analyze_attention(
        AttentionConfig(run_dir=str(run_dir), compare=str(other), transforms=("original",)),
        log=lambda m: None,
    )
    # The same model and completions: read once, no difference.
    assert outcome.computed == 2 and outcome.reused == 2
    differences = outcome.document["comparison"]["transforms"]["original"]["difference"]
    assert all(v == 0 for v in differences.values())


def one_line_error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    # Progress bars may share stderr; the error itself is one line, without a traceback.
    errors = [line for line in err.splitlines() if "error:" in line]
    assert "Traceback" not in err and len(errors) == 1, err
    return errors[0]


def test_incompatible_run_directories_get_one_sentence(tiny_run, tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "manifest.json").write_text('{"config": {"models": []}}')
    (bare / "problems.jsonl").write_text((tiny_run / "run" / "problems.jsonl").read_text())
    err = one_line_error(capsys, ["analyze", "attention", str(bare)])
    assert "incompatible boi version" in err

    no_blocks = fresh_copy(tiny_run, tmp_path)
    rows = [json.loads(line) for line in (no_blocks / "problems.jsonl").read_text().splitlines()]
    (no_blocks / "problems.jsonl").write_text(
        "".join(json.dumps({**row, "blocks": None}) + "\n" for row in rows)
    )
    err = one_line_error(capsys, ["analyze", "attention", str(no_blocks)])
    assert "without blocks" in err and "incompatible" in err

    err = one_line_error(capsys, ["analyze", "attention", str(tmp_path / "missing")])
    assert "not a boi run directory" in err


def test_model_without_attention_weights_says_use_eager(tiny_run, tmp_path, capsys):
    run_dir = fresh_copy(tiny_run, tmp_path)
    assert main(["analyze", "attention", str(run_dir), "--transforms", "original"]) == 0
    log_path = run_dir / "analysis" / "attention" / "attention.jsonl"
    log = log_path.read_text()
    capsys.readouterr()
    # sdpa never materialises the weights; new work (another token limit) must fail cleanly.
    err = one_line_error(
        capsys,
        [
            "analyze",
            "attention",
            str(run_dir),
            "--attn-implementation",
            "sdpa",
            "--max-new-tokens",
            "3",
        ],
    )
    assert "no attention weights" in err and "eager" in err
    assert log_path.read_text() == log  # nothing lost
