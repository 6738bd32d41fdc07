"""The `gpucrypt` console script's entry point, outside the gpucrypt package.

Importing anything inside gpucrypt runs gpucrypt/__init__.py first (the native module, pyca's
exceptions: ~10 ms), so `gpucrypt --version` is answered here, before that, and every other
command goes on to gpucrypt.__main__. The version is stated here once; gpucrypt.__version__ is
this VERSION.
"""

import sys

VERSION = "0.1.0"


def main(argv=None) -> None:
    """Console entry point: a lone --version is printed here; anything else is gpucrypt.__main__.main."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"] and sys.stdout is not None:   # (with stdout closed, cli.main reports it)
        print(f"gpucrypt {VERSION}")
        return
    from gpucrypt.__main__ import main as gpucrypt_main
    gpucrypt_main(argv)
