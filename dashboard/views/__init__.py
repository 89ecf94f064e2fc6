"""One Viewer per view of the lab."""

from .boundaries import BoundaryView
from .noise import NoiseView
from .rat import RatView
from .rewind import RewindView

__all__ = ["BoundaryView", "NoiseView", "RatView", "RewindView"]
