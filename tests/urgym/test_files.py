"""Files in and out.

Atomic writes keep modes, outputs never land on special files or on inputs, JSON from strangers is read strictly.
"""

import os
import stat

import pytest

from urgym.files import STDOUT, check_distinct, check_output, loads_json, write_atomic


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_umask_and_an_old_one_keeps_its_mode(tmp_path):
    old = os.umask(0o027)
    try:
        new = write_atomic(tmp_path / "new.txt", lambda tmp: tmp.write_text("x"))
        assert mode(new) == 0o640  # 0666 less the umask, not mkstemp's 0600
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        os.chmod(kept, 0o604)
        write_atomic(kept, lambda tmp: tmp.write_text("new"))
        assert kept.read_text() == "new" and mode(kept) == 0o604
    finally:
        os.umask(old)
    assert not list(tmp_path.glob(".*tmp"))


def test_stdout_gets_the_bytes(capfdbinary):
    assert str(write_atomic(STDOUT, lambda tmp: tmp.write_bytes(b"payload\n"))) == STDOUT
    assert capfdbinary.readouterr().out == b"payload\n"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "it is a directory"),
        (lambda p: os.symlink("/etc/hostname", p), "it is a symbolic link"),
        (lambda p: os.mkfifo(p), "it is a FIFO"),
    ],
)
def test_special_files_are_refused(tmp_path, make, message):
    target = tmp_path / "out.json"
    make(target)
    with pytest.raises(ValueError, match=message):
        check_output(target)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "an empty output path"),
        ("  ", "an empty output path"),
        ("folder/", "it names a folder"),
        ("/dev/null", "it is a device"),
        ("/proc/x/out.json", "not a writable directory"),
        ("-", r"standard output\) is not allowed here"),
    ],
)
def test_bad_output_paths_are_refused(path, message):
    with pytest.raises(ValueError, match=message):
        check_output(path)


def test_stdout_is_allowed_where_the_caller_says_so():
    assert str(check_output("-", stdout=True)) == "-"


def test_an_output_never_replaces_an_input_or_another_output(tmp_path):
    record = tmp_path / "rec.json"
    record.write_text("{}")
    os.symlink(record, tmp_path / "link.json")
    with pytest.raises(ValueError, match=r"--json .*rec\.json would replace the game record"):
        check_distinct({"--json": str(record)}, {"the game record": str(record)})
    with pytest.raises(ValueError, match="would replace the game record"):  # the same file by another name
        check_distinct({"--json": str(tmp_path / "sub" / ".." / "link.json")}, {"the game record": str(record)})
    with pytest.raises(ValueError, match="--json and --csv both write"):
        check_distinct({"--json": "x", "--csv": "./x"})
    with pytest.raises(ValueError, match="--json and --csv both write -"):
        check_distinct({"--json": "-", "--csv": "-"})
    check_distinct({"--json": "a.json", "--csv": "a.csv", "--plot": None}, {"the record": "b.json"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
        ('{"x": NaN}', "NaN is not a JSON number"),
        ('{"x": Infinity}', "Infinity is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("{not json", "is not valid JSON"),
        (b"\xff\xfe{}", "is not UTF-8 text|not valid JSON"),
    ],
)
def test_strict_json(text, message):
    with pytest.raises(ValueError, match=message):
        loads_json(text, "the file")


def test_strict_json_reads_ordinary_json():
    assert loads_json('{"a": [1, 2.5, null, true, "x"]}') == {"a": [1, 2.5, None, True, "x"]}
