"""The lab's plots: a few matplotlib forms (Agg backend, no display), one PNG each."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

DPI = 90


def _finish(fig, ax, path: Path, title: str, xlabel: str, ylabel: str, legend: bool = True) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def lines(path: Path, title: str, series: dict, xlabel: str, ylabel: str, logx: bool = True,
          logy: bool = False, hline: float = None) -> None:
    """``series``: label -> (xs, ys); sizes on a log2 axis by default."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, (xs, ys) in series.items():
        if xs:
            ax.plot(xs, ys, marker="o", markersize=3, label=label)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    if hline is not None:
        ax.axhline(hline, color="grey", linewidth=0.8)
    _finish(fig, ax, path, title, xlabel, ylabel)


def bars(path: Path, title: str, labels: list, values: list, ylabel: str, logy: bool = False,
         colors: list = None) -> None:
    fig, ax = plt.subplots(figsize=(min(14, max(5, 0.3 * len(labels) + 2)), 4.5))
    ax.bar(range(len(labels)), values, color=colors)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    if logy:
        ax.set_yscale("log")
    _finish(fig, ax, path, title, "", ylabel, legend=False)


def grouped_bars(path: Path, title: str, groups: list, series: dict, ylabel: str, logy: bool = False) -> None:
    """``series``: label -> one value per group (None leaves a gap)."""
    fig, ax = plt.subplots(figsize=(min(14, max(6, 0.3 * len(groups) * max(1, len(series)) + 3)), 4))
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        xs = [g + i * width for g, v in enumerate(values) if v is not None]
        ax.bar(xs, [v for v in values if v is not None], width=width, label=label)
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
    ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
    if logy:
        ax.set_yscale("log")
    _finish(fig, ax, path, title, "", ylabel)
