"""Bad inputs torch refuses: the exception class (and its searchable message) is torch's, and
nothing is changed by the failed call. Differential against torch 2.13 (issue 23's probes)."""

import pytest
import torch

import ndgrad

LIBS = (torch, ndgrad)


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the class is compared across libraries)
        return type(e)
    return None


@pytest.mark.parametrize("call", [
    lambda L, x: x.reshape(2.0, 3),
    lambda L, x: x.reshape((2.5, 3)),
    lambda L, x: x.reshape(2, 3.0),
    lambda L, x: x.view((2.0, 3)),
])
def test_a_float_size_is_a_type_error(call):
    for L in LIBS:
        x = L.arange(6.0)
        with pytest.raises(TypeError):
            call(L, x)
        assert x.shape == (6,) and x._version == 0
    assert ndgrad.arange(6.0).reshape(2, 3).shape == (2, 3)


@pytest.mark.parametrize("conv", [float, int])
def test_python_number_of_a_complex_tensor(conv):
    for L in LIBS:
        with pytest.raises(RuntimeError, match="cannot be converted to type"):
            conv(L.tensor(1 + 2j))
    # a zero imaginary part converts, as torch's does
    for v in (1 + 0j, 2.5 + 0j, -3 + 0j):
        assert conv(ndgrad.tensor(v)) == conv(torch.tensor(v))


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "floor_", "ceil_", "trunc_"])
def test_rounding_of_complex_is_not_implemented(name):
    for L in LIBS:
        z = L.tensor([1.5 + 2j, -0.5j])
        with pytest.raises(NotImplementedError, match="is not supported for complex inputs"):
            getattr(z, name)()
        assert z.tolist() == [1.5 + 2j, -0.5j] and z._version == 0
    x = [1.5, -0.5, 2.0]
    assert getattr(ndgrad.tensor(x), name)().tolist() == getattr(torch.tensor(x), name)().tolist()


def test_save_onto_a_directory_is_refused(tmp_path):
    for L in LIBS:
        with pytest.raises(RuntimeError, match="Is a directory"):
            L.save({"a": L.ones(2)}, tmp_path)
        assert list(tmp_path.iterdir()) == []
    ndgrad.save({"a": ndgrad.ones(2)}, tmp_path / "ok.pt")
    assert torch.load(tmp_path / "ok.pt")["a"].tolist() == [1.0, 1.0]


def test_multinomial_out_dtype_refused_and_out_written_as_torch():
    # op_db's error input passes an uninitialised float `out=`: the refusal must not depend on
    # the probabilities' contents, and nothing is drawn before it
    import torch
    results = []
    for lib in (ndgrad, torch):
        lib.manual_seed(0)
        probs = lib.ones(2, 3)
        with pytest.raises(RuntimeError, match="multinomial expects Long tensor out, got: Float"):
            lib.multinomial(probs, 2, out=lib.empty(2, 3))
        out = lib.empty(0, dtype=lib.int64)
        got = lib.multinomial(probs, 2, out=out)
        same = lib.empty(2, 2, dtype=lib.int64)
        lib.manual_seed(1)
        lib.multinomial(probs, 2, out=same)
        results.append((got is out, out.tolist(), out._version, same.tolist(), same._version))
    assert results[0] == results[1]
