"""Rectangles, routes and the picture's spacing, in SVG user units (pixels at 100 %)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Width of one character of the 12 px sans-serif labels (a generous average, so text fits).
CHAR_WIDTH = 7.2
NODE_HEIGHT = 42.0
NODE_MIN_WIDTH = 128.0
#: Inside a container: padding, the caption's height, and the band a loop's back edge runs in.
PAD = 12.0
TITLE_HEIGHT = 22.0
LOOP_BAND = 20.0
#: Gaps: between sequence members, between a group's batches, between members of one batch.
SEQUENCE_GAP = 40.0
BATCH_GAP = 36.0
STACK_GAP = 12.0
#: Between top-level columns (ranks) and between blocks of one column.
RANK_GAP = 76.0
ROW_GAP = 28.0
#: Distance between the lanes that long and backward edges run in, above and below everything.
LANE = 16.0
MARGIN = 16.0
START_SIZE = 22.0


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle."""

    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        """Its right edge."""
        return self.x + self.w

    @property
    def bottom(self) -> float:
        """Its bottom edge."""
        return self.y + self.h

    @property
    def cx(self) -> float:
        """Its horizontal centre."""
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        """Its vertical centre."""
        return self.y + self.h / 2

    def crossed_by(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """Whether the axis-aligned segment a-b passes through the inside (not just the border)."""
        (x1, y1), (x2, y2) = a, b
        left, right = min(x1, x2), max(x1, x2)
        top, bottom = min(y1, y2), max(y1, y2)
        inside_x = left < self.right - 1 and right > self.x + 1
        inside_y = top < self.bottom - 1 and bottom > self.y + 1
        return inside_x and inside_y


@dataclass
class Route:
    """An edge as drawn: a polyline of axis-aligned segments, from source to target."""

    source: str
    target: str
    kind: str  # start | next | transition | sequence | loop
    label: str = ""
    points: list[tuple[float, float]] = field(default_factory=list)

    def segments(self) -> list[tuple[tuple[float, float], tuple[float, float]]]:
        """Each straight piece of the polyline."""
        return list(zip(self.points, self.points[1:], strict=False))


def text_width(*lines: str) -> float:
    """How wide the longest line is drawn."""
    return CHAR_WIDTH * max((len(line) for line in lines), default=0)
