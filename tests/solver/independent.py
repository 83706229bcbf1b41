"""An independent solution of small rule sets: explicit game graph from the Position API, policy iteration.

Positions are enumerated by brute force and keyed by their content (no ranking); each policy is evaluated
with an exact sparse linear solve. Nothing here uses the solver's index or kernels.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from urgym import Position, Rules


def canonical(p: Position) -> Position:
    """The same position with the side to move relabelled as light (self/other form)."""
    if p.turn == "light":
        return p
    return Position.from_pieces(
        p.rules,
        light=p.pieces("dark"),
        dark=p.pieces("light"),
        light_home=p.home("dark"),
        dark_home=p.home("light"),
        turn="light",
    )


def all_positions(rules: Rules) -> list[Position]:
    """Every valid position with light to move, by brute force over piece placements and home counts."""
    found = []
    cells = range(1, rules.length + 1)
    for k_light in range(rules.pieces + 1):
        for light in itertools.combinations(cells, k_light):
            for k_dark in range(rules.pieces + 1):
                for dark in itertools.combinations(cells, k_dark):
                    for lh in range(rules.pieces - k_light + 1):
                        for dh in range(rules.pieces - k_dark + 1):
                            # invalid placements (two pieces on one tile, both finished) raise ValueError
                            with contextlib.suppress(ValueError):
                                found.append(Position.from_pieces(rules, light, dark, lh, dh, "light"))
    return found


def solve_by_policy_iteration(rules: Rules, first_choice=None, max_iterations: int = 200) -> dict[Position, float]:
    """Policy iteration to a policy no move improves; its exactly solved values are the fixed point.

    ``first_choice(position, roll, moves)`` may give the starting move of each decision (default: the
    most advanced piece). The start only decides how many iterations are needed: the result is accepted
    only once exact policy evaluation leaves no improving move anywhere.
    """
    positions = all_positions(rules)
    key = {p: i for i, p in enumerate(positions)}
    rolls = [r for r in rules.rolls]
    # choices[i][roll] = list of (successor index or -1 for a win, sign): value = V[j] or 1 - V[j]
    choices = []
    for p in positions:
        per_roll = {}
        if not p.is_over:
            for r in rolls:
                options = []
                moves = p.legal_moves(r) or (None,)
                for m in moves:
                    result = p.move_result(r, m)
                    if result.won:
                        options.append((-1, True))
                    else:
                        options.append((key[canonical(result.position)], not result.extra_roll))
                per_roll[r] = options
        choices.append(per_roll)
    n = len(positions)
    policy = [{r: len(opts) - 1 for r, opts in c.items()} for c in choices]  # start: most advanced piece
    if first_choice is not None:
        for p, pol in zip(positions, policy, strict=True):
            for r in pol:
                moves = p.legal_moves(r)
                if moves:
                    pol[r] = moves.index(first_choice(p, r, moves))
    for _ in range(max_iterations):
        values = _evaluate(rules, positions, choices, policy, n)
        changed = False
        for i, c in enumerate(choices):
            for r, opts in c.items():
                q = [_option_value(values, o) for o in opts]
                best = int(np.argmax(q))
                if q[best] > q[policy[i][r]] + 1e-12:
                    policy[i][r] = best
                    changed = True
        if not changed:
            return {p: values[key[p]] for p in positions}
    raise AssertionError("policy iteration did not converge")


def _option_value(values: np.ndarray, option: tuple[int, bool]) -> float:
    j, passes = option
    if j < 0:
        return 1.0
    return 1.0 - values[j] if passes else values[j]


def _evaluate(rules: Rules, positions, choices, policy, n: int) -> np.ndarray:
    """Solve V = sum_r P(r) * value(chosen option) exactly for a fixed policy of both sides."""
    rows, cols, data = [], [], []
    b = np.zeros(n)
    for i, c in enumerate(choices):
        rows.append(i)
        cols.append(i)
        data.append(1.0)
        if not c:  # a finished game: certain for whoever has won
            b[i] = 1.0 if positions[i].winner == positions[i].turn else 0.0
        for r, opts in c.items():
            pr = rules.roll_probabilities[r]
            j, passes = opts[policy[i][r]]
            if j < 0:
                b[i] += pr
            elif passes:  # pr * (1 - V[j])
                b[i] += pr
                rows.append(i)
                cols.append(j)
                data.append(pr)
            else:  # pr * V[j]
                rows.append(i)
                cols.append(j)
                data.append(-pr)
    matrix = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
    # Scored pieces never come back: the system is block-triangular by the pair of scored counts, so it is
    # solved block by block from the most scored (each block exactly, with the later blocks known).
    groups: dict[tuple[int, int], list[int]] = {}
    for i, p in enumerate(positions):
        groups.setdefault(tuple(sorted((p.scored("light"), p.scored("dark")))), []).append(i)
    values = np.zeros(n)
    solved = np.zeros(n, dtype=bool)
    for key in sorted(groups, key=lambda k: -sum(k)):
        g = np.array(groups[key])
        rows_g = matrix[g]
        rhs = b[g] - rows_g[:, np.flatnonzero(solved)] @ values[solved]
        values[g] = solve_linear(rows_g[:, g].tocsr(), rhs)
        solved[g] = True
    return values


SUBSTITUTION_TOLERANCE = 1e-12
"""The largest residual a linear solve may leave: each equation holds to 1e-12 when its values are put back in."""


def solve_linear(matrix, rhs: np.ndarray) -> np.ndarray:
    """The exact solution of a game's value equations ``matrix @ x = rhs``, checked by substitution.

    A Krylov solve to rounding (bicgstab) takes milliseconds where a sparse LU of a large system takes seconds to
    hours (its fill-in); the LU remains for a system it does not solve to the substitution check's 1e-12. The systems
    are I - P with P substochastic (the chance of a position's successors), well conditioned for games that end.
    """
    values, failed = spla.bicgstab(matrix, rhs, rtol=1e-15, atol=0.0, maxiter=100_000)
    if not failed and _residual(matrix, values, rhs) < SUBSTITUTION_TOLERANCE:
        return values
    values = spla.spsolve(matrix.tocsc(), rhs)
    assert _residual(matrix, values, rhs) < SUBSTITUTION_TOLERANCE  # solved, checked by substitution
    return values


def _residual(matrix, values: np.ndarray, rhs: np.ndarray) -> float:
    """How far the worst equation misses when ``values`` are put back in."""
    return float(np.abs(matrix @ values - rhs).max())
