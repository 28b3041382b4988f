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


def postorder(nodes: Iterable[str], children: Callable[[str], Iterable[str]]) -> list[str]:
    """Every node reachable from `nodes`, each after all of its children (the graph must be acyclic)."""
    done: set[str] = set()
    order: list[str] = []
    for root in nodes:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((kid, False) for kid in children(node) if kid not in done)
    return order


def deepest(nodes: Iterable[str], children: Callable[[str], Iterable[str]]) -> tuple[int, str]:
    """The longest chain of `children` below any node of an acyclic graph, and where it starts."""
    roots = list(nodes)
    depth: dict[str, int] = {}
    for node in postorder(roots, children):
        depth[node] = 1 + max((depth[kid] for kid in children(node)), default=0)
    return max(((depth[root], root) for root in roots), default=(0, ""))
