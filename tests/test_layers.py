"""The house's layers (docs/design.md section 2): every import inside pcrp goes to the importing module's own layer
or a lower one, there is no import circle, and the library never imports streamlit. Imports inside functions count.
The order of the layers is read from the table in docs/design.md, so the document and the code cannot drift."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pcrp"
DESIGN = ROOT / "docs" / "design.md"
MARKER = "<!-- layers: read by tests/test_layers.py, lowest first -->"


def documented_layers(text):
    """[(layer, [places])] from the table after MARKER: each place a subpackage ("model/") or a module
    ("estimator.py") of pcrp/, lowest layer first."""
    rows = text.split(MARKER, 1)[1].strip().splitlines()
    layers = []
    for row in rows[2:]:  # after the header and its rule
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in row.strip("|").split("|")]
        layers.append((cells[0], re.findall(r"`([^`]+)`", cells[1])))
    return layers


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name, path, known):
    """[(pcrp module imported, line)] of module ``name`` anywhere in its text, and every top-level package it
    names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found, top = [], set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top.add(alias.name.split(".")[0])
                if alias.name in known:
                    found.append((alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
                top.add(target.split(".")[0])
            for alias in node.names:  # `from . import compute` imports the module pcrp.<package>.compute
                if f"{target}.{alias.name}" in known:
                    found.append((f"{target}.{alias.name}", node.lineno))
                elif target in known:
                    found.append((target, node.lineno))
    return [(m, line) for m, line in found if m != name], top


def layer_of(module, layers):
    """The index of ``module``'s layer (0 = lowest), or None for the package root pcrp (lazy re-exports only)."""
    rest = module.split(".")[1:]
    if not rest:
        return None
    for index, (_, places) in enumerate(layers):
        for place in places:
            if place.endswith("/") and rest[0] == place[:-1]:
                return index
            if place.endswith(".py") and len(rest) == 1 and rest[0] == place[:-3]:
                return index
    raise AssertionError(f"{module} belongs to no layer of docs/design.md section 2: add its place to the table")


def upward_imports(layers, modules=None):
    """['module (layer) imports target (layer), line n'] for every import that goes to a higher layer."""
    known = modules or _modules()
    out = []
    for name, path in sorted(known.items()):
        own = layer_of(name, layers)
        for target, line in _imports(name, path, known)[0]:
            theirs = layer_of(target, layers)
            if own is not None and theirs is not None and theirs > own:
                out.append(f"{name} ({layers[own][0]}) imports {target} ({layers[theirs][0]}), line {line}")
    return out


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


@pytest.fixture(scope="module")
def layers():
    return documented_layers(DESIGN.read_text())


def test_the_design_document_lists_every_subpackage_once(layers):
    places = [place for _, ps in layers for place in ps]
    assert len(places) == len(set(places))
    on_disk = {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    on_disk |= {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    assert on_disk - {"datasets/"} == set(places)


def test_every_import_goes_to_the_same_layer_or_a_lower_one(layers):
    assert upward_imports(layers) == []


def test_the_layer_check_sees_an_upward_import(layers, tmp_path):
    """The check has teeth: a kernel that imports the app, from inside a function, is reported."""
    kernel = tmp_path / "pcrp" / "kernels" / "bad.py"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("def f():\n    from ..app import live_runs\n    return live_runs\n")
    found = upward_imports(layers, {**_modules(), "pcrp.kernels.bad": kernel})
    assert found == ["pcrp.kernels.bad (kernels) imports pcrp.app.live_runs (app), line 2"]


def test_the_cycle_finder_sees_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle_inside_pcrp():
    known = _modules()
    # the package root only re-exports names on first use (PEP 562): not an edge of the design
    graph = {name: {m for m, _ in _imports(name, path, known)[0] if m != "pcrp"} for name, path in known.items()}
    assert _cycles(graph) == []


def test_the_library_never_imports_streamlit():
    known = _modules()
    users = sorted(name for name, path in known.items() if "streamlit" in _imports(name, path, known)[1])
    assert users == []
