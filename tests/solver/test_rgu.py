"""RoyalUr's lookup tables.

Their 2-piece finkel table against our solve, our export read back by a reader written from the format description, the
key encoding, corruption, import and compare.

The cross-checks against RoyalUr's own file read it where it lies beside the checkout (``../shared``) and skip,
saying so, elsewhere; every other test reads that file when present and our own export of the same table (the
same keys, values within rounding) otherwise, so it never skips.
"""

from pathlib import Path

import numpy as np
import pytest
from urgym.commands.solve import main as solve_main
from urgym.solver import SolvedTable, TableError, compare_tables, load_or_solve, read_rgu, write_rgu
from urgym.solver.rgu import rgu_key

from tests.solver import rgu_format
from urgym import Position, get_rules

THEIRS = Path(__file__).resolve().parents[3] / "shared" / "references" / "data" / "finkel2p.rgu"
UNIT = 1 / 65535

needs_theirs = pytest.mark.skipif(not THEIRS.exists(), reason=f"RoyalUr's own table is not at {THEIRS}")


@pytest.fixture(scope="module")
def finkel2(private_cache):
    return load_or_solve(get_rules("finkel", 2), progress=False)


@pytest.fixture(scope="module")
def rgu_file(finkel2, tmp_path_factory):
    """RoyalUr's own 2-piece finkel table where it lies beside the checkout, else our export of it."""
    if THEIRS.exists():
        return THEIRS
    return write_rgu(finkel2, tmp_path_factory.mktemp("rgu") / "finkel2p.rgu")


@needs_theirs
def test_their_table_agrees_with_our_solve_within_16_bit_rounding(finkel2):
    theirs = read_rgu(THEIRS)
    assert theirs.rules == get_rules("finkel", 2) and len(theirs) == 12990
    comparison = compare_tables(theirs, finkel2)
    assert comparison.common == 12869 and comparison.only_first == 0 and comparison.only_second == 0
    # Half a unit of rounding, plus their solve's own last digits (largest seen: 0.504 units).
    assert comparison.max_difference < 0.51 * UNIT
    assert 0.2 * UNIT < comparison.mean_difference < 0.3 * UNIT  # rounding, not truncation (which gives 0.5)
    start = Position.start(theirs.rules)
    assert theirs.win_probability(start) == pytest.approx(finkel2.win_probability(start), abs=0.51 * UNIT)
    dark_to_move = start.play(0, None)
    assert theirs.win_probability(dark_to_move, "light") == pytest.approx(
        finkel2.win_probability(dark_to_move, "light"), abs=0.51 * UNIT
    )
    # Positions with dark to move are looked up mirrored; an asymmetric one shows a wrong mirror at once.
    for light, dark, light_home, dark_home in (([3], [9], 1, 1), ([12], [2, 6], 0, 0), ([], [13], 2, 1)):
        position = Position.from_pieces(
            theirs.rules, light=light, dark=dark, light_home=light_home, dark_home=dark_home, turn="dark"
        )
        for side in ("light", "dark"):
            assert theirs.win_probability(position, side) == pytest.approx(
                finkel2.win_probability(position, side), abs=0.51 * UNIT
            )


@needs_theirs
def test_our_export_reads_back_to_their_keys_and_values(finkel2, tmp_path):
    path = write_rgu(finkel2, tmp_path / "ours.rgu")
    header, keys, values = rgu_format.read(path)
    their_header, their_keys, their_values = rgu_format.read(THEIRS)
    assert header["game_settings"] == their_header["game_settings"]
    assert keys == their_keys
    diff = np.abs(np.array(values) - np.array(their_values))
    assert diff.max() <= 1  # a value on a rounding boundary may land one unit apart (solves differ at ~1e-8)
    assert np.mean(diff == 0) > 0.995


def test_key_encoding_by_hand_and_round_trip(finkel2, rgu_file):
    rules = finkel2.rules
    assert rgu_key(Position.start(rules)) == (2 << 28) | (2 << 25)
    # Light on A4 (position 1: lane bit 3) and B1 (position 5: the middle lane's most significant digit, 2),
    # dark on C1 (position 4: bit 0); nobody at home.
    position = Position.from_pieces(rules, light=[1, 5], dark=[4], light_home=0, dark_home=1)
    middle = 2 * 3**7 - 1  # 2 followed by seven 0s, ranked after skipping the all-dark pattern
    assert rgu_key(position) == 1 | (middle << 6) | (1 << 3 << 19) | (1 << 25)
    theirs = read_rgu(rgu_file)
    states = theirs.states()
    for state in states[::97]:
        assert rgu_key(Position(rules, int(state))) in set(theirs.keys.tolist())
    with pytest.raises(ValueError, match="light to move"):
        rgu_key(Position.start(rules).play(0, None))
    with pytest.raises(ValueError, match="covers finkel"):
        rgu_key(Position.start("masters"))


def test_imported_table_serves_the_perfect_player(tmp_path, finkel2, rgu_file):
    imported = read_rgu(rgu_file).to_solved_table()
    imported.save(tmp_path / "finkel-2p-uint16.urtable", "uint16")
    loaded = SolvedTable.load(tmp_path / "finkel-2p-uint16.urtable")
    assert compare_tables(loaded, finkel2).max_difference < 0.51 * UNIT
    position = Position.from_pieces(finkel2.rules, light=[3], dark=[6], light_home=1, dark_home=1)
    for roll in (1, 2, 3):
        values = loaded.move_values(position, roll)
        exact = finkel2.move_values(position, roll)
        assert all(abs(values[m] - exact[m]) < 0.51 * UNIT for m in exact)


def test_corrupt_and_foreign_files_name_the_file(tmp_path, rgu_file):
    data = rgu_file.read_bytes()
    cases = {"magic.rgu": b"XYZ" + data[3:], "short.rgu": data[:-3], "version.rgu": data[:3] + b"\x01" + data[4:]}
    header_end = 8 + int.from_bytes(data[4:8], "big")
    keys_at = header_end + 8
    swapped = bytearray(data)
    first, second = data[keys_at : keys_at + 4], data[keys_at + 4 : keys_at + 8]
    swapped[keys_at : keys_at + 8] = second + first
    cases["unsorted.rgu"] = bytes(swapped)
    cases["blitz.rgu"] = data.replace(b'"paths":"Bell"', b'"paths":"Aseb"', 1)
    messages = {
        "magic.rgu": "not a RoyalUr",
        "short.rgu": "truncated",
        "version.rgu": "version",
        "unsorted.rgu": "not strictly ascending",
        "blitz.rgu": "paths",
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(TableError, match=messages[name]) as info:
            read_rgu(tmp_path / name)
        assert name in str(info.value)


def test_solve_command_compares_exports_and_imports(finkel2, tmp_path, capsys, rgu_file):
    solve_main(["--compare", str(rgu_file), str(finkel2.path)])
    assert "12,869 positions in both" in capsys.readouterr().out
    solve_main(["--pieces", "2", "--format", "rgu", "--out", str(tmp_path / "o.rgu"), "--no-progress"])
    assert rgu_format.read(tmp_path / "o.rgu")[1] == rgu_format.read(rgu_file)[1]
    solve_main(["--import-rgu", str(rgu_file), "--out", str(tmp_path / "imported.urtable")])
    assert SolvedTable.load(tmp_path / "imported.urtable").rules == finkel2.rules
    with pytest.raises(SystemExit) as info:
        solve_main(["--rules", "blitz", "--format", "rgu", "--out", str(tmp_path / "b.rgu")])
    assert info.value.code == 2 and "covers finkel" in capsys.readouterr().err


def _rgu(keys, values, header, entries=None):
    import json
    import struct

    blob = json.dumps(header).encode()
    keys = np.asarray(keys, dtype=">u4")
    values = np.asarray(values, dtype=">u2")
    count = len(keys) if entries is None else entries
    return (
        b"RGU\x00"
        + struct.pack(">i", len(blob))
        + blob
        + struct.pack(">ii", 1, count)
        + keys.tobytes()
        + values.tobytes()
    )


@pytest.fixture(scope="module")
def their_arrays(rgu_file):
    theirs = read_rgu(rgu_file)
    return theirs.keys.copy(), np.rint(theirs.values * 65535).astype(np.int64), theirs.header


def _cases(keys, values, header):
    """(name, file bytes, message) of hostile tables built from RoyalUr's own."""
    won = int(np.flatnonzero(values == 65535)[0])
    inner = int(np.flatnonzero((values > 1000) & (values < 60000))[len(values) // 4])
    duplicate = keys.copy()
    duplicate[1] = duplicate[0]
    high_bit = keys.copy()
    high_bit[-1] |= 1 << 31
    big_middle = keys.copy()
    big_middle[-1] = (keys[-1] & ~(8191 << 6)) | (8000 << 6)  # beyond the 3^8 - 1 middle-lane patterns
    too_many = keys.copy()
    too_many[-1] = keys[-1] | (7 << 28)  # seven of light's two pieces at home
    broken = values.copy()
    broken[inner] = (values[inner] + 3000) % 65536
    not_won = values.copy()
    not_won[won] = 100
    return [
        ("duplicate", _rgu(duplicate, values, header), "not strictly ascending"),
        ("high-bit", _rgu(np.sort(high_bit), values, header), "bits outside RoyalUr's encoding"),
        ("middle", _rgu(np.sort(big_middle), values, header), "bits outside RoyalUr's encoding"),
        ("pieces", _rgu(np.sort(too_many), values, header), "pieces; the table's rules have 2"),
        ("all-zero", _rgu(keys, np.zeros_like(values), header), "light has won, worth 1"),
        ("won-not-1", _rgu(keys, not_won, header), "light has won, worth 1"),
        ("bellman", _rgu(keys, broken, header), "does not solve the game"),
        ("header-list", _rgu(keys, values, [1, 2]), "JSON header is a list, not an object"),
        ("no-entries", _rgu([], [], header, entries=0), "holds no entries"),
    ]


def test_hostile_royalur_tables_are_refused_on_import_and_compare(their_arrays, finkel2, tmp_path, capsys):
    for name, blob, message in _cases(*their_arrays):
        path = tmp_path / f"{name}.rgu"
        path.write_bytes(blob)
        with pytest.raises(TableError, match=message) as info:
            read_rgu(path)
        assert f"{name}.rgu" in str(info.value)
        for argv in (
            ["--import-rgu", str(path), "--out", str(tmp_path / "x.urtable")],
            ["--compare", str(path), str(finkel2.path)],
        ):
            with pytest.raises(SystemExit) as exit_info:
                solve_main(argv)
            assert exit_info.value.code == 2 and message.split(",")[0] in capsys.readouterr().err
    assert not (tmp_path / "x.urtable").exists()
