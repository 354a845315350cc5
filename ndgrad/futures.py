"""``torch.futures``: a Future whose value is already computed or set by hand.

ndgrad runs everything eagerly on one thread, so ``torch.jit.fork`` runs its function at once and
returns a completed Future; ``wait`` / ``value`` return the result or raise the exception stored.
Invariant: a Future is completed at most once (torch's RuntimeError on a second ``set_result``).
"""

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """The result of an asynchronous call: ``done``, ``wait``, ``value``, ``then``."""

    def __init__(self, *, devices=None):
        self._done = False
        self._result = None
        self._exception = None
        self._callbacks = []

    def done(self):
        return self._done

    def wait(self):
        if not self._done:
            raise RuntimeError("ndgrad Futures complete on their own thread: this Future was "
                               "never given a result (set_result) and would block forever")
        if self._exception is not None:
            raise self._exception
        return self._result

    value = wait

    def _complete(self, result, exception):
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._done, self._result, self._exception = True, result, exception
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback):
        chained = Future()

        def run(fut):
            try:
                chained.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001  (stored for wait(), as torch does)
                chained.set_exception(e)
        self.add_done_callback(run)
        return chained


def collect_all(futures):
    """A Future of the list of `futures`, completed when all of them are."""
    futures = list(futures)
    out = Future()
    out.set_result(futures)
    return out


def wait_all(futures):
    """The values of `futures`, in order (the first stored exception raises)."""
    return [fut.wait() for fut in futures]
