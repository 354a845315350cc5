"""The restricted unpickler behind ``load(..., weights_only=True)`` and the user allowlist.

What lives here: an interpreter for the pickle opcodes a checkpoint uses, that resolves
``GLOBAL`` names only through a fixed table (tensor rebuild functions, storage types, dtypes,
``Size``, ``device``, ``OrderedDict``, ...) handed in by the caller, plus the globals users
allow with ``serialization.add_safe_globals`` / ``safe_globals``.

Invariants:
- Nothing is imported and no callable runs unless it is in the table or the allowlist; the
  modules ``sys``, ``os``, ``posix`` and ``nt`` are refused even when allowlisted.
- ``BUILD`` only sets state on Tensors, Parameters, OrderedDicts and allowlisted types;
  ``APPEND(S)`` only extends lists and ``SETITEM(S)`` only fills dicts.
- Every read is bounded by the bytes actually present, so a length field claiming more data
  than the pickle holds fails instead of allocating.
- Any malformed input raises ``pickle.UnpicklingError`` (``EOFError`` when the data is
  truncated), with torch's messages for the refusals it names.
"""

import struct
from collections import Counter, OrderedDict
from pickle import UnpicklingError

__all__ = ["Unpickler", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
# Python 2 names that pickle protocol 2 writes for builtins.
_RENAMED_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue"}

_user_globals = set()


def add_safe_globals(safe_globals):
    """Allow these globals (callables or ``(callable, "module.qualname")`` pairs) in
    weights-only loads."""
    global _user_globals
    _user_globals = _user_globals.union(set(safe_globals))


def get_safe_globals():
    """The globals users have allowed for weights-only loads."""
    return list(_user_globals)


def clear_safe_globals():
    """Forget every user-allowed global."""
    global _user_globals
    _user_globals = set()


class safe_globals:
    """Context manager allowing some globals for weights-only loads inside its block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc, tb):
        global _user_globals
        _user_globals = _user_globals - set(self.safe_globals)


def user_allowed_globals():
    """``{"module.qualname": object}`` for every allowlisted global."""
    table = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            table[entry[1]] = entry[0]
        else:
            table[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return table


def _ndgrad_spelling(path):
    # A torch checkpoint names torch.X; a user allowlisting ndgrad's class registers ndgrad.X.
    return "ndgrad" + path[5:] if path.startswith("torch.") else None


class Unpickler:
    """``Unpickler(data, allowed, persistent_load, encoding).load()``: `allowed` maps
    ``"module.name"`` to the object a ``GLOBAL`` yields; `build_types` are the types
    ``BUILD`` may set state on besides allowlisted ones."""

    def __init__(self, data, allowed, persistent_load, build_types=(), encoding="utf-8"):
        self.data = memoryview(data)
        self.pos = 0
        self.allowed = allowed
        self.persistent_load = persistent_load
        self.build_types = tuple(build_types) + (OrderedDict,)
        self.encoding = encoding
        self.user = user_allowed_globals()
        self.allowed_values = list(allowed.values()) + list(self.user.values())

    # -------------------------------------------------------------- reading primitives
    def read(self, n):
        if n < 0:
            raise UnpicklingError("negative length in pickle data")
        if self.pos + n > len(self.data):
            raise EOFError                  # truncated data: torch's unpickler ends in EOFError
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def readline(self):
        end = bytes(self.data[self.pos:self.pos + 4096]).find(b"\n")
        if end < 0:
            raise EOFError
        line = bytes(self.data[self.pos:self.pos + end])
        self.pos += end + 1
        return line

    def _uint(self, fmt, n):
        return struct.unpack(fmt, self.read(n))[0]

    # -------------------------------------------------------------- globals
    def find_global(self, module, name):
        module = _RENAMED_MODULES.get(module, module)
        path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {path} whose module "
                                  f"{module} is blocked.")
        if path in self.allowed:
            return self.allowed[path]
        for candidate in (path, _ndgrad_spelling(path)):
            if candidate in self.user:
                return self.user[candidate]
        shown = path[len("builtins."):] if path.startswith("builtins.") else path
        raise UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this "
            f"global if you trust this class/function.")

    def _is_allowed(self, obj):
        return any(obj is v for v in self.allowed_values)

    # -------------------------------------------------------------- the interpreter
    def load(self):
        try:
            return self._run()
        except (UnpicklingError, EOFError):
            raise
        except (IndexError, KeyError, struct.error, UnicodeDecodeError, ValueError) as e:
            raise UnpicklingError(f"malformed pickle data: {type(e).__name__}: {e}") from None

    def _run(self):  # one branch per opcode
        stack, marks, memo = [], [], {}

        def pop_mark():
            nonlocal stack
            items = stack
            stack = marks.pop()
            return items

        if len(self.data) == 0:
            raise EOFError
        while True:
            if self.pos >= len(self.data):
                raise EOFError                  # as torch's: the stream ended between opcodes
            op = self.data[self.pos]
            self.pos += 1
            if op == 0x80:                                   # PROTO
                self.read(1)
            elif op == 0x95:                                 # FRAME
                self.read(8)
            elif op == 0x2E:                                 # STOP
                return stack.pop()
            elif op == 0x28:                                 # MARK
                marks.append(stack)
                stack = []
            elif op == 0x30:                                 # POP
                stack.pop()
            elif op == 0x31:                                 # POP_MARK
                pop_mark()
            elif op == 0x32:                                 # DUP
                stack.append(stack[-1])
            elif op == 0x4E:                                 # NONE
                stack.append(None)
            elif op == 0x88:                                 # NEWTRUE
                stack.append(True)
            elif op == 0x89:                                 # NEWFALSE
                stack.append(False)
            elif op == 0x4A:                                 # BININT
                stack.append(self._uint("<i", 4))
            elif op == 0x4B:                                 # BININT1
                stack.append(self.read(1)[0])
            elif op == 0x4D:                                 # BININT2
                stack.append(self._uint("<H", 2))
            elif op == 0x8A:                                 # LONG1
                n = self.read(1)[0]
                stack.append(int.from_bytes(self.read(n), "little", signed=True))
            elif op == 0x8B:                                 # LONG4
                n = self._uint("<i", 4)
                stack.append(int.from_bytes(self.read(n), "little", signed=True))
            elif op == 0x47:                                 # BINFLOAT
                stack.append(self._uint(">d", 8))
            elif op == 0x58:                                 # BINUNICODE
                stack.append(str(self.read(self._uint("<I", 4)), "utf-8", "surrogatepass"))
            elif op == 0x8C:                                 # SHORT_BINUNICODE
                stack.append(str(self.read(self.read(1)[0]), "utf-8", "surrogatepass"))
            elif op == 0x8D:                                 # BINUNICODE8
                stack.append(str(self.read(self._uint("<Q", 8)), "utf-8", "surrogatepass"))
            elif op in (0x55, 0x54):                         # SHORT_BINSTRING, BINSTRING
                n = self.read(1)[0] if op == 0x55 else self._uint("<i", 4)
                raw = bytes(self.read(n))
                stack.append(raw if self.encoding == "bytes" else raw.decode(self.encoding))
            elif op == 0x43:                                 # SHORT_BINBYTES
                stack.append(bytes(self.read(self.read(1)[0])))
            elif op == 0x42:                                 # BINBYTES
                stack.append(bytes(self.read(self._uint("<I", 4))))
            elif op == 0x8E:                                 # BINBYTES8
                stack.append(bytes(self.read(self._uint("<Q", 8))))
            elif op == 0x29:                                 # EMPTY_TUPLE
                stack.append(())
            elif op == 0x74:                                 # TUPLE
                items = pop_mark()
                stack.append(tuple(items))
            elif op == 0x85:                                 # TUPLE1
                stack[-1] = (stack[-1],)
            elif op == 0x86:                                 # TUPLE2
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == 0x87:                                 # TUPLE3
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == 0x5D:                                 # EMPTY_LIST
                stack.append([])
            elif op == 0x6C:                                 # LIST
                items = pop_mark()
                stack.append(list(items))
            elif op == 0x7D:                                 # EMPTY_DICT
                stack.append({})
            elif op == 0x64:                                 # DICT
                items = pop_mark()
                stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
            elif op == 0x8F:                                 # EMPTY_SET
                stack.append(set())
            elif op == 0x91:                                 # FROZENSET
                items = pop_mark()
                stack.append(frozenset(items))
            elif op == 0x90:                                 # ADDITEMS
                items = pop_mark()
                if type(stack[-1]) is not set:
                    raise UnpicklingError(f"Can only add items to sets, but got "
                                          f"{type(stack[-1])}")
                stack[-1].update(items)
            elif op == 0x61:                                 # APPEND
                item = stack.pop()
                self._check_list(stack[-1], "append to")
                stack[-1].append(item)
            elif op == 0x65:                                 # APPENDS
                items = pop_mark()
                self._check_list(stack[-1], "extend")
                stack[-1].extend(items)
            elif op == 0x73:                                 # SETITEM
                value, key = stack.pop(), stack.pop()
                self._check_dict(stack[-1], "SETITEM")
                stack[-1][key] = value
            elif op == 0x75:                                 # SETITEMS
                items = pop_mark()
                self._check_dict(stack[-1], "SETITEMS")
                for i in range(0, len(items), 2):
                    stack[-1][items[i]] = items[i + 1]
            elif op in (0x68, 0x6A):                         # BINGET, LONG_BINGET
                idx = self.read(1)[0] if op == 0x68 else self._uint("<I", 4)
                if idx not in memo:
                    raise UnpicklingError(f"Memo value not found at index {idx}")
                stack.append(memo[idx])
            elif op in (0x71, 0x72):                         # BINPUT, LONG_BINPUT
                idx = self.read(1)[0] if op == 0x71 else self._uint("<I", 4)
                memo[idx] = stack[-1]
            elif op == 0x94:                                 # MEMOIZE
                memo[len(memo)] = stack[-1]
            elif op == 0x63:                                 # GLOBAL
                module = self.readline().decode("utf-8")
                name = self.readline().decode("utf-8")
                stack.append(self.find_global(module, name))
            elif op == 0x93:                                 # STACK_GLOBAL
                name, module = stack.pop(), stack.pop()
                if type(name) is not str or type(module) is not str:
                    raise UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self.find_global(module, name))
            elif op == 0x52:                                 # REDUCE
                args = stack.pop()
                func = stack[-1]
                if not self._is_allowed(func):
                    msg = f"Trying to call reduce for unrecognized function {func}"
                    if hasattr(func, "__self__"):
                        msg += f" which belongs to {func.__self__}"
                    raise UnpicklingError(msg)
                if type(args) is not tuple:
                    raise UnpicklingError("REDUCE arguments must be a tuple")
                stack[-1] = func(*args)
            elif op == 0x81:                                 # NEWOBJ
                args = stack.pop()
                cls = stack.pop()
                stack.append(self._newobj(cls, args))
            elif op == 0x62:                                 # BUILD
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == 0x51:                                 # BINPERSID
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(f"persistent_load id must be tuple or int, but got "
                                          f"{type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
                    raise UnpicklingError(f"Only persistent_load of storage is allowed, but "
                                          f"got {type(pid[0])}")
                stack.append(self.persistent_load(pid))
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    @staticmethod
    def _check_list(obj, verb):
        if type(obj) is not list:
            raise UnpicklingError(f"Can only {verb} lists, but got {type(obj)}")

    @staticmethod
    def _check_dict(obj, opcode):
        if type(obj) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(obj)}")

    def _newobj(self, cls, args):
        if type(args) is not tuple:
            raise UnpicklingError("NEWOBJ arguments must be a tuple")
        parameter = self.allowed.get("torch.nn.parameter.Parameter")
        if parameter is not None and cls is parameter:
            return cls(*args)
        if isinstance(cls, type) and self._is_allowed(cls):
            return cls.__new__(cls, *args)
        raise UnpicklingError("Can only create new object for nn.Parameter or classes "
                              f"allowlisted via `add_safe_globals` but got {cls}")

    def _build(self, inst, state):
        if type(inst) in self.build_types:
            if type(inst) is OrderedDict or not hasattr(inst, "__setstate__"):
                _set_state(inst, state)
            else:
                inst.__setstate__(state)
        elif self._is_allowed(type(inst)):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                _set_state(inst, state)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {type(inst)}")


def _set_state(inst, state):
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    if slots:
        for k, v in slots.items():
            setattr(inst, k, v)


def _ascii(x):
    return x.decode("ascii") if isinstance(x, bytes) else x
