"""The house's layers: no import circle inside pcrp (imports inside functions counted too), and the library never
imports streamlit (docs/design.md section 2)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pcrp"


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name, path, known):
    """The pcrp modules that module ``name`` imports anywhere in its text, and every top-level package it names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found, top = set(), set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top.add(alias.name.split(".")[0])
                if alias.name in known:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
                top.add(target.split(".")[0])
            for alias in node.names:  # `from . import compute` imports the module pcrp.compute
                if f"{target}.{alias.name}" in known:
                    found.add(f"{target}.{alias.name}")
                elif target in known:
                    found.add(target)
    found.discard(name)
    return found, top


def _graph():
    known = _modules()
    return {name: _imports(name, path, known)[0] for name, path in known.items()}


def _cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_sees_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle_inside_pcrp():
    graph = _graph()
    # package __init__ modules are not edges of the design: pcrp/__init__.py imports nothing at import time
    graph = {k: {v for v in vs if v != "pcrp"} for k, vs in graph.items()}
    assert _cycles(graph) == []


def test_the_library_never_imports_streamlit():
    known = _modules()
    users = sorted(name for name, path in known.items() if "streamlit" in _imports(name, path, known)[1])
    assert users == []
