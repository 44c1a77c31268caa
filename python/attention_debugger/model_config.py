"""config.json's model fields (docs/RUN_FOLDER.md, "config.json") and the tensors a checkpoint of
such a model holds, named as PyTorch's nn.Transformer state_dict names them ("checkpoints/")."""

from __future__ import annotations

INT_FIELDS = (
    "d_model", "heads", "d_ff", "encoder_layers", "decoder_layers",
    "src_vocab", "tgt_vocab", "max_len", "pad_id", "bos_id", "eos_id",
)
BOOL_FIELDS = ("norm_first", "final_norm", "share_embeddings")
MODEL_FIELDS = (
    "d_model", "heads", "d_ff", "encoder_layers", "decoder_layers", "src_vocab", "tgt_vocab", "dropout",
    "norm_first", "final_norm", "positional", "max_len", "share_embeddings", "pad_id", "bos_id", "eos_id",
)
# Names that may be absent from a checkpoint with share_embeddings: they are src_embed.weight (§3.4).
SHARED_NAMES = ("tgt_embed.weight", "generator.weight")


class ConfigError(ValueError):
    """A model config the run-folder format cannot describe; the message names the field."""


def validate_config(config: dict, source: str = "config") -> dict:
    """The model fields of `config`, checked and in the format's order; raises ConfigError naming the field."""
    if not isinstance(config, dict):
        raise ConfigError(f"{source}: expected a dict of model fields, got {type(config).__name__}")

    def fail(field: str, message: str):
        raise ConfigError(f"{source}: {field}: {message}")

    for f in INT_FIELDS:
        if f not in config:
            fail(f, "missing")
        v = config[f]
        if not isinstance(v, int) or isinstance(v, bool):
            fail(f, f"expected an integer, got {v!r}")
    for f in BOOL_FIELDS:
        if not isinstance(config.get(f), bool):
            fail(f, f"expected True or False, got {config.get(f)!r}")
    dropout = config.get("dropout")
    if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout < 1:
        fail("dropout", f"expected a number in [0, 1), got {dropout!r}")
    if config.get("positional") not in ("sinusoidal", "learned"):
        fail("positional", f'expected "sinusoidal" or "learned", got {config.get("positional")!r}')
    for f in ("d_model", "heads", "d_ff", "max_len", "encoder_layers", "decoder_layers"):
        if config[f] < 1:
            fail(f, f"must be at least 1, got {config[f]}")
    if config["d_model"] % config["heads"]:
        fail("d_model", f"{config['d_model']} is not divisible by heads={config['heads']}")
    if config["positional"] == "sinusoidal" and config["d_model"] % 2:
        fail("d_model", f"sinusoidal positions need an even d_model, got {config['d_model']}")
    for f in ("src_vocab", "tgt_vocab"):
        if config[f] < 4:
            fail(f, f"must hold at least the special tokens (4), got {config[f]}")
    if config["share_embeddings"] and config["src_vocab"] != config["tgt_vocab"]:
        fail("share_embeddings", f"needs src_vocab == tgt_vocab, got {config['src_vocab']} and {config['tgt_vocab']}")
    for f in ("pad_id", "bos_id", "eos_id"):
        if not 0 <= config[f] < min(config["src_vocab"], config["tgt_vocab"]):
            fail(f, f"{config[f]} is outside the vocabulary")
    return {f: config[f] for f in MODEL_FIELDS}


def _attention(prefix: str, d: int) -> list:
    return [
        (f"{prefix}.in_proj_weight", (3 * d, d)),  # W^Q, W^K, W^V stacked
        (f"{prefix}.in_proj_bias", (3 * d,)),
        (f"{prefix}.out_proj.weight", (d, d)),  # W^O
        (f"{prefix}.out_proj.bias", (d,)),
    ]


def _ffn(prefix: str, d: int, d_ff: int) -> list:
    return [
        (f"{prefix}.linear1.weight", (d_ff, d)),
        (f"{prefix}.linear1.bias", (d_ff,)),
        (f"{prefix}.linear2.weight", (d, d_ff)),
        (f"{prefix}.linear2.bias", (d,)),
    ]


def _norm(prefix: str, d: int) -> list:
    return [(f"{prefix}.weight", (d,)), (f"{prefix}.bias", (d,))]


def checkpoint_tensors(config: dict) -> list:
    """(name, shape) of every tensor a checkpoint of `config` holds, in the engine's order."""
    c = validate_config(config)
    d = c["d_model"]
    out = []
    for i in range(c["encoder_layers"]):
        p = f"encoder.layers.{i}"
        out += _attention(f"{p}.self_attn", d) + _ffn(p, d, c["d_ff"]) + _norm(f"{p}.norm1", d) + _norm(f"{p}.norm2", d)
    if c["final_norm"]:
        out += _norm("encoder.norm", d)
    for i in range(c["decoder_layers"]):
        p = f"decoder.layers.{i}"
        out += _attention(f"{p}.self_attn", d) + _attention(f"{p}.multihead_attn", d) + _ffn(p, d, c["d_ff"])
        out += _norm(f"{p}.norm1", d) + _norm(f"{p}.norm2", d) + _norm(f"{p}.norm3", d)
    if c["final_norm"]:
        out += _norm("decoder.norm", d)
    out += [
        ("src_embed.weight", (c["src_vocab"], d)),
        ("tgt_embed.weight", (c["tgt_vocab"], d)),
        ("generator.weight", (c["tgt_vocab"], d)),
        ("generator.bias", (c["tgt_vocab"],)),
    ]
    if c["positional"] == "learned":
        out += [("encoder.pos_embed.weight", (c["max_len"], d)), ("decoder.pos_embed.weight", (c["max_len"], d))]
    return out
