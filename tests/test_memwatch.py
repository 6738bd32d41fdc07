"""The conftest's GPUCRYPT_TEST_MEMWATCH knob (a diagnostic for GPU runs): one line per test with
the available host memory the library reads, then the kernel's and the process's own figures."""
import os
import subprocess
import sys
import textwrap


def test_memwatch_writes_one_line_per_test(tmp_path):
    (tmp_path / "test_two.py").write_text(textwrap.dedent("""
        def test_a():
            pass

        def test_b():
            pass
    """))
    watch = tmp_path / "memwatch.tsv"
    conftest = os.path.join(os.path.dirname(__file__), "conftest.py")
    (tmp_path / "conftest.py").write_text(open(conftest, encoding="utf-8").read())
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_two.py")],
                            cwd=tmp_path, env={**os.environ, "GPUCRYPT_TEST_MEMWATCH": str(watch)},
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split("\t") for line in watch.read_text().splitlines()]
    assert [test_id.split("::")[1] for test_id, _, _ in lines] == ["test_a", "test_b"]
    for _, available, figures in lines:   # a byte count on Linux (MemAvailable), "None" where unknown
        assert available == "None" or int(available) > 0
        named = dict(field.split("=") for field in figures.split())   # MiB, from /proc (Linux)
        assert int(named["MemAvailable"]) > 0 and int(named["VmRSS"]) > 0
