"""``python -m ndgrad.run SCRIPT [ARGS]`` / ``python -m ndgrad.run -m MODULE [ARGS]``.

Runs an unmodified torch program on ndgrad: :func:`ndgrad.install_as_torch` first, so every
``import torch`` in the program and in the libraries it imports gives ndgrad, then the script or
module exactly as ``python SCRIPT`` / ``python -m MODULE`` would run it: ``__name__`` is
``"__main__"``, ``sys.argv`` is ``[SCRIPT, *ARGS]`` (``[full path of MODULE's file, *ARGS]``
for ``-m``), ``sys.path[0]`` is the script's directory (the current directory for ``-m``).
The exit status is the program's; an uncaught exception prints its traceback and exits 1.
"""

import os
import runpy
import sys

from ._install import install_as_torch

USAGE = ("usage: python -m ndgrad.run SCRIPT [ARGS...]\n"
         "       python -m ndgrad.run -m MODULE [ARGS...]\n"
         "Runs a torch program with the name torch bound to ndgrad.")


def main(argv=None):
    """Run the program ``argv`` names (``sys.argv[1:]`` by default); returns when it does."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    install_as_torch()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("Argument expected for the -m option\n" + USAGE, file=sys.stderr)
            raise SystemExit(2)
        module_name, args = argv[1], argv[2:]
        sys.argv = [module_name, *args]  # runpy replaces argv[0] by the module's file
        sys.path[0] = os.getcwd()
        runpy.run_module(module_name, run_name="__main__", alter_sys=True)
    else:
        script, args = argv[0], argv[1:]
        sys.argv = [script, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
