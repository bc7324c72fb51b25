"""A tiny random Llama with a byte-level BPE tokenizer trained in-process, shared by the tests
that need a causal LM (critic scoring, generation) without the embedded model."""

from __future__ import annotations

from collections.abc import Sequence


def tiny_llama(
    corpus: Sequence[str],
    vocab_size: int,
    max_positions: int,
    sharpen: float,
    chat_template: str | None = None,
):
    """(model, tokenizer): 2 layers, hidden size 32, fixed seed. Random init predicts nearly
    uniformly; `sharpen` scales the output head so outputs and scores depend on the prompt."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        list(corpus), vocab_size=vocab_size, special_tokens=["<s>", "</s>", "<pad>"]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)  # test-only: the weights just need to be fixed
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(sharpen)
    return model, tokenizer
