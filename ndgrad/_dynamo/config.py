"""Settings of ndgrad.compile, under torch._dynamo.config's names.

``cache_size_limit`` (and its newer name ``recompile_limit``): how many traced entries one
compiled function keeps (one per guard signature) before it warns and runs eagerly for new
signatures, as torch does. Read at each recompilation, so changing it takes effect at once.
"""

cache_size_limit = 8
recompile_limit = 8
