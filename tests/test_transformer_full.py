"""nn.Transformer, TransformerDecoder and TransformerDecoderLayer against torch 2.13: the same
state-dict keys, the same parameters from a seeded construction, and the same outputs and
gradients with the same weights, across batch_first, norm_first, activations and masks."""

import numpy as np
import pytest
import torch

import ndgrad

D, H, FF = 8, 2, 16


def copy_weights(src, dst):
    dst.load_state_dict({k: ndgrad.tensor(v.detach().numpy().copy())
                         for k, v in src.state_dict().items()})


def assert_close(n, t, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(n.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def both(fn):
    return fn(ndgrad), fn(torch)


def arr(seed, *shape):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


@pytest.mark.parametrize("kind", ["decoder_layer", "decoder", "transformer"])
def test_seeded_construction_draws_torch_parameters(kind):
    def make(lib):
        lib.manual_seed(3)
        if kind == "decoder_layer":
            return lib.nn.TransformerDecoderLayer(D, H, FF)
        if kind == "decoder":
            return lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(D, H, FF), 2,
                                             norm=lib.nn.LayerNorm(D))
        return lib.nn.Transformer(D, H, 2, 2, FF)
    n, t = both(make)
    nsd, tsd = n.state_dict(), t.state_dict()
    assert list(nsd) == list(tsd)
    for k in tsd:
        np.testing.assert_array_equal(nsd[k].numpy(), tsd[k].numpy(), err_msg=k)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_forward_and_backward(batch_first, norm_first, activation):
    def make(lib):
        return lib.nn.Transformer(D, H, 2, 2, FF, dropout=0.0, activation=activation,
                                  batch_first=batch_first, norm_first=norm_first)
    torch.manual_seed(0)
    tm = make(torch)
    nm = make(ndgrad)
    copy_weights(tm, nm)
    S, T, B = 5, 4, 3
    shape_s = (B, S, D) if batch_first else (S, B, D)
    shape_t = (B, T, D) if batch_first else (T, B, D)
    src, tgt = arr(1, *shape_s), arr(2, *shape_t)
    src_kpm = np.zeros((B, S), bool)
    src_kpm[0, -2:] = True
    tgt_kpm = np.zeros((B, T), bool)
    tgt_kpm[2, -1] = True
    mem_mask = arr(3, T, S) * 0.1

    def run(lib, model):
        out = model(lib.tensor(src), lib.tensor(tgt),
                    tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(T),
                    src_key_padding_mask=lib.tensor(src_kpm),
                    tgt_key_padding_mask=lib.tensor(tgt_kpm),
                    memory_key_padding_mask=lib.tensor(src_kpm),
                    memory_mask=lib.tensor(mem_mask))
        (out * lib.tensor(arr(4, *out.shape))).sum().backward()
        return out
    n_out, t_out = run(ndgrad, nm), run(torch, tm)
    assert tuple(n_out.shape) == tuple(t_out.shape)
    assert_close(n_out, t_out)
    tgrads = dict(tm.named_parameters())
    for name, p in nm.named_parameters():
        assert_close(p.grad, tgrads[name].grad, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_unbatched_and_float_masks(norm_first):
    torch.manual_seed(1)
    tl = torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=norm_first)
    nl = ndgrad.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=norm_first)
    copy_weights(tl, nl)
    tgt, mem = arr(5, 4, D), arr(6, 6, D)                   # unbatched (T, E) and (S, E)
    tgt_mask = np.triu(np.full((4, 4), -1e9, np.float32), 1)
    n, t = both(lambda lib: (nl if lib is ndgrad else tl)(
        lib.tensor(tgt), lib.tensor(mem), tgt_mask=lib.tensor(tgt_mask)))
    assert tuple(n.shape) == (4, D)
    assert_close(n, t)


def test_decoder_stack_with_causal_hint_and_eval_dropout():
    torch.manual_seed(2)
    tl = torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.3, batch_first=True)
    td = torch.nn.TransformerDecoder(tl, 3, norm=torch.nn.LayerNorm(D)).eval()
    nd = ndgrad.nn.TransformerDecoder(ndgrad.nn.TransformerDecoderLayer(
        D, H, FF, dropout=0.3, batch_first=True), 3, norm=ndgrad.nn.LayerNorm(D)).eval()
    copy_weights(td, nd)
    tgt, mem = arr(7, 2, 5, D), arr(8, 2, 3, D)
    for causal in (None, True):
        n, t = both(lambda lib, causal=causal: (nd if lib is ndgrad else td)(
            lib.tensor(tgt), lib.tensor(mem),
            tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(5),
            tgt_is_causal=causal))
        assert_close(n, t)


def test_square_subsequent_mask_and_errors():
    for sz in (1, 4):
        n, t = both(lambda lib, sz=sz: lib.nn.Transformer.generate_square_subsequent_mask(sz))
        assert n.dtype == ndgrad.float32 and n.tolist() == t.tolist()
    n, t = both(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(
        3, dtype=lib.float64))
    assert str(n.dtype) == str(t.dtype) and n.tolist() == t.tolist()
    for src_shape, tgt_shape, msg in [((5, 2, D), (4, 3, D), "the batch number of src and tgt"),
                                      ((5, 2, D), (4, 2, D + 1), "the feature number")]:
        for lib in (torch, ndgrad):
            m = lib.nn.Transformer(D, H, 1, 1, FF)
            with pytest.raises(RuntimeError, match=msg):
                m(lib.zeros(*src_shape), lib.zeros(*tgt_shape))


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"batch_first": True,
                                                            "norm_first": True},
                                {"batch_first": True, "activation": "gelu"},
                                {"batch_first": True, "activation": torch.tanh},
                                {"batch_first": True, "bias": False}])
def test_encoder_nested_tensor_warning_like_torch(kw):
    import warnings

    def make(lib):
        kw2 = dict(kw)
        if kw2.get("activation") is torch.tanh:
            kw2["activation"] = lib.tanh
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF, **kw2), 2)
        return [str(x.message) for x in w], enc.use_nested_tensor
    assert make(ndgrad) == make(torch)


def test_is_causal_needs_a_mask_like_torch():
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
        x, mem = lib.ones(3, 2, D), lib.ones(4, 2, D)
        calls = [
            lambda: lib.nn.MultiheadAttention(D, H)(x, x, x, is_causal=True),
            lambda: lib.nn.TransformerDecoderLayer(D, H, FF)(x, mem, tgt_is_causal=True),
            lambda: lib.nn.TransformerDecoderLayer(D, H, FF)(x, mem, memory_is_causal=True),
            lambda: lib.nn.TransformerEncoderLayer(D, H, FF)(x, is_causal=True),
        ]
        for call in calls:
            with pytest.raises(RuntimeError, match="Need attn_mask if specifying the "
                                                   "is_causal hint"):
                call()
