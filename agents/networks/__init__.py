"""Value networks: the one file format and forward pass, and the agents that play them.

The format and the forward pass are :mod:`~urgym.agents.networks.value`; the agents that play a network alone or at the
leaves of the one search are :mod:`~urgym.agents.networks.neural` (``neural``, and the network estimate hints use) and
TD(lambda)'s agent :mod:`~urgym.agents.networks.td` (``td``).
"""

# NetArrays and Scratch here too: numba's cache of urgym 0.5 pickled them under this name (a module then), and
# reads that pickle before it sees the cache is stale.
from urgym.agents.networks.value import ACTIVATIONS, MAX_NETWORK_BYTES, NetArrays, Scratch, ValueNetwork, network_values

__all__ = ["ACTIVATIONS", "MAX_NETWORK_BYTES", "NetArrays", "Scratch", "ValueNetwork", "network_values"]
