"""Files from strangers are bounded while reading: devices, FIFOs, slow pipes and lying archives get one clear error."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from urgym.agents.models import model_card
from urgym.agents.networks.value import ValueNetwork
from urgym.agents.outside.policies import load_sb3_network
from urgym.solver.rgu import read_rgu
from urgym.solver.table import SolvedTable

from urgym import GameRecord
from urgym.files import read_bounded, read_npz, table_kind

BIN = Path(sys.executable).parent
READERS = {
    "a game record": GameRecord.load,
    "a RoyalUr table": read_rgu,
    "a solved table": SolvedTable.load,
    "a network": ValueNetwork.load,
    "a stable-baselines3 model": load_sb3_network,
    "a model card": lambda path: model_card(path.with_suffix(".zip")),
}


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    return path


def assert_refused_quickly(read, path, pattern):
    """``read(path)`` must raise ValueError (TableError is one) matching ``pattern`` within a few seconds."""
    outcome: list = []

    def target():
        try:
            read(path)
            outcome.append(None)
        except (ValueError, FileNotFoundError) as err:
            outcome.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(20)
    assert outcome, f"reading {path} did not return"
    assert isinstance(outcome[0], ValueError) and pattern in str(outcome[0]), outcome[0]


@pytest.mark.parametrize("what", sorted(READERS))
def test_devices_fifos_and_links_to_devices_are_refused_before_reading(what, fifo, tmp_path):
    read = READERS[what]
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    cases = ((link, "a device"), (fifo, "a FIFO"))
    if what != "a model card":  # a card is found beside a model: /dev/zero.json is no file
        cases += ((Path("/dev/zero"), "a device"),)
    for path, kind in cases:
        assert_refused_quickly(read, path, kind)


def test_a_slow_pipe_never_holds_a_reader(tmp_path):
    """A FIFO with a writer that sends a byte a second is refused at once, not read until the writer stops."""
    fifo = tmp_path / "slow.json"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", f"while true; do printf x; sleep 1; done > {fifo}"], stdout=subprocess.DEVNULL
    )
    try:
        started = time.monotonic()
        with pytest.raises(ValueError, match="is a FIFO, not a regular file"):
            GameRecord.load(fifo)
        assert time.monotonic() - started < 5
    finally:
        writer.kill()
        writer.wait()


def test_a_file_whose_stated_size_is_zero_is_bounded_by_what_is_read():
    """``/proc`` files state size 0; the bound counts the bytes read (here a limit below the file's length)."""
    with pytest.raises(ValueError, match="more than 16 bytes"):
        read_bounded("/proc/self/maps", 16, "a test file")
    assert read_bounded("/proc/self/maps", 1 << 20, "a test file")


def test_a_table_check_on_a_fifo_output_does_not_block(fifo):
    assert table_kind(fifo) is None


def npz_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_an_npy_header_that_declares_terabytes_is_refused_before_allocating(tmp_path):
    real = npy_bytes(np.zeros(4, dtype=np.float64))
    header = np.lib.format.header_data_from_array_1_0(np.zeros(4))
    header["shape"] = (1 << 42,)
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    path = tmp_path / "huge.npz"
    path.write_bytes(npz_bytes({"w0.npy": buffer.getvalue() + real[-32:]}))
    with pytest.raises(ValueError, match=r"declare 35,184,372,088,832 bytes, more than a network's"):
        read_npz(path, 64 << 20, "a network")


def test_a_member_that_lies_about_its_checksum_or_length_is_refused(tmp_path):
    data = npz_bytes({"w0.npy": npy_bytes(np.arange(1000, dtype=np.float64))})
    start = data.index(b"\x93NUMPY")
    corrupt = bytearray(data)
    corrupt[start + 600] ^= 0xFF  # inside the array's data: the CRC-32 no longer matches
    path = tmp_path / "crc.npz"
    path.write_bytes(bytes(corrupt))
    with pytest.raises(ValueError, match=r"not an intact \.npz archive"):
        read_npz(path, 64 << 20, "a network")
    short = npy_bytes(np.arange(1000, dtype=np.float64))[:-800]  # the header says more than the data holds
    path.write_bytes(npz_bytes({"w0.npy": short}))
    with pytest.raises(ValueError, match=r"not an intact \.npz archive|EOF"):
        read_npz(path, 64 << 20, "a network")


def test_object_arrays_are_never_unpickled(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, w0=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="holds Python objects"):
        read_npz(path, 64 << 20, "a network")


def test_a_good_archive_still_reads(tmp_path):
    path = tmp_path / "good.npz"
    np.savez_compressed(path, w0=np.arange(6.0).reshape(2, 3), meta=np.array("{}"))
    arrays = read_npz(path, 1 << 20, "a network")
    assert np.array_equal(arrays["w0"], np.arange(6.0).reshape(2, 3)) and str(arrays["meta"]) == "{}"


@pytest.mark.parametrize(
    "argv",
    [
        ["review", "/dev/zero"],
        ["review", "/dev/stdin"],
        ["solve", "--rules-file", "/dev/zero"],
        ["solve", "--import-rgu", "/dev/zero"],
        ["stats", "--records", "records"],
        ["evaluate", "--agent", "sb3:fifo", "--pieces", "2"],
        ["evaluate", "--agent", "td:model=/dev/zero", "--pieces", "2"],
        ["evaluate", "--agent", "onnx:fifo", "--pieces", "2"],
    ],
    ids=" ".join,
)
def test_commands_refuse_special_files_in_one_line(argv, tmp_path):
    (tmp_path / "records").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "records" / "a.json").symlink_to("/dev/zero")
    result = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        stdin=subprocess.PIPE,  # /dev/stdin is a pipe nobody writes to: reading it would wait for ever
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "not a regular file" in lines[0]
