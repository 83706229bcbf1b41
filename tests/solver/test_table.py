"""Tables on disk: round trips, dtypes, clear errors for bad files, resuming, the cache and the CLI."""

import json
import os
import struct

import numpy as np
import pytest
from urgym.commands.solve import main as solve_main
from urgym.solver import SolvedTable, TableError

from urgym import Position, get_rules, solver


@pytest.fixture(scope="module")
def table():
    return solver.solve(get_rules("finkel", 2), progress=False)


@pytest.mark.parametrize("dtype, tolerance", [("float64", 0.0), ("float32", 1e-7), ("uint16", 1e-5)])
def test_save_and_load_round_trip(tmp_path, table, dtype, tolerance):
    path = table.save(tmp_path / "t.urtable", dtype)
    loaded = SolvedTable.load(path, get_rules("finkel", 2))
    assert isinstance(loaded.values, np.memmap)
    assert loaded.header["dtype"] == dtype and loaded.header["positions"] == table.index.size
    assert np.max(np.abs(loaded.probabilities() - table.probabilities())) <= tolerance
    start = Position.start(get_rules("finkel", 2))
    assert loaded.win_probability(start) == pytest.approx(table.win_probability(start), abs=tolerance)


def test_header_records_the_solve(tmp_path, table):
    header = SolvedTable.load(table.save(tmp_path / "t.urtable")).header
    for key in ("tol", "residual", "solve_seconds", "format_version", "checksum", "rules", "dtype"):
        assert key in header
    assert header["rules"]["name"] == "finkel" and header["rules"]["pieces"] == 2


def test_mismatched_rules_are_refused(tmp_path, table):
    path = table.save(tmp_path / "t.urtable")
    with pytest.raises(TableError, match="was solved for 'finkel: path of 14, 2 pieces"):
        SolvedTable.load(path, get_rules("finkel", 3))


def test_truncated_and_corrupt_files_are_refused(tmp_path, table):
    path = table.save(tmp_path / "t.urtable")
    data = path.read_bytes()
    (tmp_path / "short.urtable").write_bytes(data[:-8])
    with pytest.raises(TableError, match="truncated"):
        SolvedTable.load(tmp_path / "short.urtable")
    flipped = bytearray(data)
    flipped[-100] ^= 0xFF
    (tmp_path / "flip.urtable").write_bytes(bytes(flipped))
    with pytest.raises(TableError, match="corrupt: its checksum"):
        SolvedTable.load(tmp_path / "flip.urtable")
    (tmp_path / "magic.urtable").write_bytes(b"NOTATABLE" + data[9:])
    with pytest.raises(TableError, match="bad magic"):
        SolvedTable.load(tmp_path / "magic.urtable")
    length = struct.unpack("<Q", data[8:16])[0]
    header = json.loads(data[16 : 16 + length])
    header["format_version"] = 9  # same length, so the data offset stays put
    blob = json.dumps(header, sort_keys=True).encode().ljust(length)
    (tmp_path / "version.urtable").write_bytes(data[:16] + blob + data[16 + length :])
    with pytest.raises(TableError, match="format version 9,"):
        SolvedTable.load(tmp_path / "version.urtable")


def test_interrupted_solve_resumes_from_the_last_finished_pair(tmp_path, monkeypatch):
    solve_module = __import__("sys").modules["urgym.solver.solve"]
    real = solve_module._solve_pair
    calls = []

    def interrupt_after_three(*args, **kwargs):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(args[2].scored)
        return real(*args, **kwargs)

    rules = get_rules("blitz", 2)
    out = tmp_path / "blitz.urtable"
    monkeypatch.setattr(solve_module, "_solve_pair", interrupt_after_three)
    with pytest.raises(KeyboardInterrupt):
        solver.solve(rules, progress=False, out=out)
    assert not out.exists() and out.with_name(out.name + ".partial.json").exists()
    first = list(calls)
    calls.clear()
    monkeypatch.setattr(solve_module, "_solve_pair", lambda *a, **k: (calls.append(a[2].scored), real(*a, **k))[1])
    resumed = solver.solve(rules, progress=False, out=out)
    assert not set(first) & set(calls)  # finished pairs were not solved again
    assert len(first) + len(calls) == len(resumed.index.pairs)
    fresh = solver.solve(rules, progress=False)
    assert np.max(np.abs(SolvedTable.load(out).probabilities() - fresh.probabilities())) < 1e-11
    assert not out.with_name(out.name + ".partial").exists()


def test_load_or_solve_uses_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))
    first = solver.load_or_solve("aseb", pieces=2, progress=False)
    path = solver.cached_table_path(get_rules("aseb", 2))
    assert path.parent == tmp_path and path.exists()
    second = solver.load_or_solve("aseb", pieces=2, progress=False)
    assert isinstance(second.values, np.memmap)
    assert np.array_equal(first.probabilities(), second.probabilities())


def test_a_cached_table_is_read_and_checked_once_while_it_is_in_use(tmp_path, monkeypatch):
    """An exact evaluation asks for the table three times: one read and one checksum, while any holder keeps it."""
    import os

    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))
    solver.load_or_solve("aseb", pieces=2, progress=False)
    reads = []
    real = SolvedTable.load
    monkeypatch.setattr(SolvedTable, "load", staticmethod(lambda *a, **k: (reads.append(a[0]), real(*a, **k))[1]))
    first = solver.load_or_solve("aseb", pieces=2, progress=False)
    assert solver.load_or_solve("aseb", pieces=2, progress=False) is first and len(reads) == 1
    path = solver.cached_table_path(get_rules("aseb", 2))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # the file changed: read again
    assert solver.load_or_solve("aseb", pieces=2, progress=False) is not first and len(reads) == 2


def test_cli_counts_and_solves(tmp_path, capsys):
    solve_main(["--count", "--pieces", "2"])
    out = capsys.readouterr().out
    assert "finkel" in out and "13,112" in out
    solve_main(["--rules", "masters", "--pieces", "1", "--out", str(tmp_path / "m.urtable"), "--no-progress"])
    assert "final residual" in capsys.readouterr().out
    assert SolvedTable.load(tmp_path / "m.urtable").rules == get_rules("masters", 1)
    with pytest.raises(SystemExit):
        solve_main(["--rules", "murray", "--pieces", "5", "--out", str(tmp_path / "x.urtable")])
    err = capsys.readouterr().err
    assert "murray with 5 pieces is too large to solve" in err and "2,868,316,800 positions" in err
    assert not (tmp_path / "x.urtable").exists()


def test_a_corrupt_cached_table_is_moved_aside_and_solved_again(tmp_path, capsys):
    from urgym.solver import cached_table_path, load_or_solve

    from urgym import Position, get_rules

    rules = get_rules("finkel", 1)
    first = load_or_solve(rules, progress=False, directory=tmp_path)
    start = first.win_probability(Position.start(rules))
    path = cached_table_path(rules, directory=tmp_path)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x40  # one flipped bit in the values
    path.write_bytes(bytes(data))
    again = load_or_solve(rules, progress=False, directory=tmp_path)
    assert again.win_probability(Position.start(rules)) == pytest.approx(start, abs=1e-11)
    assert path.with_name(path.name + ".corrupt").exists()
    assert "moved it to" in capsys.readouterr().err


def test_every_byte_of_the_header_is_covered(tmp_path, table):
    """Flipping any bit of the magic, the header length or the JSON header is refused with a TableError."""
    data = table.save(tmp_path / "t.urtable").read_bytes()
    length = struct.unpack("<Q", data[8:16])[0]
    for position in range(16 + length):
        for bit in (0x01, 0x20):
            flipped = bytearray(data)
            flipped[position] ^= bit
            (tmp_path / "f.urtable").write_bytes(bytes(flipped))
            with pytest.raises(TableError):
                SolvedTable.load(tmp_path / "f.urtable", verify=False)


def test_version_1_tables_still_load(tmp_path, table):
    path = table.save(tmp_path / "t.urtable")
    data = path.read_bytes()
    length = struct.unpack("<Q", data[8:16])[0]
    header = json.loads(data[16 : 16 + length])
    del header["header_checksum"]
    header["format_version"] = 1
    blob = json.dumps(header, sort_keys=True).encode().ljust(length)
    (tmp_path / "v1.urtable").write_bytes(data[:16] + blob + data[16 + length :])
    assert SolvedTable.load(tmp_path / "v1.urtable").header["format_version"] == 1


def _rewrite_header(path, out, change):
    """Write ``path`` to ``out`` with its JSON header changed by ``change`` (the header checksum kept valid)."""
    from urgym.solver.table import read_header, write_table

    header, offset = read_header(path)
    change(header)
    return write_table(out, header, np.frombuffer(path.read_bytes()[offset:], dtype=np.uint8))


@pytest.mark.parametrize("made", ["tiles-1", None])
def test_a_table_of_another_index_layout_is_refused_and_the_cache_solves_again(tmp_path, made, capsys, monkeypatch):
    """A murray table made before the tile layout's order changed would be read in the wrong order: refused."""
    rules = get_rules("murray", 1)
    path = solver.solve(rules, progress=False, out=tmp_path / "m.urtable").path
    assert SolvedTable.load(path).header["index"] == "tiles-2"
    old = _rewrite_header(path, tmp_path / "old.urtable", lambda h: h.update(index=made) if made else h.pop("index"))
    with pytest.raises(TableError, match="index layout 'tiles-1', this urgym by 'tiles-2': solve the rules again"):
        SolvedTable.load(old)
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path / "cache"))
    cached = solver.cached_table_path(rules)
    cached.parent.mkdir()
    os.replace(old, cached)
    table = solver.load_or_solve(rules, progress=False)  # moved aside and solved again
    assert table.header["index"] == "tiles-2" and "index layout" in capsys.readouterr().err
    assert cached.with_name(cached.name + ".corrupt").exists()
    # the dense layout's tables from before the field still load: their order never changed
    finkel = solver.solve(get_rules("finkel", 1), progress=False, out=tmp_path / "f.urtable").path
    bare = _rewrite_header(finkel, tmp_path / "bare.urtable", lambda h: h.pop("index"))
    assert SolvedTable.load(bare).index.layout == "dense"


def _interrupted_solve(tmp_path, monkeypatch, rules, pairs_done=3):
    solve_module = __import__("sys").modules["urgym.solver.solve"]
    real = solve_module._solve_pair
    calls = []

    def interrupt(*args, **kwargs):
        if len(calls) == pairs_done:
            raise KeyboardInterrupt
        calls.append(args[2].scored)
        return real(*args, **kwargs)

    out = tmp_path / "t.urtable"
    monkeypatch.setattr(solve_module, "_solve_pair", interrupt)
    with pytest.raises(KeyboardInterrupt):
        solver.solve(rules, progress=False, out=out)
    monkeypatch.setattr(solve_module, "_solve_pair", real)
    return out, calls


def test_resume_redoes_a_damaged_pair_and_the_pairs_after_it(tmp_path, monkeypatch, capsys):
    rules = get_rules("blitz", 2)
    out, done = _interrupted_solve(tmp_path, monkeypatch, rules)
    index = solver.PositionIndex(rules)
    start, end = index.pair_ranges[index.pairs.index(done[1])]
    partial = np.memmap(out.with_name(out.name + ".partial"), dtype=np.float64, mode="r+")
    partial[(start + end) // 2] += 0.75  # damage the second finished pair
    partial.flush()
    del partial
    resumed = solver.solve(rules, progress=False, out=out)
    err = capsys.readouterr().err
    assert f"layer pair {done[1]} in the checkpoint fails its checksum" in err
    assert "resuming from" in err and f"1 of {len(index.pairs)} layer pairs done" in err
    fresh = solver.solve(rules, progress=False)
    assert np.max(np.abs(resumed.probabilities() - fresh.probabilities())) < 1e-11


def test_an_unreadable_checkpoint_starts_afresh(tmp_path, monkeypatch, capsys):
    rules = get_rules("finkel", 2)
    out, _ = _interrupted_solve(tmp_path, monkeypatch, rules)
    out.with_name(out.name + ".partial.json").write_text("{not json")
    table = solver.solve(rules, progress=False, out=out)
    assert "is unreadable" in capsys.readouterr().err
    assert table.win_probability(Position.start(rules)) == pytest.approx(
        solver.solve(rules, progress=False).win_probability(Position.start(rules)), abs=1e-11
    )


@pytest.mark.parametrize(
    "field",
    [{"threaded": 5}, {"threaded": [1, 2]}, {"done": [1]}, {"done": {"7,7": "0"}}, {"crc": 3}, {"elapsed": "x"}],
)
def test_a_checkpoint_of_malformed_progress_starts_afresh(tmp_path, monkeypatch, capsys, field):
    rules = get_rules("finkel", 2)
    out, _ = _interrupted_solve(tmp_path, monkeypatch, rules)
    state_path = out.with_name(out.name + ".partial.json")
    state = json.loads(state_path.read_text())
    state_path.write_text(json.dumps({**state, **field}))  # the right key, the wrong shapes
    table = solver.solve(rules, progress=False, out=out)
    assert "is malformed; starting afresh" in capsys.readouterr().err
    assert np.array_equal(np.asarray(table.values), np.asarray(solver.solve(rules, progress=False).values))


@pytest.mark.parametrize("planted", ["fifo progress", "fifo values", "link values", "link progress"])
def test_a_checkpoint_path_that_is_no_regular_file_is_refused_and_nothing_written_through(tmp_path, planted):
    rules = get_rules("finkel", 2)
    out = tmp_path / "t.urtable"
    kind, which = planted.split()
    path = out.with_name(out.name + (".partial" if which == "values" else ".partial.json"))
    victim = tmp_path / "victim"
    victim.write_bytes(b"x" * 8 * 20_000)  # larger than the values: a solve writing through the link would change it
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(victim)
    with pytest.raises(ValueError, match=rf"{path.name} is not a regular file .*remove it"):
        solver.solve(rules, progress=False, out=out)
    assert victim.read_bytes() == b"x" * 8 * 20_000 and not out.exists()


def test_a_second_solve_of_the_same_output_is_refused(tmp_path):
    from urgym.files import hold_lock

    out = tmp_path / "t.urtable"
    held, path = hold_lock(out.with_name(out.name + ".lock"), "held by the test")
    try:
        with pytest.raises(ValueError, match="another solve is writing"):
            solver.solve(get_rules("finkel", 1), progress=False, out=out)
    finally:
        path.unlink()
        held.close()
    assert solver.solve(get_rules("finkel", 1), progress=False, out=out).path == out.resolve()


def test_only_ground_truth_is_used_from_the_cache(tmp_path, monkeypatch, capsys):
    """A looser solve written into the cache's slot is moved aside and solved again, never taken as ground truth.

    It may come by hand or from an old urgym; a solve with a loose tolerance and no --out is refused.
    """
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))
    rules = get_rules("finkel", 2)
    slot = solver.cached_table_path(rules)
    loose = solver.solve(rules, tol=0.9, progress=False, out=tmp_path / "loose.urtable")
    assert not loose.is_exact and "tolerance 0.9" in loose.precision_note
    os.replace(tmp_path / "loose.urtable", slot)
    table = solver.load_or_solve(rules, progress=False)
    assert table.is_exact and table.header["tol"] == solver.EXACT_TOL
    start = Position.start(rules)
    assert table.win_probability(start) == pytest.approx(0.5186, abs=1e-4)
    assert slot.with_name(slot.name + ".loose").exists() and "is not ground truth" in capsys.readouterr().err
    for argv, message in (
        (["--pieces", "2", "--tol", "0.9"], "holds ground truth only"),
        (["--pieces", "2", "--dtype", "float32"], "holds ground truth only"),
        (["--pieces", "2", "--tol", "0.9", "--out", str(slot)], "inside urgym's table cache"),
        (["--pieces", "2", "--tol", "1e-17"], "tol must be at least 1e-15"),
    ):
        with pytest.raises(SystemExit):
            solve_main(argv)
        assert message in capsys.readouterr().err
    assert solver.SolvedTable.load(slot).is_exact  # untouched


def test_lock_files_are_removed_when_the_solve_ends(tmp_path):
    out = tmp_path / "t.urtable"
    solver.solve(get_rules("finkel", 1), progress=False, out=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.urtable"]


def test_table_queries_refuse_bad_arguments(table):
    with pytest.raises(ValueError, match="index must be an integer from 0"):
        table.value_at(-1)
    with pytest.raises(ValueError, match="index must be an integer"):
        table.value_at(table.index.size)
    with pytest.raises(ValueError, match="side must be 'light' or 'dark'"):
        table.win_probability(Position.start(table.rules), side="x")


def test_a_header_with_an_unknown_dtype_is_a_table_error(tmp_path, table):
    from urgym.solver.table import read_header, write_table

    path = table.save(tmp_path / "t.urtable")
    header, offset = read_header(path)
    data = np.fromfile(path, dtype=np.uint8, offset=offset)
    write_table(tmp_path / "odd.urtable", {**header, "dtype": "float16"}, data)
    with pytest.raises(TableError, match="dtype 'float16' is not one of"):
        SolvedTable.load(tmp_path / "odd.urtable")


def test_the_perfect_player_refuses_rules_other_than_its_tables(table):
    from urgym.agents import make_agent

    agent = make_agent("perfect", table=table)
    other = get_rules("finkel", table.rules.pieces + 1)
    with pytest.raises(ValueError, match="was given the table of"):
        agent.check_rules(other)
    with pytest.raises(ValueError, match="was given the table of"):
        agent.table(other)


def test_the_benchmark_solves_again_a_cached_table_that_is_not_reproducible(tmp_path, monkeypatch, capsys):
    import numba
    from urgym.commands.common import check_solve_allowed
    from urgym.solver import TableMissingError, graph, table_for

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one core: every table solved here is reproducible")
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))
    monkeypatch.setattr(graph, "SMALL_PAIR", 2_000)
    rules = get_rules("finkel", 3)
    solver.solve(rules, progress=False, out=solver.cached_table_path(rules), threads=2)
    assert not solver.load_or_solve(rules, progress=False).reproducible  # plain use takes it as it is
    assert not solver.cached_reproducible(rules) and check_solve_allowed(rules, False) is None
    assert check_solve_allowed(rules, False, reproducible=True) is not None  # a solve to come, within the budget
    command = "`solve --rules finkel --pieces 3 --threads 1`"
    with pytest.raises(ValueError, match=rf"no reproducible solved table .*{command}"):
        check_solve_allowed(rules, False, limit=0.0, reproducible=True)
    with pytest.raises(TableMissingError, match=r"no reproducible solved table .*--threads 1"):
        table_for(rules, solve=False, reproducible=True)
    capsys.readouterr()
    table = table_for(rules, progress=False, reproducible=True)
    assert table.reproducible and "is not reproducible" in capsys.readouterr().err
    assert solver.cached_reproducible(rules) and solver.load_or_solve(rules, progress=False).reproducible


def test_a_solve_resumed_on_one_thread_sweeps_again_the_pairs_swept_on_several(tmp_path, monkeypatch, capsys):
    import numba
    from urgym.solver import graph

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one core: every table solved here is reproducible")
    solve_module = __import__("sys").modules["urgym.solver.solve"]
    real = solve_module._solve_pair
    monkeypatch.setattr(graph, "SMALL_PAIR", 2_000)
    rules, large = get_rules("finkel", 3), []

    def interrupt_at_the_second_large_pair(index, values, layer, *rest):
        if graph.swept_by_every_thread(layer.positions) and not layer.over:
            if large:
                raise KeyboardInterrupt
            large.append(layer.scored)
        return real(index, values, layer, *rest)

    fresh = solver.solve(rules, progress=False, threads=1)
    for first, then, reproducible in ((2, 2, False), (2, 1, True), (1, 1, True)):
        out = tmp_path / f"finkel3-{first}-{then}.urtable"
        large.clear()
        monkeypatch.setattr(solve_module, "_solve_pair", interrupt_at_the_second_large_pair)
        with pytest.raises(KeyboardInterrupt):
            solver.solve(rules, progress=False, out=out, threads=first)
        state = json.loads(out.with_name(out.name + ".partial.json").read_text())
        assert state["threaded"] == ([f"{large[0][0]},{large[0][1]}"] if first == 2 else [])
        monkeypatch.setattr(solve_module, "_solve_pair", real)
        capsys.readouterr()
        resumed = solver.solve(rules, progress=False, out=out, threads=then)
        swept_again = "swept on several threads; solving it and the pairs after it again" in capsys.readouterr().err
        assert swept_again is (first == 2 and then == 1)
        assert resumed.reproducible is reproducible
        assert (resumed.header["threaded_pairs"] == 0) is reproducible
        if reproducible:  # the very table a one-thread solve from scratch gives
            assert np.array_equal(np.asarray(resumed.values), np.asarray(fresh.values))
