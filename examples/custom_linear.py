"""A custom op inside a model: a Linear layer whose forward calls a custom autograd Function.

This is the example of PyTorch's "Extending torch.autograd" guide, written for ndgrad:
``LinearFunction`` computes ``input @ weight.T + bias`` with a hand-written backward, and
``Linear`` is an ``nn.Module`` holding the weight and bias as ``nn.Parameter`` with
``nn.Linear``'s initialisation. The same file runs unchanged on torch (replace the import),
which is how the test suite checks it trains to the same numbers step by step.

    PYTHONPATH=. python examples/custom_linear.py   (from the repository root)
"""

import math

import ndgrad as torch
from ndgrad import nn
from ndgrad.autograd import Function, gradcheck


class LinearFunction(Function):
    """``input @ weight.T + bias`` (bias optional), with forward and setup_context separate."""

    @staticmethod
    def forward(input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output = output + bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        # Only compute what is needed: needs_input_grad is one flag per forward argument.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class Linear(nn.Module):
    """Like ``nn.Linear``, but its forward is the custom ``LinearFunction``."""

    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # nn.Linear's initialisation: Kaiming-uniform weights, bias uniform in +-1/sqrt(fan_in).
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"input_features={self.input_features}, "
                f"output_features={self.output_features}, bias={self.bias is not None}")


def train(steps=5, seed=0, lr=0.1):
    """A two-layer regression net built from the custom Linear; returns the losses."""
    torch.manual_seed(seed)
    model = nn.Sequential(Linear(4, 8), nn.Tanh(), Linear(8, 1))
    x = torch.randn(16, 4)
    y = x.sum(1, keepdim=True).sin()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


def check():
    """gradcheck the Function (with and without bias) in float64."""
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, dtype=torch.float64, requires_grad=True)
    return (gradcheck(LinearFunction.apply, (x, w, b))
            and gradcheck(LinearFunction.apply, (x, w)))


if __name__ == "__main__":
    assert check()
    model, losses = train()
    print(model)
    print("losses:", " ".join(f"{v:.6f}" for v in losses))
