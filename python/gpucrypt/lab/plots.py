"""The lab's plots: a few matplotlib forms (Agg backend, no display), one PNG each.

Every bar and line carries its spread over repeats (framework.spread: the interquartile range, or
min-max below 5 repeats) as whiskers, and a plot whose quantity matches a paper's figure shows
that figure beside ours (grey, labelled "paper"). A value given without a spread is drawn as is
and the plot says so, so a missing spread is visible rather than implied.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

from gpucrypt.lab.framework import SPREAD_NOTE  # noqa: E402

DPI = 90
PAPER_COLOR = "tab:grey"


def _yerr(values: list, spreads) -> list:
    """matplotlib's asymmetric yerr from (low, high) pairs (None: no whisker)."""
    if spreads is None:
        return None
    low, high = [], []
    for value, pair in zip(values, spreads):
        lo, hi = pair if pair and pair[0] is not None and value is not None else (value, value)
        low.append(max(0.0, value - lo) if value is not None else 0.0)
        high.append(max(0.0, hi - value) if value is not None else 0.0)
    return [low, high]


def _finish(fig, ax, path: Path, title: str, xlabel: str, ylabel: str, legend: bool = True,
            note: str = SPREAD_NOTE) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    if note:
        fig.text(0.99, 0.005, note, ha="right", va="bottom", fontsize=6, color="#555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def lines(path: Path, title: str, series: dict, xlabel: str, ylabel: str, logx: bool = True,
          logy: bool = False, hline: float = None, paper: dict = None, note: str = SPREAD_NOTE) -> None:
    """``series``: label -> (xs, ys) or (xs, ys, spreads) with one (low, high) per point; sizes on
    a log2 axis by default. ``paper``: label -> (xs, ys) drawn grey and dashed, or a number drawn
    as a grey horizontal line (a figure the paper gives for every size)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, data in series.items():
        xs, ys = data[0], data[1]
        if not xs:
            continue
        err = _yerr(ys, data[2] if len(data) > 2 else None)
        ax.errorbar(xs, ys, yerr=err, marker="o", markersize=3, capsize=2, label=label)
    for label, data in (paper or {}).items():
        if isinstance(data, (int, float)):
            ax.axhline(data, color=PAPER_COLOR, linestyle="--", linewidth=1)
            ax.annotate(f"paper: {label}", (0.01, data), xycoords=("axes fraction", "data"), fontsize=7,
                        color="#444", va="bottom")
        else:
            ax.plot(data[0], data[1], linestyle="--", marker="s", markersize=3, color=PAPER_COLOR,
                    label=f"paper: {label}")
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    if hline is not None:
        ax.axhline(hline, color="black", linewidth=0.6)
    _finish(fig, ax, path, title, xlabel, ylabel, note=note)


def bars(path: Path, title: str, labels: list, values: list, ylabel: str, logy: bool = False,
         colors: list = None, spreads: list = None, note: str = SPREAD_NOTE) -> None:
    """One bar per label; ``spreads`` one (low, high) per bar (None for a paper's figure)."""
    fig, ax = plt.subplots(figsize=(min(14, max(5, 0.3 * len(labels) + 2)), 4.5))
    ax.bar(range(len(labels)), values, color=colors, yerr=_yerr(values, spreads), capsize=2)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    if logy:
        ax.set_yscale("log")
    _finish(fig, ax, path, title, "", ylabel, legend=False, note=note)


def grouped_bars(path: Path, title: str, groups: list, series: dict, ylabel: str, logy: bool = False,
                 spreads: dict = None, note: str = SPREAD_NOTE) -> None:
    """``series``: label -> one value per group (None leaves a gap); ``spreads``: label -> one
    (low, high) per group. A label starting with "paper" is drawn grey."""
    fig, ax = plt.subplots(figsize=(min(14, max(6, 0.3 * len(groups) * max(1, len(series)) + 3)), 4))
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        kept = [(g, v, (spreads or {}).get(label, [None] * len(values))[g]) for g, v in enumerate(values)
                if v is not None]
        if not kept:
            continue
        xs = [g + i * width for g, _, _ in kept]
        ys = [v for _, v, _ in kept]
        ax.bar(xs, ys, width=width, label=label, yerr=_yerr(ys, [s for _, _, s in kept]), capsize=2,
               color=PAPER_COLOR if label.startswith("paper") else None)
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
    ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
    if logy:
        ax.set_yscale("log")
    _finish(fig, ax, path, title, "", ylabel, note=note)
