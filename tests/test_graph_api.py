"""The graph API (torch.autograd.graph): Node attributes and hooks, saved values under torch's
names, gradient edges, multi-grad hooks, and DOT pictures of the graph."""

import os
import re
import stat

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad.autograd import graph as ngraph

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 3)).astype(np.float32)
Y = RNG.standard_normal((3, 3)).astype(np.float32) + 2
V = RNG.standard_normal(3).astype(np.float32)
P = np.abs(X) + 0.5


def _cases(lib):
    x = lib.tensor(X, requires_grad=True)
    y = lib.tensor(Y, requires_grad=True)
    v = lib.tensor(V, requires_grad=True)
    p = lib.tensor(P, requires_grad=True)
    return {
        "mul": x * y, "div": x / y, "exp": x.exp(), "log": p.log(), "sqrt": p.sqrt(),
        "rsqrt": p.rsqrt(), "sin": x.sin(), "cos": x.cos(), "tanh": x.tanh(),
        "sigmoid": x.sigmoid(), "relu": x.relu(), "abs": x.abs(), "pow": p ** 2,
        "pow_t": p ** y, "rpow": 2 ** x, "mm": x @ y, "mv": x @ v, "dot": v.dot(v),
        "addmm": lib.addmm(v, x, y), "maximum": lib.maximum(x, y), "where": lib.where(x > 0, x, y),
        "amax": x.amax(1), "max": x.max(), "prod": p.prod(),
        "gather": x.gather(1, lib.zeros(3, 1, dtype=lib.long)),
        "masked_fill": x.masked_fill(x > 0, 1.0), "reciprocal": p.reciprocal(),
        "expm1": x.expm1(), "log1p": p.log1p(),
    }


def _saved_names(fn):
    return {n for n in dir(fn) if n.startswith("_saved_") and "sym" not in n}


def test_saved_attribute_names_and_values_match_torch():
    tc, nc = _cases(torch), _cases(ndgrad)
    for key in tc:
        tfn, nfn = tc[key].grad_fn, nc[key].grad_fn
        assert nfn.name() == tfn.name(), key
        names = _saved_names(nfn)
        assert names, key
        assert names <= _saved_names(tfn), (key, names, _saved_names(tfn))
        for n in names:
            tv, nv = getattr(tfn, n), getattr(nfn, n)
            if isinstance(tv, torch.Tensor):
                np.testing.assert_allclose(nv.detach().numpy(), tv.detach().numpy(), rtol=1e-5,
                                           err_msg=f"{key}.{n}")
            else:
                assert nv == tv, (key, n)


def test_common_saved_names_exactly():
    c = _cases(ndgrad)
    assert _saved_names(c["mul"].grad_fn) == {"_saved_self", "_saved_other"}
    assert _saved_names(c["exp"].grad_fn) == {"_saved_result"}
    assert _saved_names(c["mm"].grad_fn) == {"_saved_self", "_saved_mat2"}
    assert _saved_names(c["where"].grad_fn) == {"_saved_condition"}
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    # A saved Python number comes back as a tensor for mul, a number for pow, as in torch.
    assert (x * 2).grad_fn._saved_other.item() == (t * 2).grad_fn._saved_other.item() == 2
    assert (x ** 2).grad_fn._saved_exponent == (t ** 2).grad_fn._saved_exponent == 2
    assert x.view(2).grad_fn._saved_self_sym_sizes == t.view(2).grad_fn._saved_self_sym_sizes
    with pytest.raises(AttributeError):
        (x * 2).grad_fn._saved_nothing


def test_saved_result_keeps_no_cycle_and_is_connected():
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    r = y.grad_fn._saved_result
    assert r is not y and r.grad_fn is y.grad_fn
    np.testing.assert_allclose(r.detach().numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_metadata_next_functions_isinstance_variable():
    for lib in (torch, ndgrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
        fn = y.grad_fn
        fn.metadata["tag"] = 7
        assert y.grad_fn.metadata == {"tag": 7}
        nf = fn.next_functions
        assert nf[0][0].name() == "MulBackward0" and nf[0][1] == 0
        acc = nf[0][0].next_functions[0][0]
        assert acc.name() == "torch::autograd::AccumulateGrad"
        assert type(acc).__name__ == "AccumulateGrad"
        assert acc.variable is x
        assert nf[0][0].next_functions[1] == (None, 0)
        assert isinstance(fn, lib.autograd.graph.Node)
        assert isinstance(acc, lib.autograd.graph.Node)
        assert not isinstance(x, lib.autograd.graph.Node)


def test_node_hooks_order_and_arguments_match_torch():
    logs = {}
    for lib in (torch, ndgrad):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: log.append(("tensor", g.tolist())))
        y.grad_fn.register_prehook(lambda go: log.append(("pre", [g.tolist() for g in go])))

        def post(gi, go):
            log.append(("post", [None if g is None else g.tolist() for g in gi],
                        [g.tolist() for g in go]))
            return (gi[0] * 10,) + tuple(gi[1:])
        h = y.grad_fn.register_hook(post)
        (y * y).sum().backward(retain_graph=True)
        log.append(("grad", x.grad.tolist()))
        h.remove()
        x.grad = None
        (y * 1).sum().backward()
        log.append(("grad2", x.grad.tolist()))
        logs[lib] = log
    assert logs[ndgrad] == logs[torch]


def test_gradient_edge_and_increment_version_match_torch():
    res = {}
    for lib in (torch, ndgrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        out = (h * h).sum()
        edge = lib.autograd.graph.get_gradient_edge(h)
        assert edge.node is h.grad_fn and edge.output_nr == 0
        g, = lib.autograd.grad(out, edge, retain_graph=True)
        v0 = h._version
        lib.autograd.graph.increment_version(h)
        res[lib] = (g.tolist(), h._version - v0)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.graph.get_gradient_edge(lib.ones(2))
        res[lib] += (str(e.value),)
    assert res[ndgrad] == res[torch]


def test_multi_grad_hook_all_and_any_match_torch():
    logs = {}
    for lib in (torch, ndgrad):
        log = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0], requires_grad=True)
        reg = lib.autograd.graph.register_multi_grad_hook
        h = reg((a, b, c), lambda gs: log.append(
            ("all", [None if g is None else g.tolist() for g in gs])))
        (a * b).sum().backward()
        (a * c).sum().backward()
        (a * b).sum().backward()
        h.remove()
        (a * b).sum().backward()
        h2 = reg((a, b), lambda g: log.append(("any", g.tolist())), mode="any")
        (a * 2 + b * 3).sum().backward()
        (a * 2 + b * 3).sum().backward()
        h2.remove()
        with pytest.raises(ValueError) as e:
            reg((a,), print, mode="some")
        log.append(str(e.value))
        logs[lib] = log
    assert logs[ndgrad] == logs[torch]


def test_multi_grad_hook_on_non_leaves():
    logs = {}
    for lib in (torch, ndgrad):
        log = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        u, w = a * 2, a * 3
        lib.autograd.graph.register_multi_grad_hook(
            (u, w), lambda gs: log.append([None if g is None else g.tolist() for g in gs]))
        (u * w).sum().backward(retain_graph=True)
        lib.autograd.grad(u.sum(), a)
        logs[lib] = log
    assert logs[ndgrad] == logs[torch]


# ------------------------------------------------------------------ pictures
def _graph():
    w = ndgrad.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    x = ndgrad.tensor(np.ones((4, 2), dtype=np.float32))
    loss = (x @ w).tanh().sum()
    return w, loss


def test_to_dot_nodes_leaves_and_saved():
    w, loss = _graph()
    src = ngraph.to_dot(loss, params={"weight": w}, show_saved=True)
    assert src.startswith("digraph backward {") and src.rstrip().endswith("}")
    for name in ("SumBackward0", "TanhBackward0", "MmBackward0"):
        assert f'label="{name}' in src
    assert 'label="weight\\n(2, 3)", fillcolor=lightblue' in src
    assert 'label="result\\n(4, 3)", fillcolor=orange' in src  # tanh's saved result
    assert 'label="self\\n(4, 2)", fillcolor=orange' in src    # mm's saved input
    assert src.count("->") == 3 + 1 + 2  # graph edges + output edge + saved edges
    plain = ngraph.to_dot(loss)
    assert "orange" not in plain and 'label="(2, 3)"' in plain
    # Every statement uses plain identifiers, as Graphviz requires unquoted ids to be.
    import re
    for line in src.splitlines()[3:-1]:
        ids = re.findall(r"^\s*([^\s;]+)(?: -> ([^\s;]+))?", line)[0]
        for i in ids:
            assert i == "" or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", i), line


def test_to_dot_with_profile_times():
    w = ndgrad.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    with ndgrad.autograd.profiler.profile() as prof:
        loss = (w * 2).sum()
        loss.backward(retain_graph=True)
    src = ngraph.to_dot(loss, profile=prof)
    line = [s for s in src.splitlines() if "MulBackward0" in s][0]
    # the node's time, in the unit its size calls for (ms when a loaded machine is slow)
    assert re.fullmatch(r"\d+\.\d{3}(us|ms|s)", line.split("\\n")[1].split('"')[0])


def test_render_needs_dot_and_says_so(monkeypatch, tmp_path):
    _, loss = _graph()
    monkeypatch.setattr(ngraph.shutil if hasattr(ngraph, "shutil") else
                        __import__("ndgrad.autograd._graph_introspection", fromlist=["x"]).shutil,
                        "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz's `dot` program, which was not found"):
        ngraph.render(loss, str(tmp_path / "g.svg"))


def test_render_calls_dot(monkeypatch, tmp_path):
    # A stand-in `dot` that records its arguments and copies the DOT source to the output.
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho \"$@\" > \"" + str(tmp_path / "args") + "\"\n"
                    "cat > \"$3\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    _, loss = _graph()
    out = tmp_path / "g.png"
    assert ngraph.render(loss, str(out)) == str(out)
    assert (tmp_path / "args").read_text().split()[:2] == ["-Tpng", "-o"]
    assert out.read_text().startswith("digraph backward")


def test_engine_state_visible_to_multi_grad_hooks_and_checkpoint():
    # register_multi_grad_hook and checkpoint read the running backward's GraphTask: the
    # pending dependencies still list the leaf's accumulator while y's hook runs.
    from ndgrad.autograd._graph_introspection import _current_task
    seen = []
    x = ndgrad.ones(2, requires_grad=True)
    y = x * 2
    acc = x._accumulator()

    def hook(g):
        deps, heap, needed, _, _ = _current_task()
        seen.append((type(deps), type(heap), needed, acc in deps))

    y.register_hook(hook)
    (y * y).sum().backward()
    assert seen == [(dict, list, None, True)]
    assert _current_task() is None


def test_accumulate_grad_node_hooks_match_torch():
    logs = {}
    for lib in (torch, ndgrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        log = []
        x.register_hook(lambda g: log.append(("tensor", g.tolist())))
        acc.register_prehook(lambda go: log.append(("pre", [g.tolist() for g in go])))
        acc.register_hook(lambda gi, go: log.append(("post", list(gi), [g.tolist() for g in go])))
        y.sum().backward()
        logs[lib] = (log, x.grad.tolist())
    assert logs[ndgrad] == logs[torch]


def test_multi_grad_hook_along_a_chain_matches_torch():
    logs = {}
    for lib in (torch, ndgrad):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        u = a * 2
        v = u.exp()
        w = v * 3
        log = []
        lib.autograd.graph.register_multi_grad_hook(
            (u, v, w), lambda gs: log.append([None if g is None else round(g.sum().item(), 3)
                                              for g in gs]))
        w.sum().backward(retain_graph=True)
        v.sum().backward()
        logs[lib] = log
    assert logs[ndgrad] == logs[torch]
    assert logs[ndgrad][1][2] is None


def test_saved_names_of_nn_and_linalg_ops_match_torch():
    import torch.nn.functional as TF
    rng = np.random.default_rng(1)
    xd = rng.standard_normal((3, 3)).astype(np.float32)
    yd = rng.standard_normal((3, 3)).astype(np.float32)
    bd = rng.standard_normal((2, 3, 3)).astype(np.float32)

    def cases(lib):
        F = TF if lib is torch else ndgrad.nn.functional
        x = lib.tensor(xd, requires_grad=True)
        y = lib.tensor(yd, requires_grad=True)
        b = lib.tensor(bd, requires_grad=True)
        return {"addbmm": lib.addbmm(x, b, b), "baddbmm": lib.baddbmm(x, b, b),
                "addcmul": lib.addcmul(x, x, y), "sort": x.sort(1)[0], "topk": x.topk(2)[0],
                "linear": F.linear(x, y, x[0]), "lerp": lib.lerp(x, y, x),
                "embedding": F.embedding(lib.tensor([0, 2]), x),
                "layer_norm": F.layer_norm(x, (3,), x[0], x[1]),
                "qr": lib.linalg.qr(x)[0], "eigh": lib.linalg.eigh(x @ x.T)[0]}
    tc, nc = cases(torch), cases(ndgrad)
    for key in tc:
        tfn, nfn = tc[key].grad_fn, nc[key].grad_fn
        assert nfn.name() == tfn.name(), key
        names = _saved_names(nfn)
        assert names and names <= _saved_names(tfn), (key, names, _saved_names(tfn))
        for n in names:
            tv, nv = getattr(tfn, n), getattr(nfn, n)
            if isinstance(tv, torch.Tensor) and isinstance(nv, ndgrad.Tensor):
                assert tuple(nv.shape) == tuple(tv.shape), (key, n)


# ---------------------------------------------------------------- saved scalar arguments
A3 = RNG.standard_normal((2, 3, 4))


def _scalar_cases(lib):
    """Ops whose nodes expose scalar arguments; dims given non-negative (see docs)."""
    F = torch.nn.functional if lib is torch else ndgrad.nn.functional
    x = lib.tensor(A3, requires_grad=True)
    idx = lib.tensor(np.array([[[0, 1, 2, 0]] * 2] * 2))
    return {
        "sum_dim": x.sum(1, keepdim=True), "sum_dims": x.sum((0, 2)), "mean": x.mean(),
        "mean_dim": x.mean((0, 1)), "pow": x ** 2, "pow_f": x ** 2.5, "mul": x * 2.5,
        "add": x + 2.5, "add_alpha": lib.add(x, x, alpha=2), "sub_alpha": lib.sub(x, x,
                                                                                 alpha=0.5),
        "transpose": x.transpose(0, 1), "view": x.view(2, 12), "expand": x[:, :1].expand(2, 5, 4),
        "squeeze": x[:, :1].squeeze(1), "squeeze_dims": x[:1, :1].squeeze((0, 1)),
        "unsqueeze": x.unsqueeze(1), "select": x.select(1, 2), "index": x[1],
        "slice": x[:, 1:3], "slice_step": x[:, 0:3:2], "narrow": x.narrow(2, 1, 2),
        "cumsum": x.cumsum(1), "cumprod": x.cumprod(2), "softmax": lib.softmax(x, 1),
        "log_softmax": F.log_softmax(x, dim=2), "leaky_relu": F.leaky_relu(x, 0.2),
        "leaky_default": F.leaky_relu(x), "clamp": x.clamp(-0.5, 0.5),
        "clamp_min": x.clamp(min=-1), "permute": x.permute(2, 0, 1), "repeat": x.repeat(2, 1, 3),
        "topk": x.topk(2, 1)[0], "gather": x.gather(1, idx[:, :2]),
        "index_select": x.index_select(1, lib.tensor(np.array([0, 2]))),
        "max_dim": x.max(1)[0], "min_dim": x.min(2, keepdim=True)[0], "norm": x.norm(),
        "norm_p": x.norm(3), "norm_dim": x.norm(2, 1), "norm_15": x.norm(1.5, (0, 2), True),
        "prod_dim": x.prod(1), "logsumexp": x.logsumexp(1), "amax": x.amax((0, 2)),
        "var": x.var(1), "var_corr": x.var(1, correction=0), "std": x.std(2, keepdim=True),
        "sort": x.sort(1)[0], "kthvalue": x.kthvalue(2, 1)[0], "cummax": x.cummax(1)[0],
        "split": x.split(3, 2)[1], "split_sizes": x.split([1, 3], 2)[0], "chunk": x.chunk(2, 2)[0],
        "unbind": x.unbind(1)[0], "cat": lib.cat([x, x], 1), "stack": lib.stack([x, x], 1),
        "diagonal": x.diagonal(1, 1, 2), "tril": x.tril(1), "triu": x.triu(-1),
        "flip": x.flip(0), "roll": x.roll(2, 0), "roll_flat": x.roll(1),
        "elu": F.elu(x, 0.7), "selu": F.selu(x), "celu": F.celu(x, 0.5),
        "hardtanh": F.hardtanh(x, -0.5, 0.5), "softplus": F.softplus(x, 2, 10),
        "gelu": F.gelu(x, approximate="tanh"), "lerp": x.lerp(x * 0, 0.3),
        "addcmul": lib.addcmul(x, x, x), "addcdiv": lib.addcdiv(x, x, x + 5, value=0.5),
        "glu": F.glu(x, 2), "logcumsumexp": x.logcumsumexp(1), "masked_fill":
            x.masked_fill(x > 0, 2.0), "nansum": x.nansum(), "logit": x.sigmoid().logit(),
        "div_trunc": lib.div(x, 2.0, rounding_mode="trunc"),
        "polygamma": lib.polygamma(1, x), "mvlgamma": lib.mvlgamma(x.abs() + 3, 2),
        "mse": F.mse_loss(x, x.detach() * 0.5), "huber": F.huber_loss(x, x.detach() * 0,
                                                                      delta=0.5),
        "smooth_l1": F.smooth_l1_loss(x, x.detach() * 0, beta=0.3, reduction="sum"),
        "bce": F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid(), reduction="none"),
        "bce_logits": F.binary_cross_entropy_with_logits(
            x, x.detach().sigmoid(), pos_weight=x.detach()[0, 0].abs()),
    }


def _scalar_attrs(fn):
    """``{name: (type name, value)}`` of a node's non-tensor ``_saved_*`` attributes."""
    out = {}
    for n in dir(fn):
        if n.startswith("_saved_"):
            v = getattr(fn, n)
            if not isinstance(v, (torch.Tensor, ndgrad.Tensor)) and v is not None:
                out[n] = (type(v).__name__, v)
    return out


# torch saves a tensor here that ndgrad's node does not need (its rule uses other values).
_TORCH_ONLY_TENSORS = {"gather": {"_saved_self"}, "cummax": {"_saved_self"},
                       "div_trunc": {"_saved_self", "_saved_other"}}


def test_saved_scalar_arguments_match_torch_attribute_by_attribute():
    tc, nc = _scalar_cases(torch), _scalar_cases(ndgrad)
    for key in tc:
        tfn, nfn = tc[key].grad_fn, nc[key].grad_fn
        assert nfn.name() == tfn.name(), key
        # every value torch has (names, types and values), and nothing else
        assert _scalar_attrs(nfn) == _scalar_attrs(tfn), key
        tnames = {n for n in dir(tfn) if n.startswith("_saved_")}
        nnames = {n for n in dir(nfn) if n.startswith("_saved_")}
        assert nnames == tnames - _TORCH_ONLY_TENSORS.get(key, set()), key
        for n in nnames:  # None-valued ones too
            assert (getattr(nfn, n) is None) == (getattr(tfn, n) is None), (key, n)


def test_saved_scalar_arguments_examples_and_types():
    for lib in (torch, ndgrad):
        x = lib.tensor(A3, requires_grad=True)
        fn = x.sum(1, keepdim=True).grad_fn
        assert (fn._saved_dim, fn._saved_keepdim) == ((1,), True)
        assert type(fn._saved_dim) is tuple and type(fn._saved_keepdim) is bool
        fn = x[:, 1:3].grad_fn
        assert (fn._saved_dim, fn._saved_start, fn._saved_end, fn._saved_step) == (1, 1, 3, 1)
        assert x.view(6, 4).grad_fn._saved_self_sym_sizes == (2, 3, 4)
        assert x.mean().grad_fn._saved_self_sym_numel == 24
        assert x.triu(-1).grad_fn._saved_diagonal == 2 ** 64 - 1  # torch's int64 wrap
        assert x.clamp(max=0.5).grad_fn._saved_min is None
        assert x.norm().grad_fn._saved_ord == 2 and type(x.norm().grad_fn._saved_ord) is int
        assert x.gather(1, lib.zeros(2, 1, 4, dtype=lib.long)).grad_fn._saved_sparse_grad is False
        with pytest.raises(AttributeError):
            x.sum(1).grad_fn._raw_saved_dim  # numbers have no raw SavedTensor handle
        with pytest.raises(AttributeError):
            x.exp().grad_fn._saved_dim
        # scalars outlive the backward that frees the saved tensors
        y = x.softmax(1)
        y.sum().backward()
        assert y.grad_fn._saved_dim == 1
        with pytest.raises(RuntimeError):
            y.grad_fn._saved_result


def test_saved_scalars_in_dot_pictures():
    x = ndgrad.tensor(A3, requires_grad=True)
    src = ngraph.to_dot(x.sum(1, keepdim=True).transpose(0, 2), show_saved=True)
    assert "dim: (1,)" in src and "keepdim: True" in src and "dim0: 0" in src
    assert ngraph.saved_values(x.gather(1, ndgrad.zeros(2, 1, 4, dtype=ndgrad.long)).grad_fn) \
        .keys() == {"index", "dim", "sparse_grad"}


def test_functional_default_scalars_keep_torchs_types():
    """F.softplus's and F.relu6's default scalars are ints in torch (nn.Softplus's are
    floats): the saved attributes read back with the same types and values."""
    import numpy as np
    import torch

    import ndgrad
    got = {}
    for L in (ndgrad, torch):
        x = L.tensor(np.array([-1.0, 0.5, 7.0], np.float32), requires_grad=True)
        F = L.nn.functional
        a, b, c = F.softplus(x), F.relu6(x), L.nn.Softplus()(x)
        got[L.__name__] = [(repr(n._saved_beta), repr(n._saved_threshold)) for n in
                           (a.grad_fn, c.grad_fn)] + [
            (repr(b.grad_fn._saved_min_val), repr(b.grad_fn._saved_max_val))]
        got[L.__name__ + " values"] = [t.detach().numpy() for t in (a, b, c)]
    assert got["ndgrad"] == got["torch"]
    # float32 log1p(exp(x)): NumPy's SIMD kernels (AVX-512) may round the last bit otherwise
    for mine, theirs in zip(got["ndgrad values"], got["torch values"]):
        np.testing.assert_allclose(mine, theirs, rtol=2.5e-7, atol=0)
