"""The Explorer's settings are one settings system with the declarations (pcrp.basics.params): each is a declared
Param (the live demo's, the run's), a declared Choice, or a row's parameter whose declaration is its prior's in the
registry; the address reads and writes them through their declarations."""

import pytest

from pcrp.app import explorer_settings as es
from pcrp.app.live_params import LIVE_PARAMS
from pcrp.basics.errors import SettingError
from pcrp.basics.params import SWITCH, Choice, Declarations, Param
from pcrp.model import PRIORS


def test_every_explorer_setting_is_a_declaration_or_refers_to_its_rows_prior():
    """No bound, kind or choice list is typed in explorer_settings: a number is LIVE_PARAMS' own object, a choice
    EXPLORER_CHOICES' (or the registry's names for a row's prior), a row parameter's declaration the registry's."""
    values = es.defaults()
    for setting in es.SETTINGS:
        if isinstance(setting, Param):
            assert LIVE_PARAMS[setting.name] is setting
        elif isinstance(setting, Choice):
            if setting.name.startswith("prior"):
                assert setting.choices == tuple(PRIORS)
            else:
                assert es.EXPLORER_CHOICES[setting.name] is setting
        else:
            assert isinstance(setting, es.RowParam)
            row, name = es.ROW_PARAMS[setting.name]
            declared = es.row_declaration(values, setting.name)
            own = PRIORS[values[es.prior_key(row)]]
            assert declared is (own.param(name) if name in {p.name for p in own.params} else None)
    assert isinstance(es.EXPLORER_CHOICES, Declarations) and es.EXPLORER_CHOICES.owner == "the Explorer"


def test_a_choice_checks_reads_and_writes_its_values():
    pace = es.EXPLORER_CHOICES["pace"]
    assert pace.check("full speed", "the Explorer") == "full speed" and pace.parse(" 10 sweeps/s ") == "10 sweeps/s"
    with pytest.raises(SettingError, match="pace must be one of 2 sweeps/s, .*got 'warp'"):
        pace.parse("warp")
    present = es.EXPLORER_CHOICES["present"]
    assert present.choices == SWITCH and present.switch
    assert [present.parse(t) for t in ("1", "TRUE", "yes", "off", "0")] == [True, True, True, False, False]
    assert present.text(True) == "1" and present.text(False) == "0"
    with pytest.raises(SettingError, match="true or false"):
        present.check("1")  # a text is no switch's value
    digits = es.EXPLORER_CHOICES["digits"]
    assert digits.parse("7,1,7") == [1, 7] and digits.text([1, 7]) == "1,7" and digits.check((3, 2)) == [2, 3]
    for bad in ("", "1,x", "10", "1;2"):
        with pytest.raises(SettingError, match="MNIST digits must be 0, 1, .* separated by commas"):
            digits.parse(bad)
    with pytest.raises(SettingError, match="one or more"):
        digits.check([])
    with pytest.raises(SettingError, match="too long"):
        pace.parse("x" * 65)
    with pytest.raises(ValueError):  # a ValueError: the lesson page reads ?present= through it
        es.BY_NAME["present"].parse("maybe")
    assert Declarations("x", Choice("a", "a", "p", ("p", "q")), Param("b", "b", 1, 0, 2, True, True, "b"),
                        Choice("c", "c", (1,), (1, 2), many=True)).defaults() == {"a": "p", "b": 1, "c": [1]}


def test_a_param_reads_a_number_from_a_text_with_its_declarations_words():
    seed, thin = LIVE_PARAMS["seed"], LIVE_PARAMS["thin"]
    assert seed.parse("3000000000") == 3_000_000_000 and thin.parse("2.0") == 2
    with pytest.raises(SettingError, match="seed must be a number .got 'abc'."):
        seed.parse("abc")
    with pytest.raises(SettingError, match="thin must be a whole number"):
        thin.parse("nan")
    assert Param.text(1.5) == "1.5" and Param.text(7) == "7"


@pytest.mark.parametrize("name, value", [("data", "sim2"), ("digits", [0, 9]), ("embedding", "pca"),
                                         ("covariance", "spherical"), ("split_merge", False), ("start", "one"),
                                         ("pace", "full speed"), ("present", True), ("sweeps", 12_345),
                                         ("seed", 2**40), ("alpha1", 2.5), ("r2", 1.23)])
def test_each_kind_of_setting_goes_through_the_address_and_back(name, value):
    values = {**es.defaults(), name: value}
    query = es.to_query(values)
    assert name in query
    parsed, problems = es.from_query(query)
    assert not problems and parsed[name] == value
