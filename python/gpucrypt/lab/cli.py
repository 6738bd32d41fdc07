"""`gpucrypt lab`: list and run the seed papers' experiments (registered in gpucrypt/cli.py)."""

from __future__ import annotations

import click

import gpucrypt


@click.group("lab")
def lab_command():
    """Re-run the seed papers' experiments on this machine (docs/lab.md).

    Writes results.json, PNG plots and a self-contained report.html with the papers' figures
    beside this machine's. Parts needing hardware this machine lacks are reported as skipped.
    """


@lab_command.command("list")
def list_command():
    """The experiments, in report order."""
    from gpucrypt import lab
    for name, paper, title in lab.list_experiments():
        click.echo(f"{name:22s} {title}")


@lab_command.command("run")
@click.argument("experiments", nargs=-1, required=True)
@click.option("--device", default="auto", show_default=True,
              help="auto (the first CUDA GPU if present), cpu (device parts skipped), cuda[:N], or "
                   "opencl[:N] (the OpenCL parts of nishikawa-throughput and claes-crossover, and the "
                   "Batch / stream-engine parts of the others, on that device; CUDA-only parts skipped).")
@click.option("--quick", is_flag=True, help="Reduced sizes and repetitions (minutes on a small CPU machine).")
@click.option("--out", "out", default="lab-report", show_default=True, type=click.Path(file_okay=False),
              help="Directory for results.json, the PNG plots and report.html. An earlier report there "
                   "(same machine, device and --quick) is merged into: the experiments run now replace "
                   "theirs, the others are kept; one of another kind is refused.")
def run_command(experiments, device, quick, out):
    """Run EXPERIMENTS (names from `gpucrypt lab list`, or `all`)."""
    from gpucrypt import lab
    try:
        results = lab.run(experiments, device=device, quick=quick, out=out)
    except (ValueError, gpucrypt.DeviceError) as error:
        raise click.UsageError(str(error)) from error
    failed = [e["name"] for e in results["experiments"] if e["status"] == "failed"]
    for e in results["experiments"]:
        click.echo(f"{e['name']:22s} {e['status']:8s} {e['seconds']:7.1f} s  {e['reason'] or ''}")
    click.echo(f"report: {out}/report.html")
    if failed:
        raise SystemExit(1)
