"""CallbackOptions: the Lightning callback's parameters checked with no Lightning imported."""

from __future__ import annotations

import pytest
from straggler.integrations.callback_options import CallbackOptions, scores_to_print

from _fresh import fresh_python


def test_defaults_are_nvrx_and_nemo_values_normalized_to_floats():
    opts = CallbackOptions(report_time_interval=60, sync_timeout_s=5)
    assert opts.report_time_interval == 60.0 and isinstance(opts.report_time_interval, float)
    assert isinstance(opts.sync_timeout_s, float)
    assert opts.scores_to_compute == ["relative_perf_scores", "individual_perf_scores"]
    assert CallbackOptions(calc_relative_gpu_perf=False).scores_to_compute == [
        "individual_perf_scores"]


@pytest.mark.parametrize("kwargs, match", [
    ({"report_time_interval": -1}, r"`report_time_interval=-1`"),
    ({"calc_relative_gpu_perf": False, "calc_individual_gpu_perf": False}, "at least one"),
    ({"gpu_relative_perf_threshold": 1.5}, r"`gpu_relative_perf_threshold=1\.5`"),
    ({"exit_code": 256}, r"`exit_code=256`"),
    ({"exit_code": True}, r"`exit_code=True`"),
    ({"node_name": ""}, r"`node_name=''`"),
    ({"ft_sections": "maybe"}, r"`ft_sections='maybe'`"),
    ({"ft_options": ["x"]}, r"`ft_options=\['x'\]`"),
])
def test_a_bad_value_is_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CallbackOptions(**kwargs)


def test_the_nvrx_alias_of_scores_to_print():
    assert scores_to_print(5) == 5
    assert scores_to_print(5, 3) == 3  # the alias wins over the default
    assert scores_to_print(3, 3) == 3
    with pytest.raises(ValueError, match="disagree"):
        scores_to_print(2, 3)


def test_checking_the_options_imports_no_lightning():
    code = ("import sys; import straggler.integrations.callback_options; "
            "print(any(m.split('.')[0] in ('lightning', 'pytorch_lightning') "
            "for m in sys.modules))")
    assert fresh_python(code) == "False"
