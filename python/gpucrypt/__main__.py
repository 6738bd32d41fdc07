"""`python -m gpucrypt` and the `gpucrypt` command (its entry point `gpucrypt_entry:main` answers a lone
--version itself and calls main() here for everything else)."""

import sys

import gpucrypt

# `gpucrypt --version`'s answer, also what cli.py's --version option prints.
VERSION_LINE = f"gpucrypt {gpucrypt.__version__}"


def main(argv=None) -> None:
    """Console entry point: gpucrypt.cli.main, except that a lone --version and a plain
    `inspect [--json] FILE` are answered before the command framework (click and every command's
    modules, ~30 ms) is imported."""
    # (Not with stdout closed: cli.main reports that as an error.)
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"] and sys.stdout is not None:
        print(VERSION_LINE)
        return
    # `inspect FILE` too: the budget is 50 ms, and click with every command's modules is ~40.
    if args[:1] == ["inspect"] and sys.stdout is not None:
        from gpucrypt import inspection
        if inspection.answer_without_click(args[1:]):
            return
    from gpucrypt.cli import main as cli_main
    cli_main(argv)


if __name__ == "__main__":
    main()
