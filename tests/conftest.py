"""Session-wide test setup shared by every test file.

Importing torch's test-support modules (``torch.testing._internal.common_utils``, which the
op_db tests load during collection) freezes ``torch.backends``' flags for the whole process
(``disable_global_flags``). Scripts and our device-module tests set those flags the ordinary
way, so the freeze is lifted before every test (the modules may be imported by a test itself).
"""

import sys


def pytest_runtest_setup(item):
    backends = sys.modules.get("torch.backends")
    if backends is not None and backends.flags_frozen():
        # the flag lives in the globals of torch/backends/__init__.py's functions
        backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
