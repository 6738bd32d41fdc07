"""scripts/setup as a new user meets it (issue 37 item 2): apt without recommended packages, a
word before the long compile and pip's progress during it, and a README that lists every
package set-up installs."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETUP = (REPO / "scripts" / "setup").read_text()


def test_apt_never_installs_recommends():
    installs = re.findall(r"apt-get install -y[^\n;}]*", SETUP)   # the commands, not the echo
    assert installs
    for command in installs:
        assert "--no-install-recommends" in command, command


def test_the_compile_is_announced_and_not_silent():
    assert "building the C++ core" in SETUP
    build_lines = [line for line in SETUP.splitlines() if "pip install" in line and "--no-build-isolation" in line]
    assert build_lines
    for line in build_lines:
        assert "build_flags" in line and "-q" not in line.replace("pip_flags", "")
    assert re.search(r"build_flags=\(-v\b", SETUP)


def test_readme_lists_what_setup_installs():
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### What set-up installs"):]
    section = section[:section.index("\n## ")]
    packages = set(re.findall(r"need_apt\+=\(([a-z0-9.+-]+)\)", SETUP)) | {"libdigest-sha3-perl"}
    assert {"g++", "cmake", "chromium", "openmpi-bin", "pocl-opencl-icd"} <= packages
    for package in packages:
        assert f"`{package}`" in section, package
    assert "minutes" in section      # how long it takes
