"""Graph checks over state names, iterative so no spec is too long for them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


def find_cycle(nodes: Iterable[str], successors: Callable[[str], Iterable[str]]) -> list[str] | None:
    """The first cycle an iterative depth-first search finds, as `[a, b, ..., a]`; None if acyclic."""
    finished: set[str] = set()
    for root in nodes:
        if root in finished:
            continue
        path, on_path = [root], {root: 0}
        stack: list[Iterator[str]] = [iter(successors(root))]
        while stack:
            for target in stack[-1]:
                if target in on_path:
                    return [*path[on_path[target] :], target]
                if target not in finished:
                    on_path[target] = len(path)
                    path.append(target)
                    stack.append(iter(successors(target)))
                    break
            else:
                stack.pop()
                done = path.pop()
                del on_path[done]
                finished.add(done)
    return None


def deepest(nodes: Iterable[str], children: Callable[[str], Iterable[str]]) -> tuple[int, str]:
    """The longest chain of `children` below any node of an acyclic graph, and where it starts."""
    depth: dict[str, int] = {}
    best = (0, "")
    for root in nodes:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in depth:
                continue
            kids = list(children(node))
            if expanded or not kids:
                depth[node] = 1 + max((depth.get(k, 0) for k in kids), default=0)
                continue
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids if kid not in depth)
        best = max(best, (depth[root], root))
    return best
