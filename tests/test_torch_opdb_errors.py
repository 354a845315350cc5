"""torch's op_db against ndgrad: ``error_inputs`` raise torch's exception class.

Every ErrorInput of every applicable OpInfo that torch 2.13 itself refuses with the declared
class: ndgrad refuses it with the same class (never a NumPy exception, never accepting it).
Also the reviewed skip list and known gaps are printed and are those docs/ops.md lists.
"""

import pytest

import _torch_opdb as h


@pytest.mark.parametrize("op,dtype", h.pytest_params("errors"))
def test_error_inputs(op, dtype):
    h.check_param("errors", op, dtype)


def test_skip_list_is_reviewed_and_documented():
    import pathlib
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "ops.md").read_text()
    skipped = [(op.full_name, h.skip_reason(op)) for op in h.op_db if h.skip_reason(op)]
    value_only = [(op.full_name, h.value_skip_reason(op)) for op in h.op_db
                  if h.value_skip_reason(op)]
    print("\nop_db entries not run:", *[f"  {n}: {r}" for n, r in skipped], sep="\n")
    print("op_db entries compared by shape and dtype only:",
          *[f"  {n}: {r}" for n, r in value_only], sep="\n")
    print("known gaps:", *[f"  {k}: {r}" for k, r in sorted(h.KNOWN_GAPS.items())], sep="\n")
    names = {op.full_name for op in h.op_db}
    for mode, name, _ in h.KNOWN_GAPS:
        assert name in names and mode in h.MODES, (mode, name)
    for name, reason in skipped + value_only:
        assert reason and f"`{name}`" in doc, f"{name} is not listed in docs/ops.md"
    for (mode, name, dtype), reason in h.KNOWN_GAPS.items():
        assert f"| {mode} | `{name}` | {dtype} |" in doc, \
            f"known gap {mode} {name} {dtype} is not listed in docs/ops.md"
