"""The rock-mesh message (server -> browser, binary; docs/protocol.md, "Flappy Boids").

Layout, little-endian: a 32-byte header, magic ``FLKR``, uint16 version (1), uint16 header
size (32), int32 chunk index, uint32 vertex count V, uint32 triangle count F, 12 bytes of zeros;
then V x 3 float32 world coordinates [units] (x y z per vertex), zero padding to a multiple of 8
bytes, then F x 3 uint32 vertex indices (counter-clockwise seen from the air side not
guaranteed: draw both sides). Length: 32 + pad8(12 V) + 12 F.
"""

from __future__ import annotations

import struct

import numpy as np

from flocksim.game.mesh import ChunkMesh

MAGIC = b"FLKR"
VERSION = 1
HEADER = struct.Struct("<4sHHiII12x")
"""magic, version, header_size, chunk, vertices, triangles, reserved."""


def _pad8(n: int) -> int:
    return (n + 7) // 8 * 8


def encode_rocks(mesh: ChunkMesh) -> bytes:
    """The message carrying ``mesh``."""
    v = np.ascontiguousarray(mesh.vertices, dtype="<f4")
    f = np.ascontiguousarray(mesh.triangles, dtype="<u4")
    o_tri = HEADER.size + _pad8(v.nbytes)
    buf = bytearray(o_tri + f.nbytes)
    HEADER.pack_into(buf, 0, MAGIC, VERSION, HEADER.size, int(mesh.index), len(v), len(f))
    buf[HEADER.size : HEADER.size + v.nbytes] = v.tobytes()
    buf[o_tri:] = f.tobytes()
    return bytes(buf)


def decode_rocks(data: bytes) -> tuple[int, np.ndarray, np.ndarray]:
    """(chunk index, vertices (V, 3) float32, triangles (F, 3) uint32); ValueError for anything malformed."""
    if len(data) < HEADER.size:
        raise ValueError(f"rocks: {len(data)} bytes is shorter than the {HEADER.size}-byte header")
    magic, version, header_size, chunk, nv, nf = HEADER.unpack_from(data, 0)
    if magic != MAGIC or version != VERSION or header_size != HEADER.size:
        raise ValueError("rocks: not a version-1 FLKR message")
    o_tri = header_size + _pad8(12 * nv)
    if len(data) != o_tri + 12 * nf:
        raise ValueError(f"rocks: length {len(data)} differs from the {o_tri + 12 * nf} bytes the header implies")
    vertices = np.frombuffer(data, "<f4", 3 * nv, header_size).reshape(nv, 3)
    triangles = np.frombuffer(data, "<u4", 3 * nf, o_tri).reshape(nf, 3)
    if nf and int(triangles.max()) >= nv:
        raise ValueError("rocks: a triangle names a vertex beyond the vertex count")
    return int(chunk), vertices, triangles
