"""replica.symbolic.listwise against the numerical listwise / margin functions and mpmath."""
import mpmath as mp
import numpy as np
import pytest

import replica
from replica.finite_capacity import alpha_c_margin_limit
from replica.listwise import gardner_energy as gardner_numeric
from replica.listwise import gaussian_tail_mean as tail_mean_numeric
from replica.symbolic import (gardner_energy, gaussian_tail_mean, margin_capacity, tam_capacity,
                              tam_capacity_small_tail)
from replica.symbolic.listwise import CHECKS


def test_gardner_energy_against_the_numerical_function_and_mpmath_quadrature():
    G = gardner_energy()
    c = np.linspace(-2.0, 6.0, 17)
    # both are the closed form in double precision: agreement to a few ulps of values O(1..40)
    assert np.allclose(G(c), gardner_numeric(c), rtol=1e-13, atol=0)
    for ci in (-1.5, 0.3, 2.0):       # oracle: E[(c - Z)_+^2] by mpmath quadrature at 30 digits
        with mp.workdps(30):
            q = mp.quad(lambda z: (ci - z) ** 2 * mp.npdf(z), [-mp.inf, ci])
        assert float(G.evalf(ci, dps=30)) == pytest.approx(float(q), rel=1e-25)


def test_tail_mean_and_tam_capacity_against_the_numerical_functions():
    tau = np.array([1e-6, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.9])
    # erfinv / ndtri agree to ~1e-15 relative; kappa_tau and 1/Gamma inherit it (condition ~1)
    assert np.allclose(gaussian_tail_mean()(tau), tail_mean_numeric(tau), rtol=1e-12)
    A = tam_capacity()
    for gam in (0.0, 0.1, 1.0):
        assert np.allclose(A(tau, gam), replica.tam_capacity(tau, margin=gam), rtol=1e-12)


def test_margin_capacity_matches_the_numerical_limit():
    g = np.linspace(0, 3, 7)
    assert np.allclose(margin_capacity()(g), alpha_c_margin_limit(g), rtol=1e-15)


def test_small_tail_expansion_converges_to_the_exact_law():
    # the relative error of the 4-term law falls with L like (ln L)^2 / L^3 (its remainder / 2L)
    A = tam_capacity()
    errs = []
    for L in (20.0, 40.0, 80.0):        # tau >= 1e-35: 1 - 2 tau is exact at 50 digits
        tau = mp.exp(-L)
        with mp.workdps(50):
            exact = 1 / mp.mpf(str(A.evalf(str(tau), 0, dps=50)))
        errs.append(abs(float(exact) - tam_capacity_small_tail()(L)) / float(exact))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-5        # measured 7.8e-5, -, 1.3e-6
    with pytest.raises(ValueError, match="terms must be 1, 2, 3 or 4"):
        tam_capacity_small_tail(5)


@pytest.mark.parametrize("name, check", CHECKS, ids=[n for n, _ in CHECKS])
def test_listwise_checks_pass(name, check):
    ok, detail = check()
    assert ok, detail
