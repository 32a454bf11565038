"""Tests for dpviz.data.load_csv: sources, detection, dropping, truncation, clear errors."""

import io
from pathlib import Path

import numpy as np
import pytest

from dpviz.data import load_csv

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def test_example_file_from_path():
    out = load_csv(ASSETS / "example_blobs.csv")
    assert out.numeric_columns == ("x", "y", "z")
    ds = out.dataset
    assert ds.X.shape == (300, 3) and ds.source == "upload" and ds.radius is None
    assert ds.feature_names == ("x", "y", "z") and ds.name == "example_blobs"
    assert out.dropped_rows == 0 and not out.truncated
    assert any("Ignored non-numeric: group" in m for m in out.messages)


def test_bytes_binary_and_text_file_like_agree():
    raw = (ASSETS / "example_blobs.csv").read_bytes()
    a = load_csv(raw).dataset
    b = load_csv(io.BytesIO(raw)).dataset
    c = load_csv(io.StringIO(raw.decode())).dataset
    assert a.content_hash == b.content_hash == c.content_hash


def test_column_selection():
    out = load_csv(ASSETS / "example_blobs.csv", columns=["y", "x"])
    assert out.dataset.feature_names == ("y", "x")
    full = load_csv(ASSETS / "example_blobs.csv").dataset
    np.testing.assert_array_equal(out.dataset.X, full.X[:, [1, 0]])
    with pytest.raises(ValueError, match="not numeric"):
        load_csv(ASSETS / "example_blobs.csv", columns=["group"])
    with pytest.raises(ValueError, match="Unknown column"):
        load_csv(ASSETS / "example_blobs.csv", columns=["nope"])


def test_nan_inf_and_junk_rows_dropped_with_count():
    raw = b"a,b,c\n1,2,u\n3,,v\n5,inf,w\nx,6,q\n7,8,r\n9,10,s\n11,12,t\n13,14,u\n15,16,v\n17,18,w\n19,20,z\n"
    out = load_csv(raw)
    # column a has 10/11 numbers (≥ 90 %), so it counts as numeric; 'x' becomes a dropped row
    assert out.numeric_columns == ("a", "b")
    assert out.dropped_rows == 3
    assert out.dataset.X.shape == (8, 2)
    assert any("Dropped 3 row(s)" in m for m in out.messages)
    # only the chosen column matters
    out_a = load_csv(raw, columns=["a"])
    assert out_a.dropped_rows == 1


def test_row_cap_is_deterministic_prefix():
    raw = "v,w\n" + "".join(f"{i},{2 * i}\n" for i in range(50))
    out = load_csv(raw.encode(), max_rows=20)
    assert out.truncated and out.dataset.X.shape == (20, 2)
    np.testing.assert_array_equal(out.dataset.X[:, 0], np.arange(20))
    assert any("only the first 20" in m for m in out.messages)
    assert not load_csv(raw.encode(), max_rows=50).truncated


def test_headerless_and_semicolon():
    out = load_csv(b"1,2\n3,4\n5,6\n")
    assert out.dataset.feature_names == ("x1", "x2") and out.dataset.X.shape == (3, 2)
    out = load_csv(b"p;q\n1,5;2\n3;4\n".replace(b"1,5", b"1.5"))
    np.testing.assert_array_equal(out.dataset.X, [[1.5, 2.0], [3.0, 4.0]])


def test_malformed_asset_raises_clear_error():
    with pytest.raises(ValueError, match=r"could not be parsed as CSV.*Expected 3 fields"):
        load_csv(ASSETS / "malformed.csv")


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"", "empty"),
        (b"   \n\n", "empty"),
        (b"a,b\n", "no data rows"),
        (b"a,b\nx,y\nz,w\n", "No numeric columns found. Columns in the file: 'a', 'b'"),
        (b"a,b\n1,2\n", r"Only 1 usable row"),
        (b"a,b\n1,\n,2\n3,4\n", r"Only 1 usable row\(s\) \(2 dropped"),
        (b"a,b\n\xc3\x28,1\n", "could not be decoded as UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "looks binary"),
    ],
)
def test_clear_errors(raw, match):
    with pytest.raises(ValueError, match=match):
        load_csv(raw)


def test_size_limit_and_bad_source(tmp_path):
    raw = b"a,b\n" + b"1,2\n" * 100
    with pytest.raises(ValueError, match="larger than the limit"):
        load_csv(raw, max_bytes=50)
    with pytest.raises(ValueError, match="larger than the limit"):
        load_csv(io.BytesIO(raw), max_bytes=50)
    with pytest.raises(ValueError, match="not found"):
        load_csv(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="must be bytes, a path or a file-like"):
        load_csv(12345)


def test_never_writes_to_disk(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    load_csv((ASSETS / "example_blobs.csv").read_bytes())
    assert list(tmp_path.iterdir()) == []
