"""Anomaly detection, differential against torch 2.13, plus ndgrad's opt-in extras
(check_inf, record_inplace)."""

import inspect
import warnings

import numpy as np
import pytest
import torch
from _helpers import backward_garbage

import ndgrad
from ndgrad import _state
from ndgrad.autograd import anomaly_mode

ENTRY = ("Anomaly Detection has been enabled. This mode will increase the runtime and should "
         "only be enabled for debugging.")


@pytest.fixture(autouse=True)
def _clean():
    yield
    assert _state.special == 0, "a special mode leaked out of the test"
    assert not anomaly_mode.is_anomaly_enabled()


def _record(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except Exception as e:  # noqa: BLE001 - compared below
            err = e
    return err, [x for x in w if x.category is UserWarning]


def test_entry_warning_and_flags_match_torch():
    for lib in (torch, ndgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly(check_nan=False):
                inside = (lib.is_anomaly_enabled() if lib is torch
                          else anomaly_mode.is_anomaly_enabled(),
                          lib.is_anomaly_check_nan_enabled() if lib is torch
                          else anomaly_mode.is_anomaly_check_nan_enabled())
        assert [str(x.message) for x in w] == [ENTRY]
        assert w[0].category is UserWarning
        assert inside == (True, False)
    assert anomaly_mode.is_anomaly_check_nan_enabled() is torch.is_anomaly_check_nan_enabled()


def test_set_detect_anomaly_call_and_context_no_warning():
    for lib in (torch, ndgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.autograd.set_detect_anomaly(True)
            on = ndgrad.autograd.anomaly_mode.is_anomaly_enabled() if lib is ndgrad else \
                torch.is_anomaly_enabled()
            lib.autograd.set_detect_anomaly(False)
            with lib.autograd.set_detect_anomaly(True):
                pass
        assert on is True
        assert [x for x in w if "Anomaly" in str(x.message)] == []
    assert _state.special == 0


def _nan_backward(lib):
    a = lib.tensor([0.0, 1.0], requires_grad=True)

    def run():
        with lib.autograd.detect_anomaly():
            y = a / a  # FORWARD-LINE
            y.sum().backward()
    return run


def test_nan_check_message_and_forward_traceback_match_torch():
    line = [i for i, s in enumerate(inspect.getsource(_nan_backward).splitlines())
            if "FORWARD-LINE" in s][0] + _nan_backward.__code__.co_firstlineno
    results = {}
    for lib in (torch, ndgrad):
        with np.errstate(all="ignore"):
            err, ws = _record(_nan_backward(lib))
        assert type(err) is RuntimeError
        detected = [str(x.message) for x in ws if "Error detected" in str(x.message)]
        assert len(detected) == 1
        results[lib] = (str(err), detected[0])
        assert f'line {line}, in run\n    y = a / a  # FORWARD-LINE' in detected[0]
    assert results[ndgrad][0] == results[torch][0] == \
        "Function 'DivBackward0' returned nan values in its 1th output."
    head = "Error detected in DivBackward0. Traceback of forward call that caused the error:\n"
    assert results[torch][1].startswith(head) and results[ndgrad][1].startswith(head)


def test_check_nan_false_lets_nan_through_like_torch():
    grads = []
    for lib in (torch, ndgrad):
        a = lib.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"), lib.autograd.detect_anomaly(check_nan=False):
                (a / a).sum().backward()
        grads.append(a.grad.detach().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert np.isnan(grads[1]).any()


def _version_error(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)

    def run():
        with lib.autograd.detect_anomaly():
            b = a.clone()
            c = b.exp()
            d = b * c
            c.mul_(2)
            d.sum().backward()
    return run


def test_error_in_backward_reraised_with_forward_stack_like_torch():
    out = {}
    for lib in (torch, ndgrad):
        err, ws = _record(_version_error(lib))
        assert type(err) is RuntimeError
        detected = [str(x.message) for x in ws if "Error detected" in str(x.message)]
        assert detected[0].startswith("Error detected in MulBackward0. Traceback of forward "
                                      "call that caused the error:\n")
        assert "d = b * c" in detected[0]
        out[lib] = str(err)
    assert out[ndgrad] == out[torch]
    assert "Good luck!" in out[ndgrad]


def test_error_note_attached_to_exception():
    err, _ = _record(_version_error(ndgrad))
    assert any("Traceback of forward call that caused the error" in n
               for n in getattr(err, "__notes__", []))


def test_decorator_form():
    @ndgrad.autograd.set_detect_anomaly(True)
    def inner():
        return anomaly_mode.is_anomaly_enabled()
    # set_detect_anomaly applies at construction, like torch; restore before calling.
    ndgrad.autograd.set_detect_anomaly(False)
    assert inner() is True
    assert anomaly_mode.is_anomaly_enabled() is False

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @ndgrad.autograd.detect_anomaly()
        def inner2():
            return anomaly_mode.is_anomaly_enabled()
    assert inner2() is True
    assert anomaly_mode.is_anomaly_enabled() is False


def test_off_costs_nothing_and_leaves_no_state():
    assert _state.special == 0
    from ndgrad._ops.registry import special_hooks
    from ndgrad.autograd.engine import node_observers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ndgrad.autograd.detect_anomaly(record_inplace=True):
            assert _state.special > 0
            x = ndgrad.ones(2, requires_grad=True) * 2
            assert "stack" in x.grad_fn._extra
    assert _state.special == 0
    assert special_hooks == [] or all(type(h).__module__ != anomaly_mode.__name__
                                      for h in special_hooks)
    assert not any(type(o).__module__ == anomaly_mode.__name__ for o in node_observers)
    y = ndgrad.ones(2, requires_grad=True) * 2
    assert y.grad_fn._extra is None or "stack" not in y.grad_fn._extra


# ------------------------------------------------------------------ ndgrad's extras
def test_check_inf_names_first_forward_op():
    b = ndgrad.tensor([1.0, 2.0])
    z = ndgrad.tensor([1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"), ndgrad.autograd.detect_anomaly(check_inf=True):
            ok = (b * 3).exp()  # finite: no error
            with pytest.raises(RuntimeError, match=r"Function 'aten::div' returned inf values "
                                                   r"in its 0th output in the forward pass"):
                b / z
            # An op whose inputs already hold inf is not the culprit.
            inf = ndgrad.tensor([float("inf")])
            (inf * 2)
    assert ok.shape == (2,)


def test_check_inf_in_backward():
    x = ndgrad.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            with ndgrad.autograd.detect_anomaly(check_inf=False):
                x.sqrt().sum().backward()  # inf gradient, allowed without check_inf
            assert np.isinf(x.grad.numpy()).any()
            x.grad = None
            with ndgrad.autograd.detect_anomaly(check_inf=True):
                y = x.sqrt().sum()  # sqrt(0) = 0 is finite: no forward error
                with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned inf "
                                                       "values in its 0th output."):
                    y.backward()
    assert x.grad is None


def test_record_inplace_names_file_and_line():
    a = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ndgrad.autograd.detect_anomaly(record_inplace=True):
            b = a.clone()
            c = b.exp()
            d = b * c
            here = inspect.currentframe().f_lineno + 1
            c.mul_(2)
            c.add_(1)
            with pytest.raises(RuntimeError) as info:
                d.sum().backward()
    msg = str(info.value)
    assert msg.startswith("one of the variables needed for gradient computation has been "
                          "modified by an inplace operation: [torch.FloatTensor [2]]")
    assert (f"was aten::mul_ at {__file__}:{here} in test_record_inplace_names_file_and_line: "
            "c.mul_(2).") in msg
    assert "version 0 -> 1" in msg
    assert f"Later in-place changes: aten::add_ at {__file__}:{here + 1}" in msg


def test_set_record_inplace_alone_and_off_message_matches_torch():
    def run(lib, record):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        prev = ndgrad.autograd.anomaly_mode.set_record_inplace(True) if record else None
        try:
            b = a.clone()
            c = b.sigmoid()
            c.add_(1)
            try:
                c.sum().backward()
            except RuntimeError as e:
                return str(e)
        finally:
            if record:
                ndgrad.autograd.anomaly_mode.set_record_inplace(prev)
    base = run(torch, False)
    assert run(ndgrad, False) == base
    recorded = run(ndgrad, True)
    assert recorded.startswith(base)
    assert "aten::add_ at " + __file__ in recorded
    assert anomaly_mode._inplace_sites == {}


def test_anomaly_backward_creates_no_garbage_cycles():
    x = ndgrad.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ndgrad.autograd.detect_anomaly(check_inf=True, record_inplace=True):
            garbage = backward_garbage(x)
    assert garbage == 0
