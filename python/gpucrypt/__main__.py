"""`python -m gpucrypt` runs the CLI."""

from gpucrypt.cli import main

if __name__ == "__main__":
    main()
