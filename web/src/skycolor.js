/**
 * The sky's colour in a world direction, on the CPU: the haze that tints distant birds is the sky
 * toward the flock (renderer.js).
 *
 * @module skycolor
 */

const smoothstep = (a, b, x) => {
  const t = Math.min(Math.max((x - a) / (b - a), 0), 1);
  return t * t * (3 - 2 * t);
};

/**
 * The sky's colour in a world direction: the mirror of `skyColour` in shaders.js (SKY_GLSL), on
 * the CPU, for the haze that tints distant birds (the sky toward the flock).
 *
 * @param {THREE.Vector3} direction
 * @param {Record<string, {value: *}>} u the sky uniforms (linear colours, sun direction)
 * @param {THREE.Color} out
 * @returns {THREE.Color} out
 */
export function skyColor(direction, u, out) {
  const d = direction.clone().normalize();
  const e = d.y;
  if (e < 0) {
    const haze = u.uHorizon.value.clone().lerp(u.uHaze.value, smoothstep(0, 0.015, -e));
    return out.copy(haze.lerp(u.uGround.value, smoothstep(0.01, 0.2, -e)));
  }
  out.copy(u.uHorizon.value).lerp(u.uUpper.value, smoothstep(0, 0.35, e));
  out.lerp(u.uZenith.value, smoothstep(0.3, 1, e));
  const sun = Math.max(d.dot(u.uSunDir.value.clone().normalize()), 0);
  const glow = (0.55 * sun ** 6 + 0.25 * sun ** 64) * (1 - smoothstep(0, 0.5, e));
  return out.add(u.uGlow.value.clone().multiplyScalar(glow));
}
