"""storage.memo.Memo: a function's results by argument, each computed once, at most ``cap`` kept."""
from selflearn.storage.memo import Memo


def test_a_result_is_computed_once_and_the_cap_bounds_what_is_kept():
    calls = []

    def double(x):
        calls.append(x)
        return 2 * x
    memo = Memo(double, 2)
    assert [memo[1], memo[1], memo[2], memo[3], memo[3]] == [2, 2, 4, 6, 6]
    assert calls == [1, 2, 3, 3]  # 3 came after the cap: computed each time, not kept
    assert dict(memo) == {1: 2, 2: 4}
    assert memo.get(5) is None  # only indexing computes
