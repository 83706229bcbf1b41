"""PyTorch weight files read without torch: equal to torch.load, and safe against crafted files."""

import io
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from urgym.agents.outside.weights import read_state_dict

torch = pytest.importorskip("torch", reason="torch (the learn extra) writes the files these tests read")


def _saved(state) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def test_equal_to_torch_load_for_every_dtype_and_layout():
    generator = torch.Generator().manual_seed(0)
    state = {
        "dense": torch.randn(7, 5, generator=generator),
        "transposed": torch.randn(4, 6, dtype=torch.float64, generator=generator).t(),
        "sliced": torch.randn(10, generator=generator)[2:9:3],
        "half": torch.randn(3, generator=generator).half(),
        "long": torch.arange(5),
        "int8": torch.tensor([-3, 4], dtype=torch.int8),
        "mask": torch.tensor([True, False]),
        "parameter": torch.nn.Parameter(torch.ones(2, 2)),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(2.5),
    }
    data = _saved(state)
    ours = read_state_dict(data)
    theirs = torch.load(io.BytesIO(data), weights_only=True)
    assert ours.keys() == theirs.keys()
    for name, tensor in theirs.items():
        assert ours[name].dtype == tensor.detach().numpy().dtype, name
        assert np.array_equal(ours[name], tensor.detach().numpy()), name


def test_the_shipped_ppo_weights_equal_torch_load():
    from urgym.agents.models import DEFAULT_PPO_MODEL

    weights = zipfile.ZipFile(DEFAULT_PPO_MODEL).read("policy.pth")
    ours = read_state_dict(weights)
    theirs = torch.load(io.BytesIO(weights), weights_only=True)
    assert ours.keys() == theirs.keys()
    assert all(np.array_equal(ours[k], v.numpy()) for k, v in theirs.items())


def _with_pickle(data: bytes, payload: bytes) -> bytes:
    """``data`` (a weights file) with its data.pkl replaced by ``payload``."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename, payload if info.filename.endswith("/data.pkl") else source.read(info))
    return out.getvalue()


class _Shell:
    def __reduce__(self):
        import os

        return (os.system, ("echo owned",))


def test_a_pickle_that_names_anything_else_is_refused(tmp_path):
    data = _with_pickle(_saved({"w": torch.ones(2)}), pickle.dumps({"w": _Shell()}, protocol=2))
    with pytest.raises(ValueError, match=r"names (posix|os|nt)\.system"):
        read_state_dict(data)


def test_a_tensor_past_its_storage_is_refused():
    data = _saved({"w": torch.ones(4)})
    text = zipfile.ZipFile(io.BytesIO(data)).read(
        next(n for n in zipfile.ZipFile(io.BytesIO(data)).namelist() if n.endswith("data.pkl"))
    )
    # The pickle holds the shape (4,) as a small int: make it claim 200 numbers.
    crafted = text.replace(b"K\x04\x85", b"K\xc8\x85", 1)
    assert crafted != text
    with pytest.raises(ValueError, match="past its storage"):
        read_state_dict(_with_pickle(data, crafted))


@pytest.mark.parametrize("data", [b"", b"not a zip", b"PK\x05\x06" + bytes(18)])
def test_bytes_that_are_no_weights_file_are_refused(data):
    with pytest.raises(ValueError, match="not a PyTorch weights file"):
        read_state_dict(data)


def test_the_shipped_ppo_plays_without_torch():
    """Torch is blocked in a fresh interpreter: the ppo agent still loads and plays a match."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from urgym import get_rules\nfrom urgym.evaluation.scoring.match import play_match\n"
        "from urgym.evaluation.scoring.runner import RunOptions\n"
        "m = play_match('ppo', 'random', get_rules('finkel'), games=20,\n"
        "               run=RunOptions(workers=1, progress=False))\n"
        "print(m.agents[0].wins.rate)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.strip()) > 0.5  # the learned policy beats random play
