"""The op library: registry and dispatch, then one module per family of primitives.

NumPy's floating-point RuntimeWarnings raised inside ndgrad (divide by zero, overflow, invalid
value, the mean of an empty slice) are ignored here: torch computes the same inf and NaN
silently. A warnings filter scoped to ndgrad's own modules does it, at no cost per op (an
``np.errstate`` around every kernel would cost more than a small kernel); NumPy code of the
user's own keeps its warnings, and a filter the user installs later (``simplefilter("error")``)
takes precedence, as warning filters do.
"""

import warnings

warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ndgrad(\.|$)")
