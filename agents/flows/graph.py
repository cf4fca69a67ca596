"""The graph algorithms validation needs, iterative (no recursion) and linear in nodes plus edges.

Nodes are indexes 0..n-1 and edges pairs of indexes, so a 5,000-node cycle costs what a 5,000-node
chain does and never meets Python's recursion limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence


def successors(count: int, edges: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Each node's successors, in edge order, once each."""
    out: list[list[int]] = [[] for _ in range(count)]
    seen: set[tuple[int, int]] = set()
    for source, target in edges:
        if (source, target) not in seen:
            seen.add((source, target))
            out[source].append(target)
    return out


def reachable(succ: Sequence[Sequence[int]], start: int) -> list[bool]:
    """Which nodes a walk from `start` reaches (`start` included)."""
    seen = [False] * len(succ)
    seen[start] = True
    queue = deque([start])
    while queue:
        for nxt in succ[queue.popleft()]:
            if not seen[nxt]:
                seen[nxt] = True
                queue.append(nxt)
    return seen


def cycles(succ: Sequence[Sequence[int]]) -> list[list[int]]:
    """The graph's cycles as strongly connected components (more than one node, or a self-edge),
    each in ascending node order, ordered by their first node (Tarjan's algorithm, iteratively)."""
    count = len(succ)
    index = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in range(count):
        if index[root] != -1:
            continue
        work: list[tuple[int, int]] = [(root, 0)]  # (node, next successor position)
        while work:
            node, pos = work[-1]
            if pos == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack[node] = True
            if pos < len(succ[node]):
                work[-1] = (node, pos + 1)
                nxt = succ[node][pos]
                if index[nxt] == -1:
                    work.append((nxt, 0))
                elif on_stack[nxt]:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in succ[node]:
                    found.append(sorted(component))
    return sorted(found)


def ancestors(succ: Sequence[Sequence[int]]) -> list[int | None]:
    """Each node's ancestors as a bit set (bit i: node i runs before it), or None for a node on or
    after a cycle, whose order is undefined. Kahn's order, one big-int OR per edge."""
    count = len(succ)
    indegree = [0] * count
    for targets in succ:
        for target in targets:
            indegree[target] += 1
    bits: list[int | None] = [None] * count
    acc = [0] * count
    queue = deque(i for i in range(count) if indegree[i] == 0)
    while queue:
        node = queue.popleft()
        bits[node] = acc[node]
        mine = acc[node] | (1 << node)
        for target in succ[node]:
            acc[target] |= mine
            indegree[target] -= 1
            if indegree[target] == 0:
                queue.append(target)
    return bits
