"""boi-plain/2 (`benchmarks/execution/_arrays.py`): numpy arrays and scalars and pandas Index,
Series and DataFrame cross as data, rebuilt by the receiver's own library; what would let the
sender choose an object of the trusted side, or cost it unbounded work, is refused in one
sentence."""

from __future__ import annotations

import json

import pytest

from benchmarks.execution import _arrays, _wire

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


@pytest.fixture(autouse=True)
def extension():
    _wire.install_extension(_arrays)
    yield
    _wire.install_extension(None)


def round_trip(value: object) -> object:
    return _wire.decode_plain(json.loads(json.dumps(_wire.encode_plain(value))), {})


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12, dtype=np.int32).reshape(3, 4),
        np.array([[1.5, -0.0], [np.nan, np.inf]]),
        np.array([True, False]),
        np.array(["ab", "c"]),
        np.array([b"x", b"yz"]),
        np.array(["2020-01-01", "NaT"], dtype="datetime64[ns]"),
        np.array([1 + 2j], dtype=np.complex64),
        np.zeros((0, 5), dtype=np.uint8),
        np.arange(6.0).reshape(2, 3).T,  # not C-contiguous
    ],
)
def test_arrays_round_trip(array):
    back = round_trip(array)
    assert type(back) is np.ndarray and back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    assert back.flags.writeable and back.flags.owndata


@pytest.mark.parametrize("scalar", [np.float64(1.5), np.int8(-3), np.bool_(True), np.str_("x")])
def test_numpy_scalars_round_trip(scalar):
    back = round_trip(scalar)
    assert type(back) is type(scalar) and back == scalar


def test_pandas_values_round_trip():
    frame = pd.DataFrame(
        {
            "n": [1, 2, 3],
            "s": ["a", None, "c"],
            "f": [0.5, np.nan, 2.0],
            "b": [True, False, True],
            "t": pd.to_datetime(["2020-01-01", "2021-06-30", "2022-12-31"]),
        },
        index=pd.Index(["x", "y", "z"], name="key"),
    )
    pd.testing.assert_frame_equal(round_trip(frame), frame)
    pd.testing.assert_frame_equal(round_trip(frame.reset_index()), frame.reset_index())
    same_names = pd.DataFrame([[1, 2]], columns=["a", "a"])
    pd.testing.assert_frame_equal(round_trip(same_names), same_names)
    series = pd.Series([1.0, 2.0], index=[3, 4], name=("a", 1))
    pd.testing.assert_series_equal(round_trip(series), series)
    index = pd.RangeIndex(2, 11, 3, name="r")
    pd.testing.assert_index_equal(round_trip(index), index, exact=True)
    pd.testing.assert_frame_equal(round_trip(pd.DataFrame()), pd.DataFrame())


class Agree(np.ndarray):
    def __eq__(self, other):  # a candidate's array that agrees with anything
        return True


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (np.array([object()], dtype=object), "dtype object"),
        (np.zeros(2, dtype=[("a", "i4")]), "dtype"),
        (np.zeros(2).view(Agree), "Agree"),
        (pd.Series(["a"], dtype="category"), "dtype category"),
        (pd.MultiIndex.from_tuples([(1, 2)]), "MultiIndex"),
    ],
)
def test_the_sender_refuses_what_the_rule_does_not_carry(value, says):
    with pytest.raises(_wire.NotPlain, match=says):
        _wire.encode_plain(value)


EIGHT_BYTES = "AAAAAAAAAAA="


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"A": ["|O8", [1], EIGHT_BYTES]}, "not a plain numpy dtype"),
        ({"A": ["i4,O", [1], EIGHT_BYTES]}, "not a plain numpy dtype"),
        ({"A": ["|V8", [1], EIGHT_BYTES]}, "not a plain numpy dtype"),
        ({"A": ["<f8", [2], EIGHT_BYTES]}, "needs 16 bytes, not 8"),
        ({"A": ["<f8", [10**9, 10**9, 10**9], EIGHT_BYTES]}, "needs .* bytes, not 8"),
        ({"A": ["<f8", [-1], ""]}, "shape"),
        ({"A": ["<f8", [1] * 33, EIGHT_BYTES]}, "shape"),
        ({"A": ["<f8", [1], "not base64!"]}, "base64"),
        ({"N": ["<f8"]}, "scalar"),
        ({"PR": [0, 3, 0, None]}, "step"),
        ({"PR": [0, 2**70, 1, None]}, "64 bits"),
        ({"PI": {"values": {"l": [[1]], "dtype": "str"}, "name": None}}, "only strings"),
        (
            {
                "PS": {
                    "values": {"l": [1], "dtype": "category"},
                    "index": {"PR": [0, 1, 1, None]},
                    "name": None,
                }
            },
            "column",
        ),
        (
            {
                "PF": {
                    "columns": {"PR": [0, 1, 1, None]},
                    "index": {"PR": [0, 2, 1, None]},
                    "data": [{"a": ["<f8", [3], "A" * 32]}],
                }
            },
            "differ in length",
        ),
        (
            {
                "PF": {
                    "columns": {"o": "DataFrame", "a": {"d": []}},
                    "index": {"PR": [0, 0, 1, None]},
                    "data": [],
                }
            },
            "index",
        ),
    ],
)
def test_the_receiver_refuses_a_hostile_payload_in_one_sentence(data, says):
    with pytest.raises(ValueError, match=says) as caught:
        _wire.decode_plain(data, {})
    assert "\n" not in str(caught.value)


def test_without_the_extension_arrays_do_not_cross():
    _wire.install_extension(None)
    with pytest.raises(_wire.NotPlain, match="ndarray"):
        _wire.encode_plain(np.zeros(2))
    with pytest.raises(ValueError, match="boi-plain/1"):
        _wire.decode_plain({"A": ["<f8", [1], EIGHT_BYTES]}, {})
    assert _wire.plain_rule() == "boi-plain/1"
