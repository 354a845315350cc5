"""The structure docs/architecture.md promises, kept true by a test.

- Imports point down: no import circle between the package's modules, counting imports inside
  functions too (the graph is read from the source by tools/import_graph.py).
- One home per op: every rule of every declared OpDef (VJP, JVP or its per-input parts, raw
  JVP, batched VJP/JVP, vmap rule) is a function defined in the module that declared the op.
  Rules the registry derives from a declaration (``elementwise=True``, ``def_jvp_parts``,
  ``bilinear_jvp``, ``no_forward_ad``) are made in ``registry.py``; the functions they are made
  of must be the op's own.
"""

import functools
import importlib.util
import os
import types

import ndgrad
from ndgrad._ops import registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = ("vjp", "jvp", "jvp_raw", "batched_vjp", "batched_jvp", "vmap")

# (op name, rule) pairs allowed to live outside their op's module, each with its reason.
# Empty: every rule lives with its op.
ALLOWED_ELSEWHERE = {}


def _import_graph_tool():
    spec = importlib.util.spec_from_file_location(
        "_import_graph_tool", os.path.join(ROOT, "tools", "import_graph.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_import_circle():
    tool = _import_graph_tool()
    graph, _local, _root = tool.import_graph(os.path.join(ROOT, "ndgrad"))
    assert len(graph) > 100  # the whole package was read
    # a circle made by hand is found (the check can fail)
    assert tool.circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert tool.circles(graph) == []


def _rule_functions(fn, seen):
    """The functions a rule is written as: `fn` itself, or for a rule the registry derived
    (a closure made in registry.py) the functions it closes over, recursively."""
    if id(fn) in seen:
        return []
    seen.add(id(fn))
    if isinstance(fn, functools.partial):
        return _rule_functions(fn.func, seen)
    if isinstance(fn, types.MethodType):
        return _rule_functions(fn.__func__, seen)
    if isinstance(fn, types.FunctionType) and fn.__module__ == registry.__name__:
        found = []
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            for v in value if isinstance(value, tuple) else (value,):
                if callable(v) and not isinstance(v, (type, registry.OpDef)):
                    found += _rule_functions(v, seen)
        return found
    return [fn]


def _places(op):
    """``{module where one of the op's rules is defined: [rule kinds]}`` (registry-made
    derivations counted by what they are made of; an op sharing another's rules, such as a
    view's ``*_copy`` twin, counted where that op's rules live)."""
    if op.rules_from is not None:
        src = op.rules_from
        for kind in RULES:
            assert getattr(op, kind) in (None, getattr(src, kind)), (op.name, kind)
        return _places(src)
    places = {}
    for kind in RULES:
        fn = getattr(op, kind)
        if fn is None:
            continue
        for f in _rule_functions(fn, set()):
            mod = getattr(f, "__module__", None)
            if mod != registry.__name__:
                places.setdefault(mod, []).append(kind)
    return places


def _ndgrad_ops():
    """The OpDefs ndgrad declares (a user's or an example's own primitives, declared through the
    same registry by code outside the package, are theirs to place)."""
    return [op for op in registry.declared_ops() if op.module.startswith("ndgrad.")]


def test_every_rule_lives_with_its_op():
    # ops made on first use are checked too: a *_copy twin sharing its view's rules
    ndgrad.transpose_copy(ndgrad.zeros(2, 3), 0, 1)
    # every OpDef declared, including one whose name a later declaration took in all_ops()
    ops = _ndgrad_ops()
    assert len(ops) > 300
    assert all(op.module != registry.__name__ for op in ops)
    misplaced = []
    for op in ops:
        home = (op.rules_from or op).module
        for mod, kinds in _places(op).items():
            for kind in kinds:
                if mod != home and (op.name, kind) not in ALLOWED_ELSEWHERE:
                    misplaced.append(f"{op.name}.{kind} in {mod} (declared in {home})")
    assert misplaced == []


def test_places_an_op_s_rules_live():
    # the figure the architecture issue reports: the most modules holding one op's rules
    assert max(len(_places(op)) for op in _ndgrad_ops()) == 1


def test_rule_check_sees_a_misplaced_rule():
    # An op whose home is this module, with a VJP from another module and a JVP made of parts,
    # one of them from another module: both are reported. (Built without registering it.)
    from ndgrad._ops import pointwise
    op = registry.OpDef("_architecture_probe", lambda x, p: x, "ArchitectureProbeBackward0")
    op.module = __name__
    op.def_vjp(pointwise._conj)
    op.def_jvp_parts(lambda ctx, t: t, pointwise._conj)
    assert _places(op) == {"ndgrad._ops.pointwise": ["vjp", "jvp"], __name__: ["jvp"]}
    op.def_vjp(lambda ctx, g: (g,))
    op.def_jvp(lambda ctx, t: t)
    assert _places(op) == {__name__: ["vjp", "jvp"]}


def test_primitives_reached_by_name_are_the_family_ops():
    # broadcast.sum_to, below the families, calls these through registry.PRIMITIVES: each name
    # must be declared once (a second declaration would silently take the name over)
    from ndgrad._ops import reduction, shape
    declared = [op.name for op in _ndgrad_ops()]
    for name, op in (("sum", reduction.SUM_ALL), ("sum_dim", reduction.SUM_DIM),
                     ("view", shape.VIEW)):
        assert declared.count(name) == 1 and registry.PRIMITIVES[name] is op


def test_no_op_name_is_declared_twice():
    # all_ops() keeps the last declaration of a name, so a second one hides the first from the
    # op database, the docs and registry.PRIMITIVES: one name, one op, one home. Twins made on
    # first use count too: every *_copy function torch has is called once
    x = ndgrad.arange(6.0)
    ndgrad.narrow_copy(x, 0, 1, 3), ndgrad.slice_copy(x, 0, 1, 3)
    ndgrad.split_copy(x, 2), ndgrad.split_with_sizes_copy(x, [2, 4])
    ndgrad.unbind_copy(x.view(2, 3)), ndgrad.select_copy(x, 0, 1)
    ndgrad.diagonal_copy(x.view(2, 3)), ndgrad.diag(x.view(2, 3))
    seen, twice = {}, []
    for op in _ndgrad_ops():
        if op.name in seen:
            twice.append(f"{op.name}: {seen[op.name]} and {op.module}")
        seen.setdefault(op.name, op.module)
    assert twice == []
    assert len(seen) == sum(op.module.startswith("ndgrad.") for op in registry.all_ops().values())
    # the check sees a duplicate (made without registering it)
    probe = registry.OpDef("unfold", lambda x, p: x, "UnfoldBackward0")
    probe.module = __name__
    names = [op.name for op in _ndgrad_ops() + [probe]]
    assert len(set(names)) == len(names) - 1


def test_hot_classes_keep_cpython_s_attribute_slots():
    # CPython shares one type slot between __setattr__ and __delattr__: defining either in
    # Python on Tensor or Node sends every attribute assignment of every op through Python
    # (a Tensor.__delattr__ once cost a third of the per-op time). Refusals of deletion are
    # property deleters instead.
    from ndgrad._graph_core import Node, SavedTensor
    for cls in (ndgrad.Tensor, Node, SavedTensor):
        for klass in cls.__mro__[:-1]:
            assert "__setattr__" not in vars(klass), klass
            assert "__delattr__" not in vars(klass), klass
