"""SIZE arguments of the command line (--chunk-size 64K, --round-size 32M): the one parser, shared by
gpucrypt.cli and gpucrypt.mpi without either importing the other."""

from __future__ import annotations

import click

_UNITS = {"": 1, "k": 1024, "kib": 1024, "m": 1 << 20, "mib": 1 << 20}


def parse_size(text: str) -> int:
    """Bytes from '65536', '64K', '1M' (binary units); click.BadParameter for anything else."""
    number = text.strip().lower()
    suffix = number.lstrip("0123456789")
    digits = number[:len(number) - len(suffix)]
    if not digits or suffix not in _UNITS:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 65536, 64K, 1M)")
    return int(digits) * _UNITS[suffix]
