"""``ExponentialFamily``: the base of families written in natural parameters. Subclasses
expose ``_natural_params`` and ``_log_normalizer``; KL between two members of one family
can then be computed as a Bregman divergence of the log normaliser (see ``kl.py``)."""

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError
