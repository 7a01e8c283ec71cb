"""Path-finding for seekers (docs/design.md §3.7): occupancy grids and flow fields."""

from flocksim.navigation.flowfield import FlowField, grid_graph, move_allowed
from flocksim.navigation.occupancy import OccupancyGrid, walls_from_image, walls_from_map

__all__ = ["FlowField", "OccupancyGrid", "grid_graph", "move_allowed", "walls_from_image", "walls_from_map"]
