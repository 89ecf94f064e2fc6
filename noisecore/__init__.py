"""noisecore: exact noise distributions and noise-reduction mechanisms for differential privacy.

Depends on numpy and scipy only.
"""

from .arete import Arete, AreteShare
from .distributions import Gaussian, Laplace, Staircase

__all__ = ["Arete", "AreteShare", "Gaussian", "Laplace", "Staircase"]
__version__ = "0.1.0"
