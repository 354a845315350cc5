"""ndgrad.random: torch.random's functions over the default CPU generator (seeding, state,
``fork_rng``), so ``torch.random.manual_seed(0)`` and ``with torch.random.fork_rng():`` run
unchanged."""

from ._creation import get_rng_state, set_rng_state  # noqa: F401
from ._random import fork_rng, initial_seed, manual_seed, seed  # noqa: F401

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


def thread_safe_generator():
    """The generator of the current DataLoader thread worker; None outside one (ndgrad's
    workers share the default generator), meaning "use the default generator"."""
    return None
