"""`python -m gpucrypt` and the `gpucrypt` command (entry point `gpucrypt.__main__:main`)."""

import sys

import gpucrypt

# `gpucrypt --version`'s answer, also what cli.py's --version option prints.
VERSION_LINE = f"gpucrypt {gpucrypt.__version__}"


def main(argv=None) -> None:
    """Console entry point: gpucrypt.cli.main, except that a lone --version is answered before
    the command framework (click and every command's modules, ~30 ms) is imported."""
    # (Not with stdout closed: cli.main reports that as an error.)
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"] and sys.stdout is not None:
        print(VERSION_LINE)
        return
    from gpucrypt.cli import main as cli_main
    cli_main(argv)


if __name__ == "__main__":
    main()
