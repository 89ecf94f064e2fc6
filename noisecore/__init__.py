"""noisecore: exact noise distributions and noise-reduction mechanisms for differential privacy.

Depends on numpy and scipy only.
"""

from .arete import Arete, AreteShare
from .boundaries import (
    LinearBoundary,
    MixtureBoundary,
    PrivacyBoundary,
    gaussian_composition_epsilon,
    gaussian_pdp_epsilon,
    gaussian_pdp_variance,
    gaussian_variance,
)
from .brownian import BrownianMechanism, BrownianRelease, brownian_privacy_loss
from .distributions import Gaussian, Laplace, Staircase
from .laplace_reduction import LaplaceNoiseReduction, LaplaceProcess, koufogiannis_chain
from .skellam import SkellamNoiseReduction
from .threshold import (
    AboveThreshold,
    ReducedAboveThreshold,
    ThresholdRound,
    rat_utility_margin,
    simulate_above_threshold_stopping,
    simulate_rat_stopping,
)

__all__ = [
    "AboveThreshold",
    "Arete",
    "AreteShare",
    "BrownianMechanism",
    "BrownianRelease",
    "Gaussian",
    "Laplace",
    "LaplaceNoiseReduction",
    "LaplaceProcess",
    "LinearBoundary",
    "MixtureBoundary",
    "PrivacyBoundary",
    "ReducedAboveThreshold",
    "SkellamNoiseReduction",
    "Staircase",
    "ThresholdRound",
    "brownian_privacy_loss",
    "gaussian_composition_epsilon",
    "gaussian_pdp_epsilon",
    "gaussian_pdp_variance",
    "gaussian_variance",
    "koufogiannis_chain",
    "rat_utility_margin",
    "simulate_above_threshold_stopping",
    "simulate_rat_stopping",
]
__version__ = "0.1.0"
