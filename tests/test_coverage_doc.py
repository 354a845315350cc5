"""docs/coverage.md stays true: it is exactly what tools/coverage.py computes from torch 2.13
and ndgrad now, and every name it lists is public in torch and absent from ndgrad."""

import importlib.util
import os
import re
import subprocess
import sys

import torch

import ndgrad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    # loaded by path: "coverage" would be the coverage.py package on sys.path
    spec = importlib.util.spec_from_file_location("ndgrad_coverage_tool",
                                                  os.path.join(ROOT, "tools", "coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _resolve(root, path):
    obj = root
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def test_coverage_doc_is_up_to_date():
    # computed in a fresh process: torch's test-support modules that other tests import add
    # names to torch's namespaces, which the count must not see
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "coverage.py"),
                           "--check"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_listed_name_is_in_torch_and_missing_from_ndgrad():
    with open(os.path.join(ROOT, "docs", "coverage.md")) as fh:
        doc = fh.read()
    sections = re.split(r"^## `([^`]+)`$", doc, flags=re.M)[1:]
    listed = {}
    for path, body in zip(sections[::2], sections[1::2]):
        theirs, ours = _resolve(torch, path), _resolve(ndgrad, path)
        assert theirs is not None
        names = re.findall(r"`([^`]+)`", "\n".join(
            line.split(":", 1)[1] for line in body.splitlines() if line.startswith("- ")))
        for name in names:
            assert hasattr(theirs, name), (path, name)
            assert ours is None or not hasattr(ours, name), (path, name)
        listed[path] = set(names)
    # the per-namespace listings add up to the summary table's "ndgrad lacks" column
    table = {m.group(1): int(m.group(2)) for m in
             re.finditer(r"^\| `([^`]+)` \| \d+ \| (\d+) \|$", doc, flags=re.M)}
    assert table and {p: n for p, n in table.items() if n} == \
        {p: len(v) for p, v in listed.items()}
    # names ndgrad has are not listed; names it lacks are
    assert not {"Transformer", "TransformerDecoder", "DataParallel"} & listed["torch.nn"]
    assert not {"save", "load", "from_dlpack", "autocast"} & listed["torch"]
    assert "torch.distributions" not in listed  # every public name exists in ndgrad
    assert "torch.fft" not in listed  # every public name of torch.fft exists in ndgrad
