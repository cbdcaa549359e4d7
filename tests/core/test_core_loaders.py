"""How _core loads its vendor libraries (csrc/driver/dynamic_library.h): once, from the environment
variable's path, and a library that loads but lacks a required entry point is unavailable with a
message naming the symbol and dlerror()'s reason."""

from __future__ import annotations

from sim.simcuda import LIBCUDA, run_python
from sim.simnvml import LIBNVML

STATUS = (
    "from straggler import _core\n"
    "print(_core.cuda_status(0))\n"
    "print(_core.nvml_status())\n"
)


def test_a_library_without_the_cuda_entry_points_names_the_first_missing_one():
    # The simulated NVML loads fine but exports no cu* function.
    out = run_python(STATUS, STRAGGLER_LIBCUDA=str(LIBNVML))
    cuda_line = out.splitlines()[0]
    assert cuda_line.startswith("(False, ")
    assert f"the CUDA driver '{LIBNVML}' lacks cuGetErrorName (symbol cuGetErrorName)" in cuda_line
    assert "undefined symbol: cuGetErrorName" in cuda_line  # dlerror(), not a stale message


def test_a_library_without_the_nvml_entry_points_names_the_first_missing_one():
    out = run_python(STATUS, STRAGGLER_LIBNVML=str(LIBCUDA))
    nvml_line = out.splitlines()[1]
    assert nvml_line.startswith("(False, ")
    assert f"NVML '{LIBCUDA}' lacks nvmlInit_v2" in nvml_line
    assert "undefined symbol: nvmlInit_v2" in nvml_line


def test_an_empty_variable_means_the_default_library_name():
    # No NVIDIA driver on a test machine: the default name does not load, and the message says
    # which name was tried (an empty STRAGGLER_LIBCUDA is not the path '').
    out = run_python(STATUS, STRAGGLER_LIBCUDA="", STRAGGLER_LIBNVML="")
    cuda_line, nvml_line = out.splitlines()[:2]
    if cuda_line.startswith("(False"):
        # No driver here: the message names the default soname it tried. On a GPU host the real
        # driver loads by that name and then sees no device (the suite hides GPUs from
        # simulator runs), so the error comes from cuInit instead.
        assert ("cannot load the CUDA driver 'libcuda.so.1'" in cuda_line
                or "cuInit(0) failed" in cuda_line), cuda_line
    if nvml_line.startswith("(False"):
        assert "'libnvidia-ml.so.1'" in nvml_line
