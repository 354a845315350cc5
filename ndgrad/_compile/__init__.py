"""ndgrad.compile: capture what a function or module runs once, replay it as straight-line
NumPy (the forward as direct kernel calls, the backward as one node of the eager graph).

Layout: :mod:`.tracer` (capturing primitive calls, graph breaks), :mod:`.codegen` (traced
instructions to Python source on arrays), :mod:`.region` (a compiled region: its programs and
its backward node), :mod:`.api` (the cache, guards, ``compile``, ``explain``, ``reset``).
User documentation: docs/compile.md.
"""

from .api import CompiledFunction, ExplainOutput, OptimizedModule, compile, explain, reset  # noqa: F401
