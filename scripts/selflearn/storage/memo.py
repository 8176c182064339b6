"""A function's results kept by argument: for pure functions a hot loop calls again and again
with few distinct arguments (a vocabulary's words, a store's term frequencies). Imports
nothing, so any module may use it cheaply."""

from typing import Callable


class Memo(dict):
    """``memo[x]`` is ``function(x)``, computed once; at most ``cap`` results are kept, so a
    stream of new arguments cannot grow it without bound."""

    def __init__(self, function: Callable, cap: int):
        super().__init__()
        self.function, self.cap = function, cap

    def __missing__(self, key):
        value = self.function(key)
        if len(self) < self.cap:
            self[key] = value
        return value
