"""The README's Python examples run as written (issue 37 item 6: one failed with NameError), in a
fresh interpreter and an empty directory. Blocks that need a GPU (CuPy, device="cuda", an
OpenCL GPU) run only where one is present: on the GPU machine's suite."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
GPU_ONLY = re.compile(r"cupy|device=\"cuda|opencl:1")


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_readme_python_block_runs(number, tmp_path):
    block = BLOCKS[number]
    if GPU_ONLY.search(block):
        import gpucrypt
        if not any(d["kind"] == "cuda" for d in gpucrypt.devices()):
            pytest.skip("a GPU example (no CUDA device here)")
        if "cupy" in block:
            pytest.importorskip("cupy")
        # The GPU examples use names the first block defines (key, iv, ...).
        block = BLOCKS[0] + "\nkey32, nonce, messages = key, os.urandom(12), [b'a', b'b']\n" + block
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"README block {number}:\n{block}\n{done.stderr}"
