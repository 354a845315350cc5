"""Generate docs/coverage.md: every public name of torch 2.13's main namespaces that ndgrad
lacks, grouped by the reason it is missing.

A namespace's public names are its ``__all__`` (or, without one, the names of ``dir()`` not
starting with ``_``), leaving out the standard-library modules torch happens to import. A name
is present when ndgrad's namespace of the same path has it. Reasons are assigned by the rules
in ``reason()`` (first match wins); "not implemented yet" is the honest default.

Usage::

    python tools/coverage.py            # writes docs/coverage.md
    python tools/coverage.py --check    # exit 1 if docs/coverage.md is out of date
"""

import argparse
import importlib
import inspect
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

OUT = os.path.join(ROOT, "docs", "coverage.md")

NAMESPACES = [
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.utils", "torch.linalg", "torch.special", "torch.fft", "torch.autograd",
    "torch.autograd.functional", "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data",
    "torch.utils.checkpoint", "torch.distributions", "torch.func", "torch.cuda", "torch.amp",
    "torch.backends", "torch.serialization", "torch.testing", "torch.random", "torch.onnx",
]

NOT_YET = "not implemented yet"
REASONS = [
    ("dtype", ("a dtype NumPy has no type for (see decisions.md: no bfloat16, complex32, "
               "float8, sub-byte or unsigned >8-bit integers)")),
    ("dtype_result", "its result has a dtype ndgrad lacks (hash_tensor returns torch.uint64)"),
    ("quant", "quantization: out of scope (ndgrad computes in floating point on NumPy)"),
    ("sparse", "sparse layouts: out of scope (ndgrad tensors are dense NumPy arrays)"),
    ("backend", "a backend- or accelerator-specific kernel, device or flag (CPU only)"),
    ("compiler", ("TorchScript / torch.compile / dispatcher internals: ndgrad has no graph "
                  "compiler or C++ dispatcher")),
    ("storage", ("typed storages and legacy tensor-type classes: ndgrad tensors own NumPy "
                 "arrays")),
    ("distributed", "distributed training: ndgrad.distributed is another issue (18)"),
    ("named", "named tensors (a torch prototype): not provided"),
    ("nested", "nested (jagged) tensors: not provided (is_nested is always False)"),
    ("fcdim", "first-class dimensions (Tensor.index binds functorch.dim's Dim objects, a "
              "prototype): not provided"),
    ("c_binding", ("a torch._C binding of C++ internals (the zip reader/writer behind "
                   "torch.save; ndgrad's save/load write the same format in Python)")),
    ("broken", "unusable in torch 2.13 itself (it fails when called): not reproduced"),
    ("copy", "a *_copy op (the non-aliasing twin of a view, for compilers): use the view"),
    ("inplace_fn", "in-place function form; the Tensor method of the same name exists"),
    ("config", "a build/runtime configuration switch or constant with no NumPy counterpart"),
    ("lowprec", ("a low-precision (float8 / MX-scaled) GPU matmul kernel or its enums: no NumPy "
                 "counterpart")),
    ("module", "a namespace ndgrad does not provide"),
    ("not_yet", NOT_YET),
]
_TEXT = dict(REASONS)

_QUANT = ("quant", "qint", "quint", "qscheme", "per_channel", "per_tensor", "int_repr",
          "fbgemm", "qparams", "q_scale", "q_zero_point", "q_per_channel")
_SPARSE = ("sparse", "_coo", "csr", "csc", "bsr", "bsc", "spmm", "smm", "sspaddmm", "saddmm",
           "to_dense", "coalesce", "crow_indices", "ccol_indices", "col_indices", "row_indices",
           "_nnz", "dense_dim", "sparse_dim", "jagged")
_BACKEND = ("cudnn", "miopen", "mkldnn", "nnpack", "xnnpack", "vulkan", "mps", "xpu", "ipu",
            "xla", "hpu", "mtia", "cuda", "gpu", "accelerator", "pin_memory", "is_pinned",
            "share_memory", "is_shared", "record_stream", "nvtx", "jiterator", "cudart",
            "tunable", "graphs", "streams", "Stream", "Event", "OutOfMemoryError",
            "AcceleratorError", "comm", "sparse_sdp", "cufft", "cublas", "cusparse", "rocm",
            "opt_einsum", "get_device_module", "device_module")
_COMPILER = ("script", "jit", "trace", "graph", "Graph", "schema", "_ir", "ir_", "compile",
             "export", "fx", "dynamo", "sym_", "Sym", "Future", "future", "fork", "wait",
             "library", "ops", "classes", "DispatchKey", "FileCheck", "Capsule", "AliasDb",
             "CompilationUnit", "ConcreteModuleType", "Tag", "PRIVATE_OPS", "cpp", "vmap",
             "functionalize", "ExecutionPlan", "StaticModule", "ThroughputBenchmark",
             "Benchmark", "LiteScriptModule", "overrides", "TorchFunction", "decomp",
             "return_types", "package", "monitor", "merge_type_from_type_comment",
             "parse_type_comment", "DeserializationStorageContext", "DeepCopyMemoTable",
             "LoggerBase", "NoopLogger", "LockingLogger", "AggregationType", "ErrorReport",
             "CallStack", "IODescriptor", "InferredType", "OperatorInfo", "TracingState",
             "GraphExecutorState", "Gradient", "ArgumentSpec", "CompleteArgumentSpec",
             "import_ir_module", "hash_tensor", "guard", "_refs", "meta", "fake",
             "functional_call", "classproperty", "checkpoint_sequential_fn", "Script",
             "unify_type_list", "slice_inverse",
             # selective activation checkpointing: its policies are keyed on ATen overloads
             "selective_checkpoint", "SAC_")
# torch's top-level ParameterDict / ModuleDict are TorchScript's C++ containers (torch._C), not
# nn's classes (ndgrad.nn has those); torch.cond is a higher-order control-flow op for
# torch.compile / export.
_COMPILER_TOP = ("ParameterDict", "ModuleDict", "cond")
_JIT_TYPES = ("AnyType", "AwaitType", "BoolType", "ClassType", "ComplexType", "DeviceObjType",
              "DictType", "EnumType", "FloatType", "FutureType", "IntType", "InterfaceType",
              "ListType", "NoneType", "NumberType", "OptionalType", "PyObjectType", "RRefType",
              "StreamObjType", "StringType", "TensorType", "TupleType", "UnionType", "Block",
              "Code", "Node", "Value", "Use", "Argument", "FunctionSchema", "ScriptClass",
              "ScriptObject", "ScriptMethod", "ScriptFunction", "ScriptModule", "ScriptList",
              "ScriptDict", "JITException", "SUM", "AVG", "BufferDict")
# Tensor conversions to dtypes NumPy lacks (Tensor.bfloat16(), Tensor.chalf()).
_DTYPE_METHODS = ("bfloat16", "chalf")
_NESTED = ("to_padded_tensor", "nested_to_padded_tensor")
# Names whose only torch 2.13 CPU kernel is a sparse one (dense input raises there).
_SPARSE_ONLY = ("native_norm",)
# NestedIOFunction subclasses fail in torch 2.13 ('super' object has no attribute '_do_forward').
_BROKEN = ("NestedIOFunction",)
_LOWPREC = ("grouped_mm", "scaled_mm", "scaled_grouped_mm", "ScalingType", "SwizzleType")
_NAMED = ("names", "refine_names", "rename", "rename_", "align_to", "align_as",
          "has_names")
_CONFIG = ("interop_threads", "flush_denormal", "float32_matmul_precision",
           "deterministic_debug_mode", "warn_always", "cxx11", "has_lapack", "has_mkl",
           "has_openmp", "has_spectral", "USE_", "TYPE_CHECKING", "init_num_threads",
           "get_file_path", "prepare_multiprocessing_environment", "warn_only_enabled",
           "profiler_allow", "compiled_with", "version",
           "legacy_contiguous_format", "channels_last_3d", "memory_format", "layout",
           "autocast_cpu", "autocast_gpu", "autocast_ipu", "autocast_xla", "autocast_nesting",
           "autocast_increment", "autocast_decrement", "clear_autocast_cache",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_cpu",
           "set_autocast_gpu", "is_autocast_cpu_enabled")


def _has(haystack, needles):
    return any(n in haystack for n in needles)


def reason(path, name, obj, ndgrad_ns):
    """Why `path`.`name` (torch's `obj`) is missing from ndgrad (a key of REASONS)."""
    import torch
    if inspect.ismodule(obj):
        return "quant" if name in ("intrinsic", "qat", "quantizable", "quantized") else "module"
    if isinstance(obj, torch.dtype) or (path == "torch.Tensor" and name in _DTYPE_METHODS):
        return "dtype"
    if name == "hash_tensor":
        return "dtype_result"
    if name in _NESTED:
        return "nested"
    if path == "torch.Tensor" and name == "index":
        return "fcdim"
    if name in ("PyTorchFileReader", "PyTorchFileWriter"):
        return "c_binding"
    if name in _BROKEN:
        return "broken"
    if name in _SPARSE_ONLY:
        return "sparse"
    if name in _JIT_TYPES:
        return "compiler"
    if _has(name, _QUANT) or name in ("dequantize", "quantization", "ao", "q_per_channel_axis"):
        return "quant"
    if _has(name, _SPARSE) or name in ("is_coalesced", "indices", "values", "sparse_mask",
                                       "sparse_resize_", "sparse_resize_and_clear_",
                                       "resize_as_sparse_", "hspmm", "dsmm", "hsmm",
                                       "sparse_bsc", "smm", "nested", "masked"):
        return "sparse"
    if _has(name, _BACKEND) or _has(path, ("cuda", "backends")):
        return "backend"
    if "Storage" in name or name in ("storage", "untyped_storage", "is_storage",
                                     "storage_type", "from_file", "set_", "frombuffer") or \
            (name.endswith("Tensor") and inspect.isclass(obj) and name != "Tensor"):
        return "storage"
    if "distributed" in name or "rpc" in name or name in ("DistributedDataParallel",
                                                          "is_distributed"):
        return "distributed"
    if name in _NAMED:
        return "named"
    if name in _LOWPREC:
        return "lowprec"
    if name.endswith("_copy") and name != "index_copy":
        return "copy"
    if name.endswith("_") and not name.endswith("__") and path == "torch" and \
            hasattr(ndgrad_ns.Tensor, name):
        return "inplace_fn"
    if name in _JIT_TYPES or _has(name, _COMPILER) or (path == "torch" and name in _COMPILER_TOP):
        return "compiler"
    if _has(name, _CONFIG) or name in ("e", "pi", "inf", "nan", "newaxis"):
        return "config"
    return "not_yet"


def _public(obj, prefix):
    names = getattr(obj, "__all__", None)
    if names is None or inspect.isclass(obj):
        names = [n for n in dir(obj) if not n.startswith("_")]
    out, seen = [], set()
    for n in sorted(set(names)):
        try:
            value = getattr(obj, n)
        except Exception:  # noqa: BLE001  (a lazy attribute failing to import is not public)
            continue
        if inspect.ismodule(value):
            if not value.__name__.startswith(prefix + "."):
                continue                              # os, math, typing, torch, ... imported
        elif not str(getattr(value, "__module__", None) or "torch").startswith("torch"):
            continue                                  # typing.Optional, collections, ...
        if n not in seen:
            seen.add(n)
            out.append((n, value))
    return out


def _resolve(root, path):
    parts = path.split(".")
    obj = importlib.import_module(root)
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join([root] + parts[1:i + 1]))
            except ImportError:
                return None
    return obj


def compute():
    """{namespace: (n_public, {reason: [names]}, ndgrad_has_namespace)}."""
    import ndgrad
    table = {}
    for path in NAMESPACES:
        theirs = _resolve("torch", path)
        ours = _resolve("ndgrad", path)
        names = _public(theirs, path)
        groups = {}
        for name, value in names:
            if ours is not None and hasattr(ours, name):
                continue
            key = "module" if ours is None else reason(path, name, value, ndgrad)
            groups.setdefault(key, []).append(name)
        table[path] = (len(names), groups, ours is not None)
    return table


def render(table):
    lines = [
        "# What ndgrad lacks of torch 2.13's public API",
        "",
        ("Generated by `python tools/coverage.py` (checked by `tests/test_coverage_doc.py`): "
         "for each namespace, the public names of torch 2.13 that ndgrad does not have, grouped "
         "by reason. Regenerate after adding names."),
        "",
        "| namespace | torch names | ndgrad lacks |",
        "|---|---:|---:|",
    ]
    for path, (total, groups, _) in table.items():
        missing = sum(len(v) for v in groups.values())
        lines.append(f"| `{path}` | {total} | {missing} |")
    for path, (total, groups, present) in table.items():
        if not groups:
            continue
        lines += ["", f"## `{path}`", ""]
        if not present:
            lines.append(f"ndgrad has no `{path.replace('torch', 'ndgrad', 1)}` namespace "
                         f"({total} names).")
            lines.append("")
        for key, _text in REASONS:
            names = groups.get(key)
            if names:
                lines.append(f"- **{_TEXT[key]}** ({len(names)}): "
                             + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render(compute())
    if args.check:
        with open(OUT) as fh:
            if fh.read() != text:
                print("docs/coverage.md is out of date: run python tools/coverage.py")
                return 1
        return 0
    with open(OUT, "w") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
