"""``install_as_torch()``: the name ``torch`` bound to ndgrad for the whole process.

After the call every ``import torch`` and ``import torch.X.Y`` (the user's and every library's)
gives ndgrad's module object for ``ndgrad.X.Y``: the very same object, so ``torch.nn is
ndgrad.nn`` and a class reached through either name is one class. Two parts make that so:

- the ndgrad modules already imported are entered in ``sys.modules`` under their torch names at
  once. Python's import statement binds a freshly loaded submodule as an attribute of its parent;
  a name that is already in ``sys.modules`` is not loaded again, so a parent attribute that is a
  function of the same name (``autograd.gradcheck``, ``nn.utils.weight_norm``) stays the function;
- a meta-path finder, first on ``sys.meta_path``, answers the torch names not yet imported by
  importing the ndgrad module and handing that object back (its loader creates nothing and runs
  nothing), then enters every ndgrad module that import brought in under its torch name too.

Invariants: a torch name never maps to anything but the ndgrad module of the same dotted tail;
the call is idempotent; it refuses (RuntimeError, nothing changed) when real torch, or any
``torch.*`` module that is not ndgrad's, is already imported, since two libraries would then hold
different ``torch`` objects. ``uninstall`` exists for tests: it removes the finder and the torch
names it entered.
"""

import importlib
import importlib.abc
import importlib.util
import sys

_TORCH = "torch"
_NDGRAD = __name__.rpartition(".")[0]  # "ndgrad"


def _torch_name(ndgrad_name):
    return _TORCH + ndgrad_name[len(_NDGRAD):]


def _ndgrad_name(torch_name):
    return _NDGRAD + torch_name[len(_TORCH):]


def _is_torch_name(name):
    return name == _TORCH or name.startswith(_TORCH + ".")


def _mirror_imported():
    """Enter every imported ndgrad module under its torch name (never replacing an entry)."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == _NDGRAD or name.startswith(_NDGRAD + ".")):
            continue
        sys.modules.setdefault(_torch_name(name), module)


class _ExistingModuleLoader(importlib.abc.Loader):
    """Hands back a module that is already loaded; runs nothing."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class TorchToNdgradFinder(importlib.abc.MetaPathFinder):
    """Resolves ``torch`` and ``torch.X.Y`` to ``ndgrad`` and ``ndgrad.X.Y``."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_torch_name(fullname):
            return None
        try:
            module = importlib.import_module(_ndgrad_name(fullname))
        except ModuleNotFoundError as e:
            if e.name is not None and e.name.startswith(_NDGRAD):
                # torch's name for a module ndgrad does not have: the error names torch's module
                raise ModuleNotFoundError(
                    f"No module named '{fullname}' (ndgrad, bound to the name torch by "
                    f"install_as_torch, has no module '{_ndgrad_name(fullname)}')",
                    name=fullname) from None
            raise
        _mirror_imported()
        spec = importlib.util.spec_from_loader(fullname, _ExistingModuleLoader(module),
                                               is_package=hasattr(module, "__path__"))
        return spec


def _foreign_torch_modules():
    ndgrad_objects = {id(m) for n, m in sys.modules.items()
                      if m is not None and (n == _NDGRAD or n.startswith(_NDGRAD + "."))}
    return sorted(n for n, m in sys.modules.items()
                  if _is_torch_name(n) and m is not None and id(m) not in ndgrad_objects)


def _installed_finder():
    return next((f for f in sys.meta_path if isinstance(f, TorchToNdgradFinder)), None)


def install_as_torch():
    """Make ``import torch`` (and every ``import torch.X.Y``) in this process give ndgrad.

    For notebooks and test suites; ``python -m ndgrad.run`` calls it before running a script.
    Returns the ndgrad package. Raises RuntimeError, changing nothing, when real torch is
    already imported. Calling it again is harmless.
    """
    foreign = _foreign_torch_modules()
    if foreign:
        raise RuntimeError(
            "install_as_torch(): real torch is already imported in this process "
            f"({', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''}); call "
            "ndgrad.install_as_torch() before anything imports torch, or run the program "
            "with `python -m ndgrad.run`")
    importlib.import_module(_NDGRAD)
    _mirror_imported()
    if _installed_finder() is None:
        sys.meta_path.insert(0, TorchToNdgradFinder())
    return sys.modules[_NDGRAD]


def is_installed_as_torch():
    """True when ``import torch`` gives ndgrad in this process."""
    return _installed_finder() is not None


def uninstall_as_torch():
    """Undo :func:`install_as_torch` (for tests): the finder and the torch names it entered go."""
    finder = _installed_finder()
    if finder is not None:
        sys.meta_path.remove(finder)
    ndgrad_objects = {id(m) for n, m in sys.modules.items()
                      if m is not None and (n == _NDGRAD or n.startswith(_NDGRAD + "."))}
    for name in [n for n, m in sys.modules.items() if _is_torch_name(n)]:
        if id(sys.modules[name]) in ndgrad_objects:
            del sys.modules[name]
