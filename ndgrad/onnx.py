"""ndgrad.onnx: importable so scripts that mention torch.onnx run; there is no exporter
(ndgrad records no graph to export), so ``export`` raises."""

__all__ = ["export", "is_in_onnx_export"]


def export(model, args=(), f=None, *posargs, **kwargs):
    raise RuntimeError("ndgrad.onnx.export: ndgrad cannot export to ONNX (it has no graph "
                       "tracer or exporter). Save a state dict with ndgrad.save and export it "
                       "from torch.")


def is_in_onnx_export():
    return False
