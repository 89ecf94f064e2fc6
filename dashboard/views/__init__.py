"""One Viewer per view of the lab."""

from .boundaries import BoundaryView
from .experiments import ExperimentsView
from .noise import NoiseView
from .rat import RatView
from .rewind import RewindView

__all__ = ["BoundaryView", "ExperimentsView", "NoiseView", "RatView", "RewindView"]
