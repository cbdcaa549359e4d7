"""The sub-packages are layered: importing one loads none of the layers above it (issue #12).

``analysis`` is pure arithmetic: no process group, no telemetry, no report types. ``telemetry``
may read the analysis rules but never reports or collectives; ``reporting`` sits above both.
Each import runs in a fresh interpreter so that nothing imported by another test hides a cycle.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Sub-package -> the packages (and modules) importing it must not load. (`import torch` loads
# torch.distributed itself: only a package that needs no torch at all can be checked for it.)
FORBIDDEN = {
    "straggler.analysis": ("straggler.telemetry", "straggler.reporting", "straggler.dist",
                           "straggler.sinks", "straggler.timing", "straggler.detector",
                           "torch.distributed", "torch"),
    "straggler.telemetry": ("straggler.reporting", "straggler.dist", "straggler.sinks",
                            "straggler.timing", "straggler.detector"),
    "straggler.reporting": ("straggler.sinks", "straggler.timing", "straggler.detector"),
}

# Every module of the sub-package, so a lazily imported module is checked too.
_LOADED = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
    importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_by(package: str) -> set[str]:
    out = subprocess.run([sys.executable, "-W", "error", "-c", _LOADED, package],
                         capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_sub_package_loads_no_layer_above_it(package):
    loaded = _loaded_by(package)
    assert package in loaded
    bad = sorted(name for name in loaded for forbidden in FORBIDDEN[package]
                 if name == forbidden or name.startswith(forbidden + "."))
    assert bad == [], f"importing {package} loads {bad}"


def test_analysis_has_no_function_level_imports_of_other_layers():
    # A local import would dodge the check above until the function runs.
    import ast
    import pathlib

    import straggler.analysis

    root = pathlib.Path(straggler.analysis.__path__[0])
    found = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module and \
                    node.module.split(".")[0] in ("telemetry", "reporting", "dist", "sinks",
                                                  "timing", "detector"):
                found.append(f"{path.name}:{node.lineno} from {'.' * node.level}{node.module}")
    assert found == []
