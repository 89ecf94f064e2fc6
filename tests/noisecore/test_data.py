"""Data loading: a bad file is refused with a message that names the problem and where it is."""

import numpy as np
import pytest

from noisecore.tasks import load_kddcup, load_twitter_buzz, read_table, table_task_data

GOOD = "a,b,label\n" + "\n".join(f"{i % 7},{(i * 3) % 5 - 2},{i % 2}" for i in range(60)) + "\n"


def test_reads_a_good_table():
    names, values = read_table(GOOD.encode())
    assert names == ["a", "b", "label"]
    assert values.shape == (60, 3)
    assert values[4].tolist() == [4.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"\n\n  \n", "empty"),
        (b"a,b\n", "no data rows"),
        (b"1,2\n3,4\n", "header row"),
        (b"a,,c\n1,2,3\n", "empty column name"),
        (b"a,a\n1,2\n", "duplicated column names: a"),
        (b"a,b\n1,2\n3\n", "line 3: 1 fields, but the header has 2"),
        (b"a,b\n1,2\n3,x7\n", "line 3, column 'b': 'x7' is not a number"),
        (b"a,b\n1,2\n3,\n", "line 3, column 'b': empty cell"),
        (b"a,b\n1,nan\n", "line 2, column 'b': 'nan' is not a finite number"),
        (b"a,b\n1,-inf\n", "not a finite number"),
        ("a,b\n1,2\n\xe9,3\n".encode("latin-1"), "not UTF-8 text"),
        # named, where they once gave an unnamed csv.Error ("Something went wrong" in the app)
        (b"a,b\r1,2\r3,4\r", "carriage return alone"),
        (b"a,b\n1,2\n3," + b"4" * 131_073 + b"\n", "line 3: a cell longer than 131,072 characters"),
        (b"a," + b"b" * 131_073 + b"\n1,2\n", "line 1: a cell longer than 131,072 characters"),
        (",".join(f"c{k}" for k in range(1_001)).encode() + b"\n" + b"1," * 1_000 + b"1\n", "1,001 columns"),
        (",".join(f"c{k}" for k in range(20_000)).encode() + b"\n1\n", "over 1,000 columns"),
        (b'a,b\n1,2\n3,"4\n5\n', "is not a number"),
        # a spreadsheet's export with another separator is named, with how to save it with commas
        (b"a;b;label\n1,5;2;0\n", r"line 1: the columns are separated by semicolons \(;\), not commas"),
        (b"\na\tb\tlabel\n1\t2\t0\n", "line 2: the columns are separated by tabs, not commas"),
    ],
)
def test_malformed_tables_are_refused_with_where(content, message):
    with pytest.raises(ValueError, match=message):
        read_table(content, source="data.csv")


def test_the_largest_header_with_duplicates_is_named():
    names = [f"c{k}" for k in range(999)] + ["c5"]
    content = (",".join(names) + "\n" + ",".join("1" for _ in names) + "\n").encode()
    with pytest.raises(ValueError, match=r"duplicated column names: c5$"):
        read_table(content)


@pytest.mark.parametrize(
    "content",
    [
        GOOD,  # numpy's reader
        GOOD.replace("\n1,", "\n  \n1,"),  # whitespace-only lines: read row by row
        GOOD.replace("\n", "\r\n"),
        GOOD.replace("\n2,", '\n"2",'),  # quoted cells
        "\n\n" + GOOD.replace("\n3,", "\n,,\n3,") + "\n\n",
    ],
)
def test_both_readers_give_the_same_table(content):
    names, values = read_table(content.encode())
    assert names == ["a", "b", "label"] and values.shape == (60, 3)
    expected = [[i % 7, (i * 3) % 5 - 2, i % 2] for i in range(60)]
    assert values.tolist() == expected


def test_table_to_task_data():
    names, values = read_table(GOOD.encode())
    (X, y), (hX, hy) = table_task_data(names, values, task="logistic", target="label", rng=1)
    assert X.shape == (30, 2) and hX.shape == (30, 2) and set(np.unique(hy)) == {-1.0, 1.0}
    assert set(np.unique(y)) == {-1.0, 1.0}
    norms = np.linalg.norm(X, axis=1)
    assert np.allclose(norms[norms > 0], 1.0)
    (X, y), _ = table_task_data(names, values, task="ridge", target="a", rng=1)
    assert np.abs(y).max() == pytest.approx(1.0)
    (X, y), _ = table_task_data(names, values, task="mean", rng=1)
    assert y is None and X.shape[1] == 3 and np.linalg.norm(X, axis=1).max() <= 1 + 1e-12


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"task": "logistic", "target": "nope"},
            "target column 'nope' is not in the table; its columns are: a, b, label",
        ),
        ({"task": "logistic", "target": "a"}, "exactly two classes"),
        ({"task": "ridge", "target": None}, "choose the target column"),
        ({"task": "svm", "target": "label"}, "task must be"),
    ],
)
def test_wrong_target_or_task_is_named(kwargs, message):
    names, values = read_table(GOOD.encode())
    with pytest.raises(ValueError, match=message):
        table_task_data(names, values, **kwargs)


def test_too_small_or_too_wide_tables_are_refused():
    names, values = read_table(GOOD.encode())
    with pytest.raises(ValueError, match="too few rows to train on: 30"):
        table_task_data(names, values[:30], task="logistic", target="label")
    wide = np.ones((50, 82))
    with pytest.raises(ValueError, match="at most 80 feature columns"):
        table_task_data([f"c{i}" for i in range(82)], wide, task="ridge", target="c0")
    rare = values.copy()
    rare[:, 2] = 0.0
    rare[0, 2] = 1.0
    with pytest.raises(ValueError, match="too rare"):
        table_task_data(names, rare, task="logistic", target="label", rng=0)


def kdd_line(label="normal.", first="0"):
    return ",".join([first, "tcp", "http", "SF", *["1"] * 37, label])


def test_kdd_loader_refuses_what_it_used_to_hide(tmp_path):
    path = tmp_path / "kdd.txt"
    path.write_text("\n".join([kdd_line(), kdd_line("smurf."), kdd_line("teardrop.")]) + "\n")
    _, y = load_kddcup(path)
    assert y.tolist() == [-1.0, 1.0, 1.0]
    for bad, message in [
        (kdd_line("mystery."), "line 2: unknown label 'mystery.'"),
        (kdd_line(first="nan"), "line 2, field 0: 'nan' is not a finite number"),
        (kdd_line(first="inf"), "not a finite number"),
    ]:
        path.write_text(kdd_line() + "\n" + bad + "\n")
        with pytest.raises(ValueError, match=message):
            load_kddcup(path)
    path.write_bytes(kdd_line().encode() + b"\n\xff\xfe\n")
    with pytest.raises(ValueError, match="not UTF-8 text"):
        load_kddcup(path)
    with pytest.raises(ValueError, match="cannot be read"):
        load_kddcup(tmp_path / "missing.txt")


def test_twitter_loader_refuses_infinite_popularity(tmp_path):
    path = tmp_path / "twitter.data"
    rows = [",".join(["1"] * 77 + [str(p)]) for p in (0, 10, 100)]
    path.write_text("\n".join(rows) + "\n")
    _, target = load_twitter_buzz(path)
    assert target.max() == pytest.approx(1.0) and target.min() == 0.0
    _, bounded = load_twitter_buzz(path, max_popularity=1000)
    assert bounded.max() == pytest.approx(np.log1p(100) / np.log1p(1000))
    path.write_text("\n".join([*rows, ",".join(["1"] * 77 + ["inf"])]) + "\n")
    with pytest.raises(ValueError, match="line 4, field 77: 'inf' is not a finite number"):
        load_twitter_buzz(path)
    path.write_text(",".join(["1"] * 76 + ["nan", "3"]) + "\n")
    with pytest.raises(ValueError, match="field 76"):
        load_twitter_buzz(path)


def test_chunks_name_the_right_line(monkeypatch):
    """The table is read a chunk of lines at a time: values and line numbers do not depend on where
    the chunks end."""
    import noisecore.tasks.data as data

    monkeypatch.setattr(data, "_CHUNK", 7)
    _, values = read_table(("\n" + GOOD.replace("\n1,", "\n \n1,")).encode())
    assert values.tolist() == [[i % 7, (i * 3) % 5 - 2, i % 2] for i in range(60)]
    lines = GOOD.splitlines()
    lines[45] = "1,2,x"
    with pytest.raises(ValueError, match="line 46, column 'label': 'x' is not a number"):
        read_table("\n".join(lines).encode())
