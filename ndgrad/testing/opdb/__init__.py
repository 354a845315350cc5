"""The op database: one ``OpInfo`` entry per public op, driving the generic test suites.

Like PyTorch's OpInfo (``torch/testing/_internal/opinfo/core.py``), an entry says how to call
an op, which sample inputs exercise it, what it supports and where it must be tolerated or
skipped. ``tests/test_opdb.py`` runs every entry through the same suites: forward against
torch 2.13 (values, dtype, shape, grad_fn name) and against a NumPy reference, gradcheck and
gradgradcheck in float64, forward mode (when ``ndgrad.autograd.forward_ad`` provides it),
"forward and backward do not mutate their inputs", "gradients keep the input dtype", and
"a mode declared unsupported raises a clear error". ``tools/gen_ops_table.py`` renders the
coverage table in ``docs/ops.md`` from the same entries.

Adding entries (one file per op family, owned by the family's developer)
-----------------------------------------------------------------------
Create ``ndgrad/testing/opdb/<family>.py``; this package imports every module in it on first
use, so nothing else has to be edited. In the file, build entries and pass them to
``register``::

    import numpy as np
    import ndgrad
    from ndgrad.testing.opdb import OpInfo, SampleInput, Skip, register, FLOATING, make_arg

    def _sample_sum(op, dtype, requires_grad):
        make = make_arg(dtype, requires_grad)          # make(shape, **make_tensor kwargs)
        yield SampleInput(make((2, 3)))
        yield SampleInput(make((2, 3)), args=(1,), kwargs={"keepdim": True}, name="dim1")
        yield SampleInput(make(()), name="0-d")
        yield SampleInput(make((3, 4), noncontiguous=True), args=(-1,), name="neg-dim")

    register(
        OpInfo("sum", sample_inputs=_sample_sum, ref=np.sum, family="reduction",
               method="sum", skips=(Skip("gradgrad", "why it cannot work"),)),
        OpInfo("linalg.inv", sample_inputs=..., family="linalg", dtypes=FLOATING + COMPLEX,
               supports_complex_autograd=True, grad_atol=1e-6),
    )

Entry fields (all keyword except ``name``; see ``OpInfo`` for defaults):

- ``name``: the public dotted name under ``ndgrad`` ("exp", "linalg.inv", "nn.functional.relu").
  ``op`` (the ndgrad callable) and ``torch_op`` (the oracle) default to the same name resolved
  in ``ndgrad`` and ``torch``; give them for methods-only ops or when the call differs
  (``op=lambda x, y: x.addcmul(y, y)``). ``variant_test_name`` distinguishes two entries with the
  same name (for example ``div`` with ``rounding_mode``).
- ``sample_inputs(op, dtype, requires_grad)``: yields ``SampleInput(input, args=(), kwargs={},
  name="")``. ``input`` is an ndgrad Tensor or a list/tuple of them (``cat``); args and kwargs
  may contain tensors, numbers, dims, dtypes. Keep samples FEW AND SMALL (the whole database
  runs in about a minute): cover 0-d, empty, broadcasting, a non-contiguous view, keyword
  variants and negative dims once each, inputs in the op's safe domain, kinks nudged away.
  Every tensor that should be differentiated must have ``requires_grad=requires_grad``.
- ``dtypes``: ndgrad dtypes the forward suite runs (default float32 and float64). Gradient
  suites use float64 (complex128 for complex-only ops and for complex-autograd checks).
  Samples are drawn from a seed fixed per (entry, dtype), so every run sees the same values.
  Finite differences go through ``ndgrad.autograd.gradcheck``/``gradgradcheck`` and skip
  samples whose outputs are not finite (those are still compared with torch's gradients).
- ``ref``: optional NumPy reference ``ref(*arrays_and_args, **kwargs)`` on the sample converted
  to NumPy arrays (Python numbers stay numbers); compared in float64.
- Flags: ``supports_autograd`` (backward), ``supports_gradgrad`` (double backward),
  ``supports_forward_ad``, ``supports_fwgrad_bwgrad`` (forward-over-backward),
  ``supports_complex_autograd``, ``check_grad_fn`` (compare ``grad_fn`` class names with torch).
  A False flag is a claim the suites test: the mode must raise a RuntimeError, not return wrong
  numbers. For ops torch itself cannot differentiate (argmax, eq), set ``supports_autograd=False``
  and ``differentiable=False``: the suite then checks that outputs do not require grad.
- Tolerances: ``atol``/``rtol`` (forward, None = assert_close defaults of the dtype),
  ``grad_atol``/``grad_rtol``/``grad_eps`` (finite differences in float64).
- ``output_process_fn_grad(out)``: picks the differentiable part of the output (max with dim
  returns values and indices: ``lambda out: out[0]``).
- ``skips``: ``Skip(test, reason, dtypes=None)`` with ``test`` one of SUITES; a documented gap,
  listed in docs/ops.md. Use sparingly: a skip hides nothing only if the reason is true.
- ``aliases``: other public names of the same op ("arctan2" for "atan2"); the suite checks each
  resolves in ndgrad (and torch) and gives the same values.
- ``method`` / ``inplace``: Tensor method names ("exp", "exp_"); the forward suite calls them
  too and compares them with the function.
- ``family``: the section of the coverage table.
- ``error_inputs(op)``: yields SampleInputs that torch rejects (bad dtype, shape, argument);
  the "errors" suite checks ndgrad raises the same exception type with the same message.
"""

import importlib
import pkgutil
import zlib
from ... import _creation, _dtype, _random
from .._comparison import make_tensor

__all__ = [
    "ALL_TYPES",
    "COMPLEX",
    "FLOATING",
    "FLOATING_HALF",
    "INTEGRAL",
    "SUITES",
    "OpInfo",
    "SampleInput",
    "Skip",
    "get",
    "import_errors",
    "load",
    "make_arg",
    "op_db",
    "register",
]

# Names of the generic suites, as used by Skip and the coverage table.
SUITES = ("forward", "ref", "method", "grad", "gradgrad", "forward_ad", "fwgrad_bwgrad",
          "no_mutation", "grad_dtype", "unsupported", "complex_grad", "alias", "errors")


def _dt(*names):
    return tuple(getattr(_dtype, n) for n in names)


FLOATING = _dt("float32", "float64")
FLOATING_HALF = _dt("float16", "float32", "float64")
COMPLEX = _dt("complex64", "complex128")
INTEGRAL = _dt("uint8", "int8", "int16", "int32", "int64")
ALL_TYPES = FLOATING + INTEGRAL + _dt("bool")


class SampleInput:
    """One way to call an op: ``op(input, *args, **kwargs)``."""

    __slots__ = ("args", "input", "kwargs", "name", "output_process_fn_grad")

    def __init__(self, input, args=(), kwargs=None, name="", output_process_fn_grad=None):
        self.input = input
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.name = name
        self.output_process_fn_grad = output_process_fn_grad

    def all_args(self):
        return (self.input,) + self.args

    def __repr__(self):
        def short(v):
            if hasattr(v, "_data"):
                d = v._data
                return f"T{list(d.shape)}:{d.dtype}{'(rg)' if v.requires_grad else ''}"
            if isinstance(v, (list, tuple)):
                inner = ", ".join(short(x) for x in v)
                return f"[{inner}]" if isinstance(v, list) else f"({inner})"
            return repr(v)
        kw = ", ".join(f"{k}={short(v)}" for k, v in self.kwargs.items())
        parts = [short(self.input)] + [short(a) for a in self.args] + ([kw] if kw else [])
        return f"SampleInput({self.name!r}: {', '.join(parts)})"


class Skip:
    """A documented gap: suite `test` is not run for this entry (or only for `dtypes`)."""

    __slots__ = ("dtypes", "reason", "test")

    def __init__(self, test, reason, dtypes=None):
        if test not in SUITES:
            raise ValueError(f"Skip: unknown suite {test!r}; expected one of {SUITES}")
        if not reason:
            raise ValueError("Skip needs a reason")
        self.test = test
        self.reason = reason
        self.dtypes = None if dtypes is None else tuple(dtypes)

    def applies(self, test, dtype=None):
        return self.test == test and (self.dtypes is None or dtype is None or
                                      dtype in self.dtypes)


def _resolve(root, dotted):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


class OpInfo:
    """One op's database entry (see the module docstring for every field)."""

    def __init__(self, name, *, op=None, torch_op=None, sample_inputs=None, ref=None,
                 dtypes=FLOATING, supports_autograd=True, supports_gradgrad=None,
                 supports_forward_ad=True, supports_fwgrad_bwgrad=None,
                 supports_complex_autograd=False, differentiable=True, check_grad_fn=True,
                 atol=None, rtol=None, grad_atol=1e-5, grad_rtol=1e-3, grad_eps=1e-6,
                 output_process_fn_grad=None, skips=(), aliases=(), method=None, inplace=None,
                 family="misc", variant_test_name="", notes="", error_inputs=None):
        if sample_inputs is None:
            raise ValueError(f"OpInfo {name!r}: sample_inputs is required")
        self.name = name
        self._op = op
        self._torch_op = torch_op
        self.sample_inputs_func = sample_inputs
        self.ref = ref
        self.dtypes = tuple(dtypes)
        self.supports_autograd = supports_autograd and differentiable
        self.supports_gradgrad = (self.supports_autograd if supports_gradgrad is None
                                  else supports_gradgrad and self.supports_autograd)
        self.supports_forward_ad = supports_forward_ad and differentiable
        self.supports_fwgrad_bwgrad = (self.supports_forward_ad and self.supports_gradgrad
                                       if supports_fwgrad_bwgrad is None
                                       else supports_fwgrad_bwgrad)
        self.supports_complex_autograd = supports_complex_autograd
        self.differentiable = differentiable
        self.check_grad_fn = check_grad_fn
        self.atol = atol
        self.rtol = rtol
        self.grad_atol = grad_atol
        self.grad_rtol = grad_rtol
        self.grad_eps = grad_eps
        self.output_process_fn_grad = output_process_fn_grad
        self.skips = tuple(skips)
        self.aliases = tuple(aliases)
        self.method = method
        self.inplace = inplace
        self.family = family
        self.variant_test_name = variant_test_name
        self.notes = notes
        self.error_inputs_func = error_inputs

    @property
    def full_name(self):
        return self.name + ("." + self.variant_test_name if self.variant_test_name else "")

    @property
    def op(self):
        if self._op is None:
            import ndgrad  # the op by its public name: the root package sits above testing
            self._op = _resolve(ndgrad, self.name)
        return self._op

    @property
    def torch_op(self):
        if self._torch_op is None:
            import torch  # the test oracle, imported only when a test asks for it
            self._torch_op = _resolve(torch, self.name)
        return self._torch_op

    def __call__(self, *args, **kwargs):
        return self.op(*args, **kwargs)

    def sample_inputs(self, dtype, requires_grad=False):
        """The samples for `dtype`, drawn from a seed fixed per (entry, dtype) so every run
        and every suite sees the same values (the global generator is restored after)."""
        state = _creation.get_rng_state()
        _random.manual_seed(zlib.crc32(f"{self.full_name}/{dtype}".encode()))
        try:
            return list(self.sample_inputs_func(self, dtype, requires_grad))
        finally:
            _creation.set_rng_state(state)

    def error_inputs(self):
        """Samples torch rejects; ndgrad must raise the same exception type and message."""
        if self.error_inputs_func is None:
            return []
        return list(self.error_inputs_func(self))

    def skip_reason(self, test, dtype=None):
        """The documented reason suite `test` does not run here, or None."""
        for s in self.skips:
            if s.applies(test, dtype):
                return s.reason
        return None

    def __repr__(self):
        return f"OpInfo({self.full_name!r}, family={self.family!r})"


def make_arg(dtype, requires_grad=False, **defaults):
    """``make(shape, **kw)`` building tensors of `dtype` via ``ndgrad.testing.make_tensor``.

    Only floating/complex tensors get ``requires_grad``.
    """

    def make(shape, **kw):
        opts = dict(defaults)
        opts.update(kw)
        rg = opts.pop("requires_grad", requires_grad)
        rg = rg and (dtype.is_floating_point or dtype.is_complex)
        return make_tensor(shape, dtype=dtype, requires_grad=rg, **opts)
    return make


# --------------------------------------------------------------------------- registry
op_db = []
_by_name = {}
import_errors = {}
_loaded = False


def register(*infos):
    """Add entries to the database (names + variant must be unique)."""
    for info in infos:
        if not isinstance(info, OpInfo):
            raise TypeError(f"register expects OpInfo entries, got {type(info).__name__}")
        key = info.full_name
        if key in _by_name:
            raise ValueError(f"op database: duplicate entry {key!r}")
        _by_name[key] = info
        op_db.append(info)
    return infos


def get(full_name):
    load()
    return _by_name[full_name]


def load():
    """Import every family module of this package once; failures go to ``import_errors``
    (so one broken family file does not hide the others' entries; a test asserts it is empty).
    """
    global _loaded
    if _loaded:
        return op_db
    _loaded = True
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if mod.startswith("_"):
            continue
        try:
            importlib.import_module(f"{__name__}.{mod}")
        except Exception as exc:  # noqa: BLE001 - reported by tests/test_opdb.py
            import_errors[mod] = f"{type(exc).__name__}: {exc}"
    return op_db

