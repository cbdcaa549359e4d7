"""straggler/_core.pyi matches the compiled module: the same public names, the same parameters
and defaults, and every public name documented in both places."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import straggler
from straggler import _core

STUB = Path(straggler.__file__).with_name("_core.pyi")
DUNDERS = ("__init__", "__enter__", "__exit__")


def _stub() -> ast.Module:
    return ast.parse(STUB.read_text())


def _stub_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def _runtime_members(cls: type) -> set[str]:
    return {n for n in vars(cls) if not n.startswith("_") or n in DUNDERS}


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts]


def _runtime_params(obj: object, name: str) -> list[tuple[str, object]]:
    """(name, default or inspect.Parameter.empty), without self, from the text signature (our
    METH_FASTCALL methods) or pybind11's signature line."""
    if getattr(obj, "__text_signature__", None):
        sig = inspect.signature(obj)
        return [(p.name, p.default) for p in sig.parameters.values() if p.name != "self"]
    first = (obj.__doc__ or "").splitlines()[0]
    assert first.startswith(f"{name}("), f"{name}: no signature line in {first!r}"
    inner = first[len(name) + 1:first.rindex(") ->")]
    params = []
    for part in _split_top_level(inner):
        pname, _, rest = part.partition(":")
        if pname in ("self", "*args"):
            continue
        default = inspect.Parameter.empty
        if " = " in rest:
            default = ast.literal_eval(rest.split(" = ", 1)[1])
        params.append((pname, default))
    return params


def _stub_params(fn: ast.FunctionDef) -> list[tuple[str, object]]:
    args = fn.args.posonlyargs + fn.args.args  # defaults cover both, positional-only first
    defaults = [inspect.Parameter.empty] * (len(args) - len(fn.args.defaults)) + [
        ast.literal_eval(d) for d in fn.args.defaults]
    return [(a.arg, d) for a, d in zip(args, defaults, strict=True) if a.arg != "self"]


def _docstring_of(obj: object, name: str) -> str:
    doc = inspect.cleandoc(obj.__doc__ or "")  # its own: getdoc() would inherit a base's
    lines = doc.splitlines()
    if lines and lines[0].startswith(f"{name}("):  # pybind11's signature line
        lines = lines[1:]
    return "\n".join(lines).strip()


def test_stub_and_module_have_the_same_public_names():
    runtime = {n for n in dir(_core) if not n.startswith("_")}
    assert set(_stub_names(_stub().body)) == runtime


@pytest.mark.parametrize("cls_name", ["CudaError", "TimerEngine", "NvmlSampler"])
def test_stub_classes_have_the_runtime_members(cls_name):
    node = _stub_names(_stub().body)[cls_name]
    assert isinstance(node, ast.ClassDef)
    assert set(_stub_names(node.body)) == _runtime_members(getattr(_core, cls_name))


def test_stub_signatures_match_the_module():
    stub = _stub_names(_stub().body)
    checked = 0
    for name, node in stub.items():
        if isinstance(node, ast.FunctionDef):
            assert _stub_params(node) == _runtime_params(getattr(_core, name), name), name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            cls = getattr(_core, name)
            for member, mnode in _stub_names(node.body).items():
                attr = vars(cls)[member]
                if isinstance(attr, property) or member in ("__enter__", "__exit__"):
                    continue
                assert _stub_params(mnode) == _runtime_params(attr, member), f"{name}.{member}"
                checked += 1
    assert checked >= 20  # the functions and methods, not a vacuous pass


def test_every_public_name_has_a_docstring_at_run_time():
    undocumented = []
    for name in dir(_core):
        if name.startswith("_"):
            continue
        obj = getattr(_core, name)
        if isinstance(obj, (tuple, str)):  # constants: documented in the stub (next test)
            continue
        if not _docstring_of(obj, name):
            undocumented.append(name)
        if isinstance(obj, type):
            for member in _runtime_members(obj):
                if not _docstring_of(vars(obj)[member], member):
                    undocumented.append(f"{name}.{member}")
    assert undocumented == []


def test_every_public_name_has_a_docstring_in_the_stub():
    undocumented = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for i, node in enumerate(body):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                if ast.get_docstring(node) is None and node.name not in ("__enter__", "__exit__"):
                    undocumented.append(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{node.name}.")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                following = body[i + 1] if i + 1 < len(body) else None
                documented = (isinstance(following, ast.Expr)
                              and isinstance(following.value, ast.Constant)
                              and isinstance(following.value.value, str))
                if not documented:
                    undocumented.append(prefix + node.target.id)

    visit(_stub().body, "")
    assert undocumented == []
