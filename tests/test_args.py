"""The command lines' argument types (python/netreturn/args.py)."""

import argparse

import pytest

from netreturn import args, scenarios


def test_kv_and_sweep_split_name_and_values():
    assert args.kv(" flows = 4 ") == ("flows", "4")
    assert args.kv("a=b=c") == ("a", "b=c")
    assert args.sweep("queue=droptail, ewt,") == ("queue", ["droptail", "ewt"])
    for bad in ("flows", "=4"):
        with pytest.raises(argparse.ArgumentTypeError):
            args.kv(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="at least one value"):
        args.sweep("queue=,")


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5"])
def test_positive_refuses_what_is_not_a_positive_integer(text):
    with pytest.raises(argparse.ArgumentTypeError):
        args.positive(text)


def test_seed_covers_the_simulators_seed_and_no_more():
    assert args.MAX_SEED == scenarios.MAX_SEED
    assert args.seed(str(args.MAX_SEED)) == 2**64 - 1
    for bad in ("-1", str(2**64), "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            args.seed(bad)


def test_lists_levels_scales_and_losses():
    assert args.comma_list("a, b") == ["a", "b"]
    assert args.levels("0.1,1") == [0.1, 1.0]
    assert args.scales("1,100") == [1, 100]
    assert args.losses("0,0.5") == (0.0, 0.5)
    for f, bad in ((args.comma_list, ","), (args.levels, "0"), (args.levels, "nan"), (args.scales, "2"),
                   (args.losses, "1.5")):
        with pytest.raises(argparse.ArgumentTypeError):
            f(bad)
