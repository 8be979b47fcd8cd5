"""Plot helpers: matplotlib (Agg) figures rendered to inline SVG strings for the report.

matplotlib is imported at the first figure, not with the claim modules: a command that draws nothing (a cached run,
``verify show``) does not pay for pyplot's start-up."""
from __future__ import annotations

import functools
import io


@functools.cache
def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.figsize": (5.2, 3.4), "font.size": 9, "svg.fonttype": "none",
                         "axes.spines.top": False, "axes.spines.right": False,
                         # a fixed salt for the SVG's clip-path and glyph ids: the same run gives the same bytes
                         "svg.hashsalt": "attention-verify"})
    return plt


def new_figure():
    return pyplot().subplots()


def label(ax, xlabel: str, ylabel: str | None = None, title: str | None = None, *, title_size: float | None = None,
          legend: float | None = 7) -> None:
    """An axes' labels, its title (at ``title_size`` when given) and its legend (at font size ``legend``; none when
    ``None``), in that order."""
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
    if legend is not None:
        ax.legend(fontsize=legend)


def to_svg(fig) -> str:
    """Render and close ``fig``; strip the XML prolog so the SVG can be inlined in HTML."""
    buf = io.StringIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg", metadata={"Date": None})  # no timestamp in the record
    pyplot().close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]
