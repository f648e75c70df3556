"""Draws docs/benchmarks.png from the chart data that bench/render/chart.ts computed (argv[1], JSON) into argv[2]."""
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


MODE_COLORS = ["#8c6bb1", "#e08214", "#1b9e77"]


def not_measured(ax):
    ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def meta_speedups(ax, meta):
    """Item 6: one group per workload and state, one bar per cached mode; error bars: range over pairs of passes."""
    ax.set_title(meta["title"] if meta else "6. Metadata-heavy work", fontsize=10, loc="left")
    if not meta or not meta["groups"]:
        not_measured(ax)
        return
    modes, groups = meta["modes"], meta["groups"]
    height = 0.8 / len(modes)
    ends = []
    for j, mode in enumerate(modes):
        ys, med, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            y = (len(groups) - 1 - i) + (len(modes) / 2 - j - 0.5) * height
            b = g["bars"][j]
            if b is None:
                ax.text(1, y, " failed", va="center", fontsize=7, color="#c8553d")
                continue
            ys.append(y)
            med.append(b["median"])
            lo.append(b["median"] - b["low"])
            hi.append(b["high"] - b["median"])
            ax.text(b["high"], y, " " + b["text"], va="center", fontsize=7)
            ends += [b["low"], b["high"]]
        ax.barh(ys, med, height=height * 0.92, color=MODE_COLORS[j % len(MODE_COLORS)], label=mode,
                xerr=[lo, hi], error_kw=dict(ecolor="#333", elinewidth=0.8, capsize=2))
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    if ends:
        ax.set_xlim(min(min(ends), 1) / 1.5, max(ends) * 3)
    ax.axvline(1, color="#444", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(groups)), [g["label"] for g in groups][::-1], fontsize=8)
    for i in range(1, len(groups)):
        ax.axhline(i - 0.5, color="#ddd", linewidth=0.6, zorder=0)
    ax.set_ylim(-0.5, len(groups) - 0.5)
    ax.set_xlabel("x (log scale; bar: ratio of medians; error bar: range over every pair of passes; dashed line: no change)",
                  fontsize=9)
    ax.legend(loc="upper right", fontsize=8, title="mode", title_fontsize=8)


def meta_avoided(ax, meta):
    avoided = meta["avoided"] if meta else None
    ax.set_title(avoided["title"] if avoided else "Origin operations avoided", fontsize=10, loc="left")
    if not avoided or not avoided["bars"]:
        not_measured(ax)
        return
    bars = avoided["bars"][::-1]
    values = [b["value"] * 100 for b in bars]
    colors = [MODE_COLORS[(len(bars) - 1 - i) % len(MODE_COLORS)] if v >= 0 else "#c8553d" for i, v in enumerate(values)]
    ax.barh(range(len(bars)), values, height=0.4, color=colors)
    ax.set_yticks(range(len(bars)), [b["label"] for b in bars], fontsize=8)
    for i, b in enumerate(bars):
        ax.text(min(0, min(values)), i + 0.25, b["text"], va="bottom", fontsize=7.5)
    ax.set_xlim(min(0, min(values)), 100)
    ax.set_ylim(-0.5, len(bars) - 0.3)
    ax.set_xlabel("% of the direct mount's origin operations", fontsize=9)


def main():
    spec = json.load(open(sys.argv[1], encoding="utf-8"))
    fig = plt.figure(figsize=(13, 16))
    grid = fig.add_gridspec(2, 2, width_ratios=[3, 2], height_ratios=[3, 2], hspace=0.45, wspace=0.25,
                            left=0.33, right=0.97, top=0.94, bottom=0.44)
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

    meta = spec.get("metadata")
    row = fig.add_gridspec(1, 2, width_ratios=[3, 1.3], wspace=0.4, left=0.15, right=0.97, top=0.36, bottom=0.04)
    meta_speedups(fig.add_subplot(row[0, 0]), meta)
    meta_avoided(fig.add_subplot(row[0, 1]), meta)

    fig.suptitle(spec["title"], fontsize=12, x=0.01, y=0.995, ha="left")
    fig.text(0.01, 0.968, spec["subtitle"], fontsize=8.5, ha="left")
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
