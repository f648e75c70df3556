"""Draws docs/benchmarks.png from the chart data that bench/render.ts computed (argv[1], JSON) into argv[2]."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402


def bars(ax, items, fmt, title, xlabel, log=False, ref=None):
    ax.set_title(title, fontsize=10, loc="left")
    if not items:
        ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    labels = [i["label"] for i in items][::-1]
    values = [i["value"] for i in items][::-1]
    colors = ["#2a7ab9" if v >= 1 or ref is not None else "#c8553d" for v in values]
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)), labels, fontsize=8)
    if log:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    if ref is not None:
        ax.axvline(ref, color="#444", linestyle="--", linewidth=1)
    else:
        ax.axvline(1, color="#444", linestyle="--", linewidth=1)
    for i, v in enumerate(values):
        ax.text(v, i, " " + fmt(v), va="center", fontsize=8)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.margins(x=0.25)


def main():
    spec = json.load(open(sys.argv[1], encoding="utf-8"))
    fig = plt.figure(figsize=(13, 9.5))
    grid = fig.add_gridspec(2, 2, width_ratios=[3, 2], height_ratios=[3, 2], hspace=0.45, wspace=0.25)
    bars(fig.add_subplot(grid[0, :]), spec["speedups"], lambda v: f"{v:.1f}x",
         "Speed-up over the baseline (baseline time / cached time)", "x (log scale; dashed line: no change)", log=True)
    bars(fig.add_subplot(grid[1, 0]), [dict(i, value=i["value"] * 100) for i in spec["ceilings"]],
         lambda v: f"{v:.0f} %", "Cached speed as a share of the lab's ceiling", "% of the ceiling", ref=100)

    ax = fig.add_subplot(grid[1, 1])
    ax.set_title("Synthesis: template size by fleet size", fontsize=10, loc="left")
    synth = spec["synth"]
    if synth:
        names = [f"{s['nodes']}" + ("" if s["dashboard"] else "*") for s in synth]
        ax.bar(names, [s["kib"] for s in synth], color="#2a7ab9")
        ax.axhline(spec["limitKiB"], color="#c8553d", linestyle="--", linewidth=1)
        ax.text(-0.4, spec["limitKiB"], " CloudFormation limit", va="bottom", fontsize=8, color="#c8553d")
        for i, s in enumerate(synth):
            ax.text(i, s["kib"], f"{s['kib']:.0f} KiB\n{s['seconds']:.2f} s", ha="center", va="bottom", fontsize=8)
        refused = ", ".join(str(n) for n in spec.get("synthRefused", []))
        ax.set_xlabel("cache nodes (* without the dashboard)" + (f"; {refused}: does not synthesize" if refused else ""), fontsize=9)
        ax.set_ylabel("template KiB", fontsize=9)
        ax.margins(y=0.25)
    else:
        ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()

    fig.suptitle(spec["title"], fontsize=12, x=0.01, ha="left")
    fig.text(0.01, 0.935, spec["subtitle"], fontsize=8.5, ha="left")
    fig.subplots_adjust(left=0.33, right=0.97, top=0.9, bottom=0.07)
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
