"""The browser writes the rewind's readout while it plays; the server writes it at every other time. Both
must print each number alike: the browser's formatter (``FORMAT_JS``) against ``dashboard.claims.fmt`` over
7,000 numbers from 1e-9 to 1e9, both signs, at the readout's 3 and 4 significant digits."""

import json

import numpy as np
import pytest

from dashboard.claims import fmt
from dashboard.views.rewind import FORMAT_JS

pytestmark = pytest.mark.ui


def test_the_browser_formats_numbers_as_the_server_does(page):
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [10 ** rng.uniform(-9, 9, 3000), -(10 ** rng.uniform(-9, 9, 500)), [0.0, 1.0, 9.9995, 5e-5, 1e-4, 99999.5]]
    )
    values = [float(v) for v in values]
    shown = page.evaluate(
        f"(values) => {{ const f = {FORMAT_JS}; return values.flatMap(v => [f(v, 3), f(v, 4)]); }}", values
    )
    expected = [fmt(v, p) for v in values for p in (3, 4)]
    differ = [(v, js, py) for v, js, py in zip(np.repeat(values, 2), shown, expected, strict=True) if js != py]
    assert differ == [], json.dumps(differ[:5])
    assert page.evaluate(f"() => ({FORMAT_JS})(NaN, 3)") == fmt(float("nan"), 3) == "n/a"
