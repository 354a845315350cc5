"""nn layers against torch 2.13 with identical weights (and identical seeds for init):
outputs, gradients of every parameter, reprs, running statistics, containers."""

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ndgrad

RNG = np.random.default_rng(11)


def same_weights(tm, nm):
    """Copy torch's parameters and buffers into the ndgrad module (names must agree)."""
    tsd = tm.state_dict()
    nsd = nm.state_dict()
    assert list(tsd.keys()) == list(nsd.keys())
    nm.load_state_dict({k: ndgrad.from_numpy(v.numpy().copy()) for k, v in tsd.items()})


def run_both(make, inputs, *, seed=0, copy=True, out_index=None, atol=1e-5, train=True,
             reduce_out=None):
    torch.manual_seed(seed)
    tm = make(torch.nn)
    ndgrad.manual_seed(seed)
    nm = make(ndgrad.nn)
    assert repr(nm) == repr(tm)
    if copy:
        same_weights(tm, nm)
    tm.train(train)
    nm.train(train)
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray)
            else a for a in inputs]
    n_in = [ndgrad.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray)
            else a for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to = tm(*t_in)
        no = nm(*n_in)
    if out_index is not None:
        to, no = to[out_index], no[out_index]
    if reduce_out is not None:
        to, no = reduce_out(to), reduce_out(no)
    np.testing.assert_allclose(no.detach().numpy(), to.detach().numpy(), atol=atol, rtol=1e-5)
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(g))
    no.backward(ndgrad.tensor(g))
    for (k, p), (_, q) in zip(tm.named_parameters(), nm.named_parameters()):
        if p.grad is None:
            assert q.grad is None, k
            continue
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), atol=atol * 10, rtol=1e-4,
                                   err_msg=k)
    for a, b in zip(t_in, n_in):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            if b.grad is None:
                # torch materialises zeros where the input did not reach the output
                assert a.grad is None or not a.grad.any()
                continue
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=atol * 10,
                                       rtol=1e-4)
    return tm, nm


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_linear_bilinear_identity_flatten():
    run_both(lambda nn: nn.Linear(4, 3), [f32(5, 4)], copy=False)
    run_both(lambda nn: nn.Linear(4, 3, bias=False), [f32(2, 5, 4)], copy=False)
    run_both(lambda nn: nn.Bilinear(3, 2, 4), [f32(5, 3), f32(5, 2)], copy=False)
    run_both(lambda nn: nn.Sequential(nn.Flatten(), nn.Linear(12, 2), nn.Unflatten(1, (2, 1)),
                                      nn.Identity(7)), [f32(3, 3, 4)], copy=False)


def test_activation_modules():
    make = lambda nn: nn.Sequential(  # noqa: E731
        nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 6), nn.LeakyReLU(0.1), nn.ELU(), nn.GELU(),
        nn.SiLU(), nn.Mish(), nn.Softplus(beta=2), nn.Hardtanh(-0.5, 0.5), nn.Hardswish(),
        nn.Hardsigmoid(), nn.Tanh(), nn.Sigmoid(), nn.SELU(), nn.CELU(0.5), nn.ReLU6(),
        nn.LogSigmoid(), nn.Softsign(), nn.PReLU(), nn.GELU(approximate="tanh"),
        nn.Linear(6, 4), nn.GLU(), nn.Softmax(dim=1))
    run_both(make, [f32(3, 5)], copy=False)
    run_both(lambda nn: nn.LogSoftmax(dim=-1), [f32(3, 5)], copy=False)
    run_both(lambda nn: nn.Softmin(dim=0), [f32(3, 5)], copy=False)


def test_small_cnn_exact_init_and_grads():
    make = lambda nn: nn.Sequential(  # noqa: E731
        nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, padding=1,
                                                                   groups=2),
        nn.BatchNorm2d(6), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(24, 3))
    run_both(make, [f32(2, 1, 10, 10)], copy=False, seed=3, atol=2e-5)


def test_conv_modules_variants():
    run_both(lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), [f32(2, 3, 9)], copy=False)
    run_both(lambda nn: nn.Conv2d(2, 4, 3, padding="same", padding_mode="reflect"),
             [f32(1, 2, 5, 6)], copy=False)
    run_both(lambda nn: nn.Conv2d(2, 2, (2, 3), padding=(1, 0), padding_mode="circular",
                                  bias=False), [f32(1, 2, 5, 6)], copy=False)
    run_both(lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
             [f32(2, 3, 4, 4)], copy=False)
    run_both(lambda nn: nn.ConvTranspose1d(3, 2, 3, stride=2), [f32(2, 3, 4)], copy=False)
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    t = torch.nn.ConvTranspose2d(2, 2, 3, stride=2)
    n = ndgrad.nn.ConvTranspose2d(2, 2, 3, stride=2)
    x = f32(1, 2, 4, 4)
    assert tuple(n(ndgrad.tensor(x), output_size=[10, 10]).shape) == \
        tuple(t(torch.tensor(x), output_size=[10, 10]).shape)


def test_pooling_modules():
    run_both(lambda nn: nn.MaxPool1d(3, 2, 1), [f32(2, 3, 9)])
    run_both(lambda nn: nn.AvgPool1d(3, 2, 1), [f32(2, 3, 9)])
    run_both(lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), [f32(2, 3, 9, 8)])
    run_both(lambda nn: nn.AdaptiveAvgPool2d((3, None)), [f32(2, 3, 9, 8)])
    run_both(lambda nn: nn.AdaptiveMaxPool2d(4), [f32(2, 3, 9, 8)])
    run_both(lambda nn: nn.AdaptiveAvgPool1d(4), [f32(2, 3, 9)])


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_running_stats_over_steps(momentum):
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    t = torch.nn.BatchNorm1d(3, momentum=momentum)
    n = ndgrad.nn.BatchNorm1d(3, momentum=momentum)
    for _ in range(3):
        x = f32(4, 3)
        np.testing.assert_allclose(n(ndgrad.tensor(x)).detach().numpy(),
                                   t(torch.tensor(x)).detach().numpy(), atol=1e-5)
    # A running mean can cancel to ~1e-5; float32 sums in another order differ there by a few
    # ulps of the inputs (~1e-9), so the comparison is relative with a float32-sized floor.
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(n, k).numpy(), getattr(t, k).numpy(), rtol=1e-5,
                                   atol=1e-7)
    t.eval()
    n.eval()
    x = f32(2, 3)
    np.testing.assert_allclose(n(ndgrad.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        n(ndgrad.zeros(1, 2, 3, 4))


def test_norm_modules():
    run_both(lambda nn: nn.LayerNorm((3, 4)), [f32(2, 3, 4)])
    run_both(lambda nn: nn.LayerNorm(4, elementwise_affine=False), [f32(2, 3, 4)])
    run_both(lambda nn: nn.GroupNorm(2, 4), [f32(2, 4, 5)])
    run_both(lambda nn: nn.InstanceNorm1d(3, affine=True), [f32(2, 3, 5)])
    run_both(lambda nn: nn.InstanceNorm2d(3), [f32(2, 3, 4, 5)])
    run_both(lambda nn: nn.BatchNorm2d(3, affine=False), [f32(2, 3, 4, 5)])


def test_embedding_module():
    idx = np.array([[1, 0, 3], [3, 3, 2]])
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    t = torch.nn.Embedding(5, 2, padding_idx=-1)
    n = ndgrad.nn.Embedding(5, 2, padding_idx=-1)
    assert repr(t) == repr(n)
    np.testing.assert_array_equal(n.weight.detach().numpy(), t.weight.detach().numpy())
    n(ndgrad.tensor(idx)).sum().backward()
    t(torch.tensor(idx)).sum().backward()
    np.testing.assert_array_equal(n.weight.grad.numpy(), t.weight.grad.numpy())
    pre = ndgrad.nn.Embedding.from_pretrained(ndgrad.ones(2, 3))
    assert not pre.weight.requires_grad


def test_dropout_modules_follow_torch_stream():
    run_both(lambda nn: nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3)), [f32(6, 4)], seed=4)
    tm, nm = run_both(lambda nn: nn.Dropout2d(0.5), [f32(2, 3, 2, 2)], seed=5)
    run_both(lambda nn: nn.Dropout(0.3), [f32(6, 4)], train=False)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True),
                                dict(batch_first=True, bias=False),
                                dict(num_layers=2, dropout=0.5)])
def test_recurrent(cls, kw):
    def make(nn):
        return getattr(nn, cls)(3, 4, **kw)
    x = f32(2, 5, 3) if kw.get("batch_first") else f32(5, 2, 3)
    # output and the final hidden state both carry gradient
    run_both(make, [x], out_index=0, seed=7, train=True)  # dropout draws match torch too
    tm, nm = run_both(make, [x], seed=7, train=False,
                      reduce_out=lambda o: o[1][0] if cls == "LSTM" else o[1])


def test_recurrent_given_state_and_unbatched():
    h0 = f32(1, 2, 4)
    run_both(lambda nn: nn.GRU(3, 4), [f32(5, 2, 3), h0], out_index=0)
    run_both(lambda nn: nn.RNN(3, 4, nonlinearity="relu"), [f32(5, 3)], out_index=0)
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    t, n = torch.nn.LSTM(3, 4), ndgrad.nn.LSTM(3, 4)
    x, h, c = f32(5, 3), f32(1, 4), f32(1, 4)
    to = t(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
    no = n(ndgrad.tensor(x), (ndgrad.tensor(h), ndgrad.tensor(c)))
    np.testing.assert_allclose(no[0].detach().numpy(), to[0].detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(no[1][1].detach().numpy(), to[1][1].detach().numpy(), atol=1e-6)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(cls):
    def make(nn):
        return getattr(nn, cls)(3, 4)
    run_both(make, [f32(2, 3)], out_index=0 if cls == "LSTMCell" else None)
    run_both(make, [f32(3)], out_index=1 if cls == "LSTMCell" else None)


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True), dict(kdim=3, vdim=5),
                                dict(bias=False), dict(add_bias_kv=True, add_zero_attn=True)])
def test_multihead_attention(kw):
    e = 8
    kd, vd = kw.get("kdim", e), kw.get("vdim", e)
    q, k, v = f32(4, 2, e), f32(6, 2, kd), f32(6, 2, vd)
    if kw.get("batch_first"):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    run_both(lambda nn: nn.MultiheadAttention(e, 2, **kw), [q, k, v], out_index=0, copy=False)
    run_both(lambda nn: nn.MultiheadAttention(e, 2, **kw), [q, k, v], out_index=1, copy=False)


def test_multihead_attention_masks():
    e = 6
    q = f32(4, 3, e)
    mask = np.triu(np.ones((4, 4), dtype=bool), 1)
    kpm = np.zeros((3, 4), dtype=bool)
    kpm[1, 3] = True
    for args in ([q, q, q, torch.tensor(kpm)],):
        pass
    for lib_mask in ("bool", "float"):
        am = mask if lib_mask == "bool" else np.where(mask, -1e9, 0.0).astype(np.float32)
        torch.manual_seed(0)
        ndgrad.manual_seed(0)
        t, n = torch.nn.MultiheadAttention(e, 3), ndgrad.nn.MultiheadAttention(e, 3)
        to = t(torch.tensor(q), torch.tensor(q), torch.tensor(q), attn_mask=torch.tensor(am),
               key_padding_mask=torch.tensor(kpm))
        no = n(ndgrad.tensor(q), ndgrad.tensor(q), ndgrad.tensor(q),
               attn_mask=ndgrad.tensor(am), key_padding_mask=ndgrad.tensor(kpm))
        np.testing.assert_allclose(no[0].detach().numpy(), to[0].detach().numpy(), atol=1e-5)
        np.testing.assert_allclose(no[1].detach().numpy(), to[1].detach().numpy(), atol=1e-6)


@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True, activation="gelu"),
                                dict(batch_first=True)])
def test_transformer_encoder_layer(kw):
    make = lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw)  # noqa: E731
    run_both(make, [f32(5, 2, 8)], copy=False)
    if kw.get("batch_first"):
        return
    mask = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    t, n = make(torch.nn), make(ndgrad.nn)
    x = f32(5, 2, 8)
    np.testing.assert_allclose(n(ndgrad.tensor(x), src_mask=ndgrad.tensor(mask)).detach()
                               .numpy(),
                               t(torch.tensor(x), src_mask=torch.tensor(mask)).detach().numpy(),
                               atol=1e-5)


def test_transformer_encoder_stack():
    def make(nn):
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    run_both(make, [f32(4, 2, 8)], copy=False)


def test_loss_modules():
    x, t = f32(4, 3), np.array([0, 2, 1, 1])
    w = torch.tensor([0.2, 1.0, 2.0])
    cases = [
        (lambda nn, lib: nn.CrossEntropyLoss(), [x, t]),
        (lambda nn, lib: nn.CrossEntropyLoss(weight=lib.tensor(w.numpy()), label_smoothing=0.1,
                                             ignore_index=2), [x, t]),
        (lambda nn, lib: nn.NLLLoss(reduction="sum"), [x, t]),
        (lambda nn, lib: nn.MSELoss(), [x, f32(4, 3)]),
        (lambda nn, lib: nn.L1Loss(reduction="none"), [x, f32(4, 3)]),
        (lambda nn, lib: nn.SmoothL1Loss(beta=0.5), [x, f32(4, 3)]),
        (lambda nn, lib: nn.HuberLoss(delta=0.3), [x, f32(4, 3)]),
        (lambda nn, lib: nn.BCEWithLogitsLoss(pos_weight=lib.tensor(w.numpy())),
         [x, RNG.uniform(size=(4, 3)).astype(np.float32)]),
        (lambda nn, lib: nn.BCELoss(), [RNG.uniform(0.1, 0.9, (4, 3)).astype(np.float32),
                                        RNG.uniform(size=(4, 3)).astype(np.float32)]),
        (lambda nn, lib: nn.KLDivLoss(reduction="batchmean"), [x, RNG.uniform(
            size=(4, 3)).astype(np.float32)]),
    ]
    for make, arrays in cases:
        outs = []
        for lib in (torch, ndgrad):
            m = make(lib.nn, lib)
            ins = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
            out = m(*ins)
            out.sum().backward()
            outs.append((repr(m), out.detach().numpy(), ins[0].grad.numpy()))
        assert outs[0][0] == outs[1][0]
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-5, atol=1e-6)


def test_containers():
    for make in (lambda nn, lib: nn.ParameterList([nn.Parameter(lib.zeros(2)),
                                                   lib.zeros(2, 3).double()]),
                 lambda nn, lib: nn.ParameterList([nn.Parameter(lib.zeros(2))]),
                 lambda nn, lib: nn.ParameterDict({"a": nn.Parameter(lib.zeros(2))}),
                 lambda nn, lib: nn.ParameterDict({"b": lib.ones(1), "a": lib.zeros(2, 2)})):
        t, n = make(torch.nn, torch), make(ndgrad.nn, ndgrad)
        assert repr(t) == repr(n)
        assert [k for k, _ in t.named_parameters()] == [k for k, _ in n.named_parameters()]
    seq = ndgrad.nn.Sequential(OrderedDict(a=ndgrad.nn.ReLU(), b=ndgrad.nn.Tanh()))
    tseq = torch.nn.Sequential(OrderedDict(a=torch.nn.ReLU(), b=torch.nn.Tanh()))
    assert repr(seq[1:]) == repr(tseq[1:]) and len(seq) == 2
    seq.append(ndgrad.nn.Sigmoid())
    tseq.append(torch.nn.Sigmoid())
    del seq[0]
    del tseq[0]
    assert repr(seq) == repr(tseq)
    ml = ndgrad.nn.ModuleList([ndgrad.nn.ReLU()])
    ml.extend([ndgrad.nn.Tanh(), ndgrad.nn.Tanh()])
    ml.insert(0, ndgrad.nn.Sigmoid())
    tml = torch.nn.ModuleList([torch.nn.ReLU()])
    tml.extend([torch.nn.Tanh(), torch.nn.Tanh()])
    tml.insert(0, torch.nn.Sigmoid())
    assert repr(ml) == repr(tml) and ml[-1] is ml[3]
    md = ndgrad.nn.ModuleDict({"x": ndgrad.nn.ReLU()})
    md["y"] = ndgrad.nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ml[5]


def test_mlp_training_matches_torch_over_steps():
    def make(nn):
        return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    t, n = make(torch.nn), make(ndgrad.nn)
    x, y = f32(32, 6), RNG.integers(0, 3, 32)
    for _ in range(5):
        for lib, m in ((torch, t), (ndgrad, n)):
            m.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            with lib.no_grad():
                for p in m.parameters():
                    p -= 0.5 * p.grad
    for p, q in zip(t.parameters(), n.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), atol=2e-6)


def test_transformer_and_attention_dropout_follow_torch_stream():
    run_both(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3), [f32(5, 2, 8)],
             copy=False, seed=2)
    run_both(lambda nn: nn.MultiheadAttention(8, 2, dropout=0.3), [f32(5, 2, 8)] * 3,
             copy=False, seed=3, out_index=0)


def test_lstm_double_backward_through_fused_cell():
    x = RNG.standard_normal((4, 2, 3))
    res = []
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
        m = lib.nn.LSTM(3, 4).double()
        xt = lib.tensor(x, requires_grad=True)
        out, (h, c) = m(xt)
        (g,) = lib.autograd.grad((out ** 2).sum() + (c ** 3).sum(), xt, create_graph=True)
        ws = list(m.parameters())
        res.append([t.numpy() for t in lib.autograd.grad((g * g).sum(), [xt] + ws)])
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cls", ["GRU", "RNN"])
def test_gru_rnn_double_backward(cls):
    x = RNG.standard_normal((4, 2, 3))
    res = []
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
        m = getattr(lib.nn, cls)(3, 4, bidirectional=True).double()
        xt = lib.tensor(x, requires_grad=True)
        out, h = m(xt)
        (g,) = lib.autograd.grad((out ** 2).sum() + (h ** 3).sum(), xt, create_graph=True)
        ws = list(m.parameters())
        res.append([t.numpy() for t in lib.autograd.grad((g * g).sum(), [xt] + ws)])
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


def test_padding_upsample_distance_fold_modules():
    run_both(lambda nn: nn.Sequential(nn.ConstantPad2d(1, 2.0), nn.ZeroPad2d((1, 2, 0, 1)),
                                      nn.ReflectionPad2d(2), nn.ReplicationPad2d((1, 0, 2, 1)),
                                      nn.CircularPad2d(1)), [f32(2, 3, 4, 5)])
    run_both(lambda nn: nn.Sequential(nn.ReflectionPad1d((1, 2)), nn.ReplicationPad1d(2),
                                      nn.ConstantPad1d((0, 1), -1.0), nn.ZeroPad1d(1),
                                      nn.CircularPad1d((2, 1))), [f32(2, 3, 5)])
    run_both(lambda nn: nn.Upsample(scale_factor=2), [f32(1, 2, 3, 3)])
    run_both(lambda nn: nn.Upsample(size=(5, 4), mode="bilinear", align_corners=True),
             [f32(1, 2, 3, 3)])
    run_both(lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), [f32(1, 2, 3, 3)])
    run_both(lambda nn: nn.CosineSimilarity(dim=1), [f32(3, 4), f32(3, 4)])
    run_both(lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True), [f32(3, 4), f32(3, 4)])
    run_both(lambda nn: nn.Unfold(2, padding=1), [f32(1, 2, 3, 3)])
    run_both(lambda nn: nn.Fold((3, 3), 2), [f32(1, 8, 4)])


def test_parameter_grads_are_contiguous_like_torch():
    for make in (lambda nn: nn.Linear(5, 3), lambda nn: nn.Conv2d(2, 3, 3),
                 lambda nn: nn.LSTM(3, 4)):
        flags = []
        for lib, shape in ((torch, None), (ndgrad, None)):
            m = make(lib.nn)
            x = lib.ones(2, 2, 5, 5) if isinstance(m, lib.nn.Conv2d) else \
                lib.ones(4, 2, 3) if isinstance(m, lib.nn.LSTM) else lib.ones(4, 5)
            out = m(x)
            (out[0] if isinstance(out, tuple) else out).sum().backward()
            flags.append([p.grad.is_contiguous() for p in m.parameters()])
        assert flags[0] == flags[1]


@pytest.mark.filterwarnings("ignore")
def test_lstm_projections():
    make = lambda nn: nn.LSTM(3, 5, num_layers=2, proj_size=2,  # noqa: E731
                              bidirectional=True)
    run_both(make, [f32(4, 2, 3)], out_index=0, seed=1)
    run_both(make, [f32(4, 2, 3)], seed=1, reduce_out=lambda o: o[1][1])
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        ndgrad.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        ndgrad.nn.GRU(3, 4, proj_size=2)


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell"])
def test_cell_loop_double_backward(cls):
    xs = RNG.standard_normal((3, 2, 3))
    res = []
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
        cell = getattr(lib.nn, cls)(3, 4).double()
        x = lib.tensor(xs, requires_grad=True)
        state = None
        total = 0
        for t in range(3):
            state = cell(x[t], state)
            h = state[0] if cls == "LSTMCell" else state
            total = total + (h ** 2).sum()
        (g,) = lib.autograd.grad(total, x, create_graph=True)
        res.append([t.numpy() for t in lib.autograd.grad((g * g).sum(),
                                                          [x] + list(cell.parameters()))])
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


REPRS = [
    lambda nn: nn.Conv2d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False,
                         padding_mode="reflect"),
    lambda nn: nn.Conv1d(2, 4, 3, padding="same"),
    lambda nn: nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1),
    lambda nn: nn.Embedding(5, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True),
    lambda nn: nn.LSTM(2, 3, 2, bias=False, dropout=0.2),
    lambda nn: nn.GRU(2, 3, batch_first=True), lambda nn: nn.RNN(2, 3, nonlinearity="relu"),
    lambda nn: nn.RNNCell(2, 3, nonlinearity="relu", bias=False),
    lambda nn: nn.LSTMCell(2, 3), lambda nn: nn.GRUCell(2, 3, bias=False),
    lambda nn: nn.AvgPool2d(3, 1, 1), lambda nn: nn.AvgPool1d(3), lambda nn: nn.MaxPool1d(3),
    lambda nn: nn.AdaptiveMaxPool2d((2, 3)), lambda nn: nn.AdaptiveAvgPool2d(1),
    lambda nn: nn.LayerNorm(4, bias=False), lambda nn: nn.LayerNorm([2, 3], eps=1e-3),
    lambda nn: nn.Softplus(2, 10), lambda nn: nn.Hardtanh(-2, 2),
    lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.PReLU(3), lambda nn: nn.GLU(),
    lambda nn: nn.Softmax(), lambda nn: nn.LogSoftmax(1), lambda nn: nn.ELU(0.5, True),
    lambda nn: nn.CELU(), lambda nn: nn.LeakyReLU(0.2, True), lambda nn: nn.ReLU(True),
    lambda nn: nn.Softshrink(), lambda nn: nn.Hardshrink(0.3), lambda nn: nn.SiLU(True),
    lambda nn: nn.Dropout1d(), lambda nn: nn.Dropout2d(0.1, True),
    lambda nn: nn.Unflatten(1, (2, 2)),
    lambda nn: nn.BatchNorm1d(3, affine=False, track_running_stats=False, momentum=None),
    lambda nn: nn.InstanceNorm2d(3), lambda nn: nn.GroupNorm(2, 4, affine=False),
    lambda nn: nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True),
    lambda nn: nn.Bilinear(2, 3, 4, bias=False),
    lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1), lambda nn: nn.TripletMarginLoss(),
    lambda nn: nn.TransformerEncoderLayer(4, 2, 8, activation=nn.GELU(), norm_first=True),
    lambda nn: nn.Identity(3, x=4), lambda nn: nn.ParameterList(), lambda nn: nn.ModuleDict(),
    lambda nn: nn.Sequential(),
]


def test_module_reprs_match_torch():
    for make in REPRS:
        assert repr(make(ndgrad.nn)) == repr(make(torch.nn))


def test_rnn_single_layer_dropout_warns_like_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ndgrad.nn.GRU(2, 3, dropout=0.3)


@pytest.mark.parametrize("name", ["Embedding", "EmbeddingBag"])
@pytest.mark.parametrize("n,idx", [(5, -5), (5, 4), (5, 5), (5, -6), (0, 0), (5, None), (5, -1)])
def test_embedding_padding_idx_range_like_torch(name, n, idx):
    res = []
    for lib in (ndgrad, torch):
        try:
            res.append(getattr(lib.nn, name)(n, 3, padding_idx=idx).padding_idx)
        except (AssertionError, IndexError) as e:  # (0, 0): both fail zeroing the padding row
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]
