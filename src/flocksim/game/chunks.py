"""The chunks of the course kept around the flock: generated ahead of it, dropped behind it.

:class:`ChunkCache` holds at most ``chunks_ahead + chunks_behind + 1`` chunks (game parameters):
those from ``chunks_behind`` before the chunk at x to ``chunks_ahead`` after it. Each holds at
most ``max_triangles`` triangles (:mod:`flocksim.game.mesh`), so the meshes in memory are bounded
by the parameters, however far the flock flies. The chunk after the window is meshed ahead on
a background thread (one for all games), so that the step that needs it does not wait for
marching cubes (about 0.4 s a chunk); a chunk's mesh depends only on the course and its index,
so where it was made changes nothing.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from flocksim.game.course import Course
from flocksim.game.mesh import ChunkMesh, mesh_chunk
from flocksim.obstacles import ObstacleSet, build_obstacle_set
from flocksim.params import Circle, Obstacles

_MESHER: ThreadPoolExecutor | None = None
_MESHER_LOCK = threading.Lock()


def _mesher() -> ThreadPoolExecutor:
    """The one background thread that meshes chunks ahead for every game in the process."""
    global _MESHER
    with _MESHER_LOCK:
        if _MESHER is None:
            _MESHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flocksim-rocks")
        return _MESHER


class ChunkCache:
    """Chunks of ``course`` by index (ascending)."""

    def __init__(self, course: Course):
        self.course = course
        self.chunks: dict[int, ChunkMesh] = {}
        self._ahead: dict[int, Future[ChunkMesh]] = {}  # at most one chunk being meshed ahead

    @property
    def capacity(self) -> int:
        """Most chunks ever held."""
        g = self.course.game
        return g.chunks_ahead + g.chunks_behind + 1

    def window(self, x: float) -> range:
        """Indices of the chunks wanted when the flock is at ``x`` [units] (none before the box's start)."""
        g = self.course.game
        k = int(self.course.chunk_of(x))
        first = self.course.first_chunk
        return range(max(k - g.chunks_behind, first), max(k + g.chunks_ahead + 1, first))

    def update(self, x: float) -> bool:
        """Drop the chunks outside :meth:`window` (x), then make the missing ones; True when the set changed."""
        wanted = self.window(x)
        changed = False
        for k in [k for k in self.chunks if k not in wanted]:
            del self.chunks[k]
            changed = True
        for k in wanted:
            if k not in self.chunks:
                future = self._ahead.pop(k, None)
                self.chunks[k] = future.result() if future is not None else mesh_chunk(self.course, k)
                changed = True
        self._mesh_ahead(wanted.stop)
        return changed

    def _mesh_ahead(self, k: int) -> None:
        """Start meshing chunk ``k`` in the background (dropping any other chunk started ahead)."""
        self._ahead = {i: f for i, f in self._ahead.items() if i == k}
        if k not in self._ahead and k not in self.chunks:
            self._ahead[k] = _mesher().submit(mesh_chunk, self.course, k)

    def triangles(self) -> int:
        """Triangles held in all chunks."""
        return sum(len(c.triangles) for c in self.chunks.values())

    def obstacle_set(self, around: float, max_agent_radius: float) -> ObstacleSet:
        """The avoidance spheres of the chunks at and next to the one at x = ``around``, as the
        engine's obstacle set (:mod:`flocksim.obstacles`)."""
        g = self.course.game
        k = int(self.course.chunk_of(around))
        near = [c.spheres for i, c in sorted(self.chunks.items()) if k - 1 <= i <= k + 1]
        centres = np.concatenate(near) if near else np.zeros((0, 3))
        influence = g.avoid_range + g.avoid_cell / 2.0
        circles = [
            Circle.model_construct(center=[float(a), float(b), float(c)], body_radius=0.0, influence_radius=influence)
            for a, b, c in centres
        ]
        return build_obstacle_set(Obstacles.model_construct(circles=circles, segments=[], boxes=[]), 3, False,
                                  max_agent_radius)  # fmt: skip
