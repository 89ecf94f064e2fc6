"""Distributed noise when only some users contribute their share (paper B, Appendix A).

n users each add one i.i.d. share. If only m take part (fraction q = m/n), the total noise of
Arete(alpha, theta, lam) shares is Z = GG(alpha q, theta) + GG(q, lam), with GG(s, scale) the
difference of two Gamma(s, scale) (characteristic function (1 + theta^2 s^2)^(-alpha q)
(1 + lam^2 s^2)^(-q)); the Laplace part is no longer Laplace. Laplace(lam) shares give
GG(q, lam) alone. Below a total shape of 1/2 the density is infinite at 0 and no epsilon holds.

Density. Z = U1 - U2 with U_i = Gamma(a, theta) + Gamma(b, lam) i.i.d., whose density is closed
form, f_U(u) = u^(c-1) e^(-u/lam) 1F1(a; c; -(1/theta - 1/lam) u) / (Gamma(c) theta^a lam^b),
c = a + b (written with a negative argument of 1F1, swapping the roles if needed). Then
f_Z(t) = int_0^inf f_U(u) f_U(u + t) du for t >= 0: the only singularity, u^(c-1) at u = 0, is
taken by Gauss-Jacobi on an innermost piece; beyond it, geometric pieces with Gauss-Legendre.
A single Gamma-difference (one shape zero) uses its Bessel-K closed form.

Modules: ``tables`` (log 1F1 and its cached tables), ``sharesum`` (the ShareSum distribution),
``curves`` (dropout noise, points and curves). Every public name is importable from here.
"""

# names outside __all__ are re-exported too (ruff's F401 is off for this file), so every old import works
from .curves import (
    MIN_FRACTION,
    arete_dropout,
    dropout_curves,
    dropout_fractions,
    dropout_point,
    dropout_table,
    laplace_dropout,
)
from .sharesum import MAX_DISTANCE, MAX_SHAPE, MIN_DISTANCE, MIN_SCALE_RATIO, MIN_SHAPE, REACH, ShareSum

__all__ = [
    "ShareSum",
    "arete_dropout",
    "dropout_curves",
    "dropout_fractions",
    "dropout_point",
    "dropout_table",
    "laplace_dropout",
]

# The public functions and classes keep this package as their home, as before the split (reprs,
# pickles, the API sweeps).
for _obj in (ShareSum, arete_dropout, dropout_curves, dropout_fractions, dropout_point, dropout_table, laplace_dropout):
    _obj.__module__ = __name__
del _obj
