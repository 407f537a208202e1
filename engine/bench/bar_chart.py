"""Grouped bar charts drawn pixel by pixel, with a 5×7 bitmap font (no dependencies).

Owns: a small RGB `Canvas` (rectangles and text), the hand-drawn font, and
`grouped_bar_chart`, which lays out a title, a y axis with ticks, bars grouped by
category and coloured by series, value labels and a legend. Must not touch: the PNG
bytes (`png_encoder`), the numbers' meaning (`charts`).

Text is drawn in capitals (the font has no lowercase); characters without a glyph are
drawn as `?`. Layout is fixed-size and simple by design: it only has to make a benchmark
report readable when matplotlib is not installed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engine.bench.png_encoder import Pixel, encode_png

# Each glyph is 7 rows of 5 bits, the high bit on the left.
FONT: dict[str, tuple[int, ...]] = {
    " ": (0, 0, 0, 0, 0, 0, 0),
    "A": (14, 17, 17, 31, 17, 17, 17), "B": (30, 17, 17, 30, 17, 17, 30),
    "C": (14, 17, 16, 16, 16, 17, 14), "D": (30, 17, 17, 17, 17, 17, 30),
    "E": (31, 16, 16, 30, 16, 16, 31), "F": (31, 16, 16, 30, 16, 16, 16),
    "G": (14, 17, 16, 23, 17, 17, 15), "H": (17, 17, 17, 31, 17, 17, 17),
    "I": (14, 4, 4, 4, 4, 4, 14), "J": (7, 2, 2, 2, 2, 18, 12),
    "K": (17, 18, 20, 24, 20, 18, 17), "L": (16, 16, 16, 16, 16, 16, 31),
    "M": (17, 27, 21, 21, 17, 17, 17), "N": (17, 17, 25, 21, 19, 17, 17),
    "O": (14, 17, 17, 17, 17, 17, 14), "P": (30, 17, 17, 30, 16, 16, 16),
    "Q": (14, 17, 17, 17, 21, 18, 13), "R": (30, 17, 17, 30, 20, 18, 17),
    "S": (15, 16, 16, 14, 1, 1, 30), "T": (31, 4, 4, 4, 4, 4, 4),
    "U": (17, 17, 17, 17, 17, 17, 14), "V": (17, 17, 17, 17, 17, 10, 4),
    "W": (17, 17, 17, 21, 21, 21, 10), "X": (17, 17, 10, 4, 10, 17, 17),
    "Y": (17, 17, 10, 4, 4, 4, 4), "Z": (31, 1, 2, 4, 8, 16, 31),
    "0": (14, 17, 19, 21, 25, 17, 14), "1": (4, 12, 4, 4, 4, 4, 14),
    "2": (14, 17, 1, 2, 4, 8, 31), "3": (31, 2, 4, 2, 1, 17, 14),
    "4": (2, 6, 10, 18, 31, 2, 2), "5": (31, 16, 30, 1, 1, 17, 14),
    "6": (6, 8, 16, 30, 17, 17, 14), "7": (31, 1, 2, 4, 8, 8, 8),
    "8": (14, 17, 17, 14, 17, 17, 14), "9": (14, 17, 17, 15, 1, 2, 12),
    ".": (0, 0, 0, 0, 0, 12, 12), ",": (0, 0, 0, 0, 12, 4, 8),
    ":": (0, 12, 12, 0, 12, 12, 0), "-": (0, 0, 0, 31, 0, 0, 0),
    "_": (0, 0, 0, 0, 0, 0, 31), "/": (1, 1, 2, 4, 8, 16, 16),
    "(": (2, 4, 8, 8, 8, 4, 2), ")": (8, 4, 2, 2, 2, 4, 8),
    "%": (24, 25, 2, 4, 8, 19, 3), "+": (0, 4, 4, 31, 4, 4, 0),
    "=": (0, 0, 31, 0, 31, 0, 0), "?": (14, 17, 1, 2, 4, 0, 4),
    "×": (0, 17, 10, 4, 10, 17, 0), "µ": (0, 17, 17, 17, 19, 29, 16),
    "'": (4, 4, 8, 0, 0, 0, 0), "–": (0, 0, 0, 31, 0, 0, 0), "&": (12, 18, 20, 8, 21, 18, 13),
}
GLYPH_WIDTH, GLYPH_HEIGHT = 5, 7

WHITE: Pixel = (255, 255, 255)
BLACK: Pixel = (30, 30, 30)
GREY: Pixel = (200, 200, 200)
SERIES_COLOURS: tuple[Pixel, ...] = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
)


class Canvas:
    """A width × height RGB image, white to start, origin at the top left."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.rows: list[list[Pixel]] = [[WHITE] * width for _ in range(height)]

    def fill_rectangle(self, left: int, top: int, width: int, height: int, colour: Pixel) -> None:
        """Fill a rectangle, clipped to the canvas."""
        for y in range(max(0, top), min(self.height, top + height)):
            row = self.rows[y]
            for x in range(max(0, left), min(self.width, left + width)):
                row[x] = colour

    def draw_text(self, left: int, top: int, text: str, colour: Pixel = BLACK,
                  scale: int = 1) -> int:
        """Draw `text` in capitals; return the x just after it."""
        x = left
        for character in text.upper():
            glyph = FONT.get(character, FONT["?"])
            for row_index, bits in enumerate(glyph):
                for column in range(GLYPH_WIDTH):
                    if bits & (1 << (GLYPH_WIDTH - 1 - column)):
                        self.fill_rectangle(
                            x + column * scale, top + row_index * scale, scale, scale, colour
                        )
            x += (GLYPH_WIDTH + 1) * scale
        return x

    def to_png(self) -> bytes:
        """The canvas as PNG bytes."""
        return encode_png(self.rows)


def text_width(text: str, scale: int = 1) -> int:
    """Pixel width of `text` drawn at `scale`.

    >>> text_width("ab"), text_width("ab", scale=2)
    (12, 24)
    """
    return len(text) * (GLYPH_WIDTH + 1) * scale


def nice_step(maximum: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 × 10^k) so `ticks` steps cover `maximum`.

    >>> nice_step(97.0), nice_step(0.013), nice_step(0.0)
    (20.0, 0.005, 1.0)
    """
    if maximum <= 0:
        return 1.0
    raw = maximum / ticks
    power = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if raw <= multiple * power:
            return float(f"{multiple * power:.12g}")
    return float(10 * power)


def format_value(value: float) -> str:
    """A compact label for a bar or a tick.

    >>> format_value(1234567), format_value(8000), format_value(12.34), format_value(0.0123)
    ('1.23M', '8K', '12.3', '0.0123')
    """
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.3g}M"
    if magnitude >= 1e3:
        return f"{value / 1e3:.3g}K"
    return f"{value:.3g}"


@dataclass(frozen=True, slots=True)
class ValueAxis:
    """The y axis: its range, its ticks, and where a value lands on it (0 = bottom, 1 = top).

    >>> axis = ValueAxis.fit([3.0, 97.0], logarithmic=False)
    >>> axis.ticks(), axis.fraction(50.0)
    ([0.0, 20.0, 40.0, 60.0, 80.0, 100.0], 0.5)
    >>> axis = ValueAxis.fit([0.2, 150.0], logarithmic=True)
    >>> axis.ticks(), axis.fraction(10.0)
    ([0.1, 1.0, 10.0, 100.0, 1000.0], 0.5)
    """

    bottom: float
    top: float
    logarithmic: bool
    step: float = 1.0

    @classmethod
    def fit(cls, values: Sequence[float], logarithmic: bool) -> ValueAxis:
        """The smallest round axis holding `values` (log axes need positive values)."""
        positive = [value for value in values if value > 0]
        if logarithmic and positive:
            low = math.floor(math.log10(min(positive)))
            high = max(low + 1, math.ceil(math.log10(max(positive))))
            return cls(10.0 ** low, 10.0 ** high, True)
        step = nice_step(max(values, default=0.0))
        return cls(0.0, step * max(1, math.ceil(max(values, default=0.0) / step)), False, step)

    def ticks(self) -> list[float]:
        """Tick values from bottom to top: powers of ten, or multiples of the step."""
        if self.logarithmic:
            low, high = round(math.log10(self.bottom)), round(math.log10(self.top))
            return [float(f"{10.0 ** power:.12g}") for power in range(low, high + 1)]
        return [tick * self.step for tick in range(round(self.top / self.step) + 1)]

    def fraction(self, value: float) -> float:
        """Where `value` lands, clamped to [0, 1]."""
        if self.logarithmic:
            if value <= 0:
                return 0.0
            span = math.log10(self.top) - math.log10(self.bottom)
            where = (math.log10(value) - math.log10(self.bottom)) / span
        else:
            where = value / self.top if self.top else 0.0
        return min(1.0, max(0.0, where))


@dataclass(frozen=True, slots=True)
class BarSeries:
    """One coloured series: a name and one value per category (None = no bar)."""

    name: str
    values: tuple[float | None, ...]


def grouped_bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[BarSeries],
    unit: str,
    logarithmic: bool = False,
) -> Canvas:
    """Draw bars grouped by category, one colour per series, with axis and legend.

    A logarithmic axis suits values that span orders of magnitude (query latencies)."""
    bar_width, bar_gap, group_gap = 14, 2, 26
    group_width = len(series) * (bar_width + bar_gap) - bar_gap
    label_rows = 2
    plot_left, plot_top = 70, 40
    plot_height = 260
    plot_width = max(300, len(categories) * (group_width + group_gap) + group_gap)
    slot = max(group_width + group_gap, (plot_width - group_gap) // max(1, len(categories)))
    width = max(plot_left + plot_width + 20, plot_left + text_width(title, scale=2) + 20)
    height = plot_top + plot_height + 18 + label_rows * 10 + 16 + 14 * len(series) + 10
    canvas = Canvas(width, height)
    canvas.draw_text(plot_left, 10, title, scale=2)
    values = [value for one in series for value in one.values if value is not None]
    axis = ValueAxis.fit(values, logarithmic)
    for tick_value in axis.ticks():
        y = plot_top + plot_height - int(plot_height * axis.fraction(tick_value))
        canvas.fill_rectangle(plot_left, y, plot_width, 1, GREY)
        label = format_value(tick_value)
        canvas.draw_text(plot_left - 6 - text_width(label), y - 3, label)
    canvas.draw_text(4, plot_top - 14, unit + (" (LOG)" if axis.logarithmic else ""))
    canvas.fill_rectangle(plot_left, plot_top, 1, plot_height + 1, BLACK)
    canvas.fill_rectangle(plot_left, plot_top + plot_height, plot_width, 1, BLACK)
    for index, category in enumerate(categories):
        group_left = plot_left + group_gap + index * slot
        for number, one in enumerate(series):
            value = one.values[index] if index < len(one.values) else None
            if value is None:
                continue
            bar_height = int(plot_height * axis.fraction(value))
            x = group_left + number * (bar_width + bar_gap)
            colour = SERIES_COLOURS[number % len(SERIES_COLOURS)]
            canvas.fill_rectangle(x, plot_top + plot_height - bar_height, bar_width,
                                  bar_height, colour)
        label_top = plot_top + plot_height + 6 + (index % label_rows) * 10
        label = category[: max(3, slot * label_rows // (GLYPH_WIDTH + 1) - 1)]
        canvas.draw_text(group_left, label_top, label)
    legend_top = plot_top + plot_height + 18 + label_rows * 10
    for number, one in enumerate(series):
        top = legend_top + number * 14
        canvas.fill_rectangle(plot_left, top, 10, 8, SERIES_COLOURS[number % len(SERIES_COLOURS)])
        canvas.draw_text(plot_left + 16, top, one.name)
    return canvas
