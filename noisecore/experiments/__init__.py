"""Paper A's experiments: privacy/loss trade-off curves and stopping rules, vectorised over trials.

Both mechanisms are simulated exactly on the grid of privacy levels:

- Brownian mechanism (BM): the noise at the times T_k = psi^{-1}(eps_k) of a linear boundary
  tuned for ``tuned_epsilon`` is one Brownian motion sampled at those times (the rewind's
  joint law), so its ex-post epsilon at level k is psi(T_k) = eps_k, with failure probability delta;
- Laplace noise reduction (LNR): the Laplace process at times D1/eps_k, i.e. the Koufogiannis
  chain, one independent chain per coordinate; its ex-post epsilon is eps_k.

Stopping rules: a public hold-out set, AboveThreshold with a fixed epsilon (cost eps_N + eps_AT),
ReducedAboveThreshold with the same schedule (cost 2 eps_N, Theorem 5.1 / Corollary 5.2), and the
doubling baseline noise reduction replaces (fresh Laplace releases at eps_0 2^j, paying the sum).
The experiments are those of paper A [WWRR22], Section 6.

Modules: ``plan`` (limits, levels, checks, the chunk plan), ``samplers`` (the mechanisms' noise
paths), ``run`` (chunks and whole experiments), ``results`` (records and the join of chunks),
``defaults`` (the default task and targets). Every public name is importable from here.
"""

# names outside __all__ are re-exported too (ruff's F401 is off for this file), so every old import works
from .defaults import default_task, pilot_target, public_target
from .plan import (
    CHUNK_TRIALS,
    DEFAULT_TARGETS,
    EPSILON_MAX,
    EPSILON_MIN,
    MAX_LEVELS,
    MAX_ROWS,
    MAX_TRIALS,
    IndexArray,
    PlannedChunk,
    Progress,
    RuleKey,
    chunk_plan,
    default_epsilons,
    root_seed,
)
from .results import STOPPING_RULES, ChunkResult, ExperimentResult, StoppingResult, TradeoffResult, combine_chunks
from .run import (
    Mapper,
    experiment_chunk,
    first_true,
    planned_chunk,
    run_experiment,
    stopping_experiment,
    tradeoff_experiment,
)
from .samplers import bm_noise, lnr_noise

__all__ = [
    "DEFAULT_TARGETS",
    "STOPPING_RULES",
    "ChunkResult",
    "ExperimentResult",
    "StoppingResult",
    "TradeoffResult",
    "chunk_plan",
    "combine_chunks",
    "default_epsilons",
    "default_task",
    "experiment_chunk",
    "pilot_target",
    "planned_chunk",
    "public_target",
    "run_experiment",
    "stopping_experiment",
    "tradeoff_experiment",
]

# The public functions and classes keep this package as their home, as before the split: reprs,
# pickles (chunks sent to workers) and the API sweeps name ``noisecore.experiments.X``.
for _obj in (
    ChunkResult,
    ExperimentResult,
    StoppingResult,
    TradeoffResult,
    bm_noise,
    chunk_plan,
    combine_chunks,
    default_epsilons,
    default_task,
    experiment_chunk,
    first_true,
    lnr_noise,
    pilot_target,
    planned_chunk,
    public_target,
    root_seed,
    run_experiment,
    stopping_experiment,
    tradeoff_experiment,
):
    _obj.__module__ = __name__
del _obj
