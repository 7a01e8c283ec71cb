/**
 * The page's colours (sRGB 0xRRGGBB, as drawn). The highlights (selected bird, its neighbours,
 * birds turning, predators) keep the hues of their meaning (red, light red, yellow, orange) but
 * differ from each other and from the agents by a CIEDE2000 colour difference of at least 30
 * (web/test/palette.test.mjs), so they are told apart at a glance; they are also drawn larger.
 *
 * @module palette
 */

export const COLORS = {
  /** 2D page background (the 3D view draws a sky instead) */
  background: 0xe8eef4,
  /** agents in 2D (dark on the light background) */
  agent: 0x1f2a36,
  /** agents in 3D: near-black silhouettes against the sky, shaded and hazed with depth */
  agent3d: 0x10141c,
  selected: 0xe60026,
  neighbor: 0xff8fb8,
  turning: 0xffff00,
  predator: 0xff9c1a,
  target: 0x1a9850,
  obstacle: 0x8c7d6e,
  outline: 0x9aa7b4,
  /** the world's outline in 3D, faint against the sky */
  outline3d: 0xffffff,
  attract: 0x2ca25f,
  repel: 0x8856a7,
  /** 2D: the dark rim around highlighted entries (light colours on the light page) */
  rim: 0x1f2a36,
};

/**
 * The 3D sky: a gradient from the zenith to a warm horizon glow, a haze band below the horizon
 * fading into dark ground (a murmuration at dusk). The same colours tint distant birds (aerial
 * perspective).
 */
export const SKY = {
  zenith: 0x36598f,
  upper: 0x7f9ec7,
  horizon: 0xf4cfa6,
  glow: 0xffb47a,
  haze: 0xc9b8a6,
  ground: 0x2b302c,
};

/** Direction toward the low sun (world, +y up), for the sky's glow and the birds' shading. */
export const SUN_DIRECTION = [0.55, 0.18, -0.82];

/** The legend: [colour key, words] in the order shown in the panel ("bird" is the scene's agent). */
export const LEGEND = [
  ["selected", "selected bird (id 0)"],
  ["neighbor", "its 7 nearest neighbours"],
  ["turning", "in a spontaneous turn"],
  ["predator", "predator"],
];

/**
 * The legend for a scene whose agents are called `agent` ("bird", "fish", "person", ...).
 *
 * @param {string} [agent]
 * @returns {Array<[string, string]>}
 */
export function legendFor(agent = "bird") {
  return LEGEND.map(([key, words]) => [key, words.replace("bird", agent)]);
}
