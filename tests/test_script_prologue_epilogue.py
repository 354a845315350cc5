"""A typical torch training script -- device probing, cudnn flags, seeding, DataParallel,
GradScaler/autocast (disabled off-GPU), AdamW with clipping, a checkpoint of model,
optimizer and scaler -- runs unchanged with ndgrad, gives torch's losses, and each library
resumes from the other's checkpoint with the same result."""

import numpy as np
import pytest
import torch

import ndgrad


def train(lib, path):
    nn = lib.nn
    lib.backends.cudnn.benchmark = True
    lib.manual_seed(0)
    lib.cuda.manual_seed_all(0)
    device = lib.device("cuda" if lib.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    if lib.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    model.to(device)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
    scaler = lib.amp.GradScaler(device.type, enabled=device.type == "cuda")
    x = lib.randn(16, 4).to(device, non_blocking=True)
    y = lib.randint(0, 2, (16,)).to(device)
    losses = []
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        with lib.autocast(device_type=device.type, dtype=lib.float16,
                          enabled=device.type == "cuda"):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    if lib.cuda.is_available():
        lib.cuda.synchronize()
    lib.save({"model": model.state_dict(), "opt": opt.state_dict(),
              "scaler": scaler.state_dict(), "step": 3}, path)
    return model, opt, scaler, x, y, losses


def resume(lib, trained, path):
    model, opt, scaler, x, y, _ = trained
    ck = lib.load(path, map_location=lib.device("cpu"))
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    scaler.load_state_dict(ck["scaler"])
    opt.zero_grad()
    lib.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    return lib.nn.functional.cross_entropy(model(x), y).item(), ck["step"]


def test_script_runs_alike_and_checkpoints_cross_over(tmp_path):
    tp, np_ = str(tmp_path / "t.pt"), str(tmp_path / "n.pt")
    t = train(torch, tp)
    n = train(ndgrad, np_)
    np.testing.assert_allclose(n[-1], t[-1], rtol=1e-5)
    t_from_n = resume(torch, t, np_)
    n_from_t = resume(ndgrad, n, tp)
    assert t_from_n[1] == n_from_t[1] == 3
    assert n_from_t[0] == pytest.approx(t_from_n[0], rel=1e-5)
