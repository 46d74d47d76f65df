"""The package's shape: the modules of the front door contract's table and
no others, no import cycle between them, at most 1,200 lines of
non-generated code, and no dependency beyond grpcio and protobuf."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pacta2a"
MODULES = {"__init__", "_pb", "agent", "asgi", "client", "frontdoor", "guard", "recover", "sessions"}
MAX_LINES = 1200


def sources() -> dict[str, Path]:
    return {p.stem: p for p in SRC.glob("*.py")}


def local_imports(path: Path) -> set[str]:
    """Are the package modules a module imports (from . import x, from .x import y)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("pacta2a"):
            out.add((node.module or "").split(".")[1] if "." in (node.module or "") else "__init__")
    return out


def test_modules_are_the_contracts() -> None:
    assert set(sources()) == MODULES


def import_order(graph: dict[str, set[str]]) -> list[str]:
    """Is an order in which each module comes after what it imports;
    AssertionError naming the cycle when there is none."""
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, stack: list[str]) -> None:
        if state.get(name) == 1:
            raise AssertionError("import cycle: " + " -> ".join(stack + [name]))
        if state.get(name) == 2:
            return
        state[name] = 1
        for dep in sorted(graph.get(name, ())):
            visit(dep, stack + [name])
        state[name] = 2
        order.append(name)

    for name in sorted(graph):
        visit(name, [])
    return order


def test_no_import_cycle() -> None:
    graph = {name: local_imports(path) - {"_gen"} for name, path in sources().items()}
    assert graph["frontdoor"] >= {"client", "agent", "asgi", "sessions", "recover"}  # it read the files
    order = import_order(graph)
    assert order.index("_pb") < order.index("client") < order.index("frontdoor")


def test_the_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    # The control: the same reading and walk report a cycle where there is one.
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("from . import a\n")
    graph = {p.stem: local_imports(p) for p in tmp_path.glob("*.py")}
    try:
        import_order(graph)
    except AssertionError as e:
        assert str(e) == "import cycle: a -> b -> a"
    else:
        raise AssertionError("no cycle found")


def test_line_bound() -> None:
    lines = sum(len(p.read_text().splitlines()) for p in sources().values())
    assert 500 < lines <= MAX_LINES, lines


def test_imports_with_grpc_and_protobuf_only() -> None:
    code = (
        "import sys\n"
        "for name in ('starlette', 'uvicorn', 'httpx', 'h11'):\n"
        "    sys.modules[name] = None  # importing it fails\n"
        "import pacta2a, pacta2a.frontdoor, pacta2a.guard\n"
        "print(sorted(m for m in ('starlette', 'uvicorn', 'httpx') if sys.modules.get(m)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=SRC.parent, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
