/**
 * The 2D/3D switch: which message turns the current scene into its other-dimension variant.
 *
 * A shipped preset named `NAME-2d` / `NAME-3d` (or `NAME-2d-VARIANT` / `NAME-3d-VARIANT`) whose
 * counterpart exists is switched by preset (starlings-2d <-> starlings-3d: two modes, each with its
 * own tuned world). Any other
 * parameter set is switched with one `set`: `world.dim`, the region's sizes (a third side equal
 * to the smaller of the first two, or dropped), obstacle points and the seek target given a
 * middle third coordinate (or dropping it), and `agents.planar` off for 2D. The server validates
 * the result like any `set`; an error is shown in the page.
 *
 * @module modes
 */

/**
 * The message that switches to the other dimension.
 *
 * @param {object} current the current `params` message ({preset, dim, params})
 * @param {string[]} presetNames shipped presets
 * @param {number} dim wanted dimension, 2 or 3
 * @returns {object|null} a control message, null when already in that dimension
 */
export function switchMessage(current, presetNames, dim) {
  if (current.dim === dim) return null;
  const name = current.preset;
  const m = name ? /^(.*)-([23])d(-[a-z0-9-]+)?$/.exec(name) : null;
  if (m) {
    const other = `${m[1]}-${dim}d${m[3] ?? ""}`;
    if (presetNames.includes(other)) return { type: "preset", name: other };
  }
  return { type: "set", changes: dimensionChanges(current.params, dim) };
}

/**
 * The `set` changes that carry a parameter set to another dimension.
 *
 * @param {object} params
 * @param {number} dim 2 or 3
 * @returns {Record<string, *>}
 */
export function dimensionChanges(params, dim) {
  const bounds = params.world.bounds;
  const size = resize(bounds.size, dim, Math.min(bounds.size[0], bounds.size[1]));
  // a middle height for points gaining a z: the region's centre on that axis
  const midZ = bounds.kind === "box" || bounds.kind === "periodic" ? size[2] / 2 : 0;
  const point = (p) => resize(p, dim, midZ);
  const changes = { "world.dim": dim, "world.bounds.size": size };
  if (params.agents && "planar" in params.agents && dim === 2 && params.agents.planar) {
    changes["agents.planar"] = false;
  }
  const obstacles = params.obstacles;
  if (obstacles) {
    if (obstacles.circles?.length) {
      changes["obstacles.circles"] = obstacles.circles.map((c) => ({ ...c, center: point(c.center) }));
    }
    if (obstacles.segments?.length) {
      changes["obstacles.segments"] = obstacles.segments.map((s) => ({ ...s, a: point(s.a), b: point(s.b) }));
    }
    if (obstacles.boxes?.length) {
      changes["obstacles.boxes"] = obstacles.boxes.map((b) => ({
        ...b,
        min_corner: resize(b.min_corner, dim, midZ - size[2] / 4),
        max_corner: resize(b.max_corner, dim, midZ + size[2] / 4),
      }));
    }
  }
  const roost = params.rules?.roost;
  if (roost && Array.isArray(roost.center) && roost.center.length !== dim) {
    changes["rules.roost.center"] = resize(roost.center, dim, 0);
  }
  const seek = params.rules?.seek;
  if (seek && Array.isArray(seek.target) && seek.target.length !== dim) changes["rules.seek.target"] = point(seek.target);
  if (seek && Array.isArray(seek.route) && seek.route.length) changes["rules.seek.route"] = seek.route.map(point);
  if (seek && Array.isArray(seek.group_targets) && seek.group_targets.length) {
    changes["rules.seek.group_targets"] = seek.group_targets.map(point);
  }
  return changes;
}

/** A vector cut to `dim` values or extended with `fill`. */
function resize(v, dim, fill) {
  return v.length >= dim ? v.slice(0, dim) : [...v, ...Array(dim - v.length).fill(fill)];
}
