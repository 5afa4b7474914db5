"""Tensor shapes of published models: the data of every op's ``models`` case set.

Each entry is named ``<model>/<tensor>`` after the public configuration it comes from (the Hugging Face
repository's ``config.json`` field, or the architecture's paper), with the token or batch count as a last part
where one tensor is swept over several (``llama3-8b/vocab/4096tok``, ``vit-b16/attn/b128``). The op specs turn
them into cases (:mod:`oprt_core.operators`): the dimensions shared by several ops are here, the selection an op
makes of them (which tensors, over which axis) is in its folder; a third-party op may use them too.

Widths are the configs' own, many of them not powers of two (50257, 151936, 3584, 18944, 77, 197, 577).
Row counts are realistic uses: 1-8 tokens (decoding), 128-512 (a short prompt), 4096 (a long prompt or a
training micro-batch); attention rows batch x heads x queries of the model's sequence length.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ModelShape", "VOCABS", "VOCAB_TOKENS", "LOSS_VOCABS", "LOSS_TOKENS", "LOSS_LONG", "WIDTHS",
           "WIDTH_TOKENS", "HIDDEN_KINDS", "ATTENTION", "CONV", "tokens", "attention", "conv", "ELEMENTWISE",
           "Gemm", "LAYERS", "GEMMS", "GEMM_TOKENS"]


@dataclass(frozen=True)
class ModelShape:
    """One case of the ``models`` set: its name, the input's shape, the axis an op reduces over, a second input's
    shape (a bias broadcast onto it), the tensor's kind (``hidden``, ``mlp``, ``expert``, ``vocab``, ``attention``,
    ``conv``, ``probe``) and the public config it comes from."""

    name: str
    shape: tuple[int, ...]
    source: str
    kind: str
    axis: int = -1
    bias: tuple[int, ...] | None = None


# -- widths of LLM tensors, each swept over token counts ----------------------------------------------------------
# (name, width, kind, source)
VOCABS = (
    ("gpt2/vocab", 50257, "vocab", "openai-community/gpt2 config.json vocab_size"),
    ("llama3-8b/vocab", 128256, "vocab", "meta-llama/Meta-Llama-3-8B config.json vocab_size"),
    ("qwen2-1.5b/vocab", 151936, "vocab", "Qwen/Qwen2-1.5B config.json vocab_size"),
    ("gemma-7b/vocab", 256000, "vocab", "google/gemma-7b config.json vocab_size"),
)
VOCAB_TOKENS = (1, 8, 512, 4096)

# -- the loss over a vocabulary: (tokens, vocabulary) logits ------------------------------------------------------
LOSS_VOCABS = (
    ("llama2-7b/vocab", 32000, "vocab", "meta-llama/Llama-2-7b-hf config.json vocab_size (Mistral-7B-v0.1 too)"),
    *VOCABS,
)
LOSS_TOKENS = (1, 16, 512, 4096)
#: longer batches of tokens (a training step's), where the logits stay within ~4 GiB of f32
LOSS_LONG = {32000: (8192, 16384), 50257: (16384,), 128256: (8192,)}

WIDTHS = (
    ("qwen2-7b/hidden", 3584, "hidden", "Qwen/Qwen2-7B config.json hidden_size"),
    ("llama3-8b/hidden", 4096, "hidden", "meta-llama/Meta-Llama-3-8B config.json hidden_size"),
    ("llama2-13b/hidden", 5120, "hidden", "meta-llama/Llama-2-13b-hf config.json hidden_size (Qwen2.5-14B too)"),
    ("deepseek-v3/hidden", 7168, "hidden", "deepseek-ai/DeepSeek-V3 config.json hidden_size"),
    ("llama3-70b/hidden", 8192, "hidden", "meta-llama/Meta-Llama-3-70B config.json hidden_size"),
    ("deepseek-v3/expert", 2048, "expert", "deepseek-ai/DeepSeek-V3 config.json moe_intermediate_size"),
    ("llama3-8b/mlp", 14336, "mlp", "meta-llama/Meta-Llama-3-8B config.json intermediate_size"),
    ("qwen2-7b/mlp", 18944, "mlp", "Qwen/Qwen2-7B config.json intermediate_size"),
)
WIDTH_TOKENS = (1, 128, 4096)

#: the kinds a per-token normalisation sees: the hidden states
HIDDEN_KINDS = ("hidden",)

# -- attention score rows: (batch, heads, queries, keys), normalised over the keys ---------------------------------
# (name, heads, sequence length, batches, source)
ATTENTION = (
    ("clip-vit-l14/text-attn", 12, 77, (8, 256),
     "openai/clip-vit-large-patch14 text_config: 12 heads, max_position_embeddings 77"),
    ("vit-b16/attn", 12, 197, (8, 128),
     "google/vit-base-patch16-224: 12 heads, (224/16)^2 patches + 1 class token"),
    ("clip-vit-l14-336/attn", 16, 577, (1, 32),
     "openai/clip-vit-large-patch14-336 vision_config: 16 heads, (336/14)^2 patches + 1 class token"),
)

# -- convolutional activations (N, C, H, W), batch 64 -------------------------------------------------------------
RESNET50 = "ResNet-50 (He et al. 2015, torchvision resnet50) at 224x224"
CONV = (
    ModelShape("resnet50/input/b64", (64, 3, 224, 224), RESNET50 + ": the RGB input", "conv", 1),
    ModelShape("resnet50/conv1/b64", (64, 64, 112, 112), RESNET50 + ": conv1's output", "conv", 1),
    ModelShape("resnet50/stage1/b64", (64, 256, 56, 56), RESNET50 + ": layer1's output", "conv", 1),
    ModelShape("resnet50/stage4/b64", (64, 2048, 7, 7), RESNET50 + ": layer4's output", "conv", 1),
)


def tokens(name: str, width: int, kind: str, source: str, counts: tuple[int, ...], axis: int = -1,
           bias: bool = False) -> tuple[ModelShape, ...]:
    """``name`` at each token count: ``(tokens, width)``, named ``<name>/<tokens>tok``."""
    return tuple(ModelShape(f"{name}{'+bias' if bias else ''}/{t}tok", (t, width), source, kind, axis,
                            (width,) if bias else None) for t in counts)


def attention() -> tuple[ModelShape, ...]:
    """The attention score rows of :data:`ATTENTION`: ``(batch, heads, seq, seq)``, named ``<name>/b<batch>``."""
    return tuple(ModelShape(f"{name}/b{b}", (b, heads, seq, seq), source, "attention")
                 for name, heads, seq, batches, source in ATTENTION for b in batches)


def conv(name: str) -> ModelShape:
    """The activation of :data:`CONV` named ``name``."""
    return next(m for m in CONV if m.name == name)


#: the activations an elementwise op sees (and a residual add, of two such): hidden states, MLP and MoE expert
#: activations at 1, 128 and 4096 tokens, and convolutional activations
ELEMENTWISE: tuple[ModelShape, ...] = (
    *(m for w in WIDTHS for m in tokens(*w, WIDTH_TOKENS)),
    conv("resnet50/conv1/b64"),
    conv("resnet50/stage1/b64"),
)

# -- the GEMMs of a transformer layer: tokens x K times a weight K x N --------------------------------------------


@dataclass(frozen=True)
class Gemm:
    """One weight of a transformer layer as a matmul ``(tokens, k) @ (k, n)``: its name (``<model>/<gemm>``),
    the reduction extent ``k``, the output width ``n`` and the public config the widths come from."""

    name: str
    k: int
    n: int
    source: str


# (model, hidden size, attention heads, key/value heads, head dim, MLP intermediate size, source)
LAYERS = (
    ("llama3-8b", 4096, 32, 8, 128, 14336, "meta-llama/Meta-Llama-3-8B config.json"),
    ("llama2-13b", 5120, 40, 40, 128, 13824, "meta-llama/Llama-2-13b-hf config.json"),
    ("qwen2-7b", 3584, 28, 4, 128, 18944, "Qwen/Qwen2-7B config.json"),
    ("llama3-70b", 8192, 64, 8, 128, 28672, "meta-llama/Meta-Llama-3-70B config.json"),
)


def _layer_gemms(model: str, hidden: int, heads: int, kv_heads: int, head_dim: int, inter: int,
                 source: str) -> tuple[Gemm, ...]:
    """The four GEMMs of one layer: the fused QKV projection (q, k and v heads side by side), the attention's
    output projection, the MLP's fused gate and up projection (2 x intermediate wide) and its down projection."""
    return (Gemm(f"{model}/qkv", hidden, (heads + 2 * kv_heads) * head_dim,
                 f"{source}: hidden_size {hidden}, {heads} heads, {kv_heads} key/value heads of {head_dim}"),
            Gemm(f"{model}/out-proj", heads * head_dim, hidden, f"{source}: {heads} heads of {head_dim}"),
            Gemm(f"{model}/mlp-up", hidden, 2 * inter, f"{source}: intermediate_size {inter}, gate and up fused"),
            Gemm(f"{model}/mlp-down", inter, hidden, f"{source}: intermediate_size {inter}"))


#: each published layer's four GEMMs (a GEMM op's ``models`` set sweeps them over :data:`GEMM_TOKENS`)
GEMMS: tuple[Gemm, ...] = tuple(g for layer in LAYERS for g in _layer_gemms(*layer))

#: token counts (the GEMM's M): decoding a batch of 1-64 sequences, then prompts of 512-16384 tokens
GEMM_TOKENS = (1, 16, 64, 512, 2048, 16384)
