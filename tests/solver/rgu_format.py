"""A reader of RoyalUr's .rgu files written only from the format's description (independent of solver.rgu).

RGU, version byte 0, big-endian signed 4-byte header length, UTF-8 JSON header, 4-byte number of maps,
4-byte entries per map, then all keys (unsigned 4-byte, big-endian), then all values (unsigned 2-byte).
"""

import json
import struct
from pathlib import Path


def read(path):
    data = Path(path).read_bytes()
    assert data[:3] == b"RGU" and data[3] == 0
    (length,) = struct.unpack(">i", data[4:8])
    header = json.loads(data[8 : 8 + length].decode("utf-8"))
    at = 8 + length
    (maps,) = struct.unpack(">i", data[at : at + 4])
    sizes = struct.unpack(f">{maps}i", data[at + 4 : at + 4 + 4 * maps])
    at += 4 + 4 * maps
    total = sum(sizes)
    keys = list(struct.unpack(f">{total}I", data[at : at + 4 * total]))
    values = list(struct.unpack(f">{total}H", data[at + 4 * total : at + 6 * total]))
    assert at + 6 * total == len(data)
    return header, keys, values
