/**
 * GLSL of the view: the instanced entity layers (agents, predators, seek targets), the 3D sky
 * and the trails.
 *
 * Per-instance attributes are the frame's sections as sent: `iPos` (float32 world coordinates,
 * or uint16 normalized to [0, 1] in the q16 layout, dequantized here with the frame's bounding
 * box), `iHead` (float32 unit vector or int8 normalized to [-1, 1]; normalized here) and `iFlag`
 * (the flag byte). Orientation is computed here from the heading: no per-instance matrix is built
 * on the CPU. With 2 values per entry (2D) the attribute's z reads 0.
 *
 * The base geometry points along +x: in 2D its y axis maps to the heading's left-hand normal; in
 * 3D y maps to "up" (closest to +y, orthogonal to the heading) and z to the heading's side, both
 * rolled about the heading by the bird's bank (`iBank` [rad], from the frame's bank section;
 * positive toward the side: up cos + side sin, as the flight kernel tilts its lift), so a banked
 * bird shows an observer beside or below it more of its wings (docs/viewer.md, "Banking").
 *
 * 3D (cheap at 100 000 instances: 2 triangles per bird, no textures, no sorting):
 * - a bird is never drawn smaller than a few pixels (`uMinPixels`, less in flocks of over 10 000:
 *   see renderer.js; highlights have fixed, larger minimums), so a far flock stays a visible
 *   cloud instead of flickering sub-pixel darts;
 * - its wing tips beat (a phase from the frame's simulated time and the instance), so it
 *   freezes when paused and slows down in slow-motion replay;
 * - the selected agent, its neighbours and predators are never hidden by the flock (drawn nearer
 *   the camera along their line of sight, `uXray`);
 * - large flocks (translucent, see renderer.js): a plain bird's opacity follows its local density
 *   (`iDensity`, estimated on a coarse grid by density.js: `uDensity` 1), and a bird in a thin
 *   region is paler, so dense sheets are dark and thin regions light, as against the sky in
 *   footage;
 * - flat shading from the low sun, and aerial perspective: birds farther than the flock's near
 *   side fade toward the sky's colour in the flock's direction (`uFogNear` .. `uFogFar` view
 *   depth, at most `uFogMax`), highlights much less; both per vertex, so the fragment shader only
 *   fills: per pixel the birds and the sky cost what flat colours cost.
 * 2D: flat colours, highlights with a dark rim; fragments outside the world's region are not drawn (`uClipKind`: 1 box,
 * 2 ellipse), so birds that overshoot a soft wall do not cross the drawn border.
 *
 * Colours arrive in three.js's linear working space and are converted to the output colour space
 * at the end (the colorspace_fragment chunk), so they show as the sRGB values of palette.js.
 *
 * Written in GLSL ES 1.0 style (three.js maps `attribute`/`varying`/`gl_FragColor` to
 * GLSL ES 3.00 in WebGL 2, where `gl_InstanceID` and the integer bit operations are available).
 *
 * @module shaders
 */

/** The sky colour in a world direction (+y up): uniforms uZenith, uUpper, uHorizon, uGlow, uHaze, uGround, uSunDir. */
export const SKY_GLSL = /* glsl */ `
uniform vec3 uZenith;
uniform vec3 uUpper;
uniform vec3 uHorizon;
uniform vec3 uGlow;
uniform vec3 uHaze;
uniform vec3 uGround;
uniform vec3 uSunDir;

vec3 skyColour(vec3 dir) {
  vec3 d = normalize(dir);
  float e = d.y;
  if (e < 0.0) {
    return mix(mix(uHorizon, uHaze, smoothstep(0.0, 0.015, -e)), uGround, smoothstep(0.01, 0.2, -e));
  }
  vec3 c = mix(uHorizon, uUpper, smoothstep(0.0, 0.35, e));
  c = mix(c, uZenith, smoothstep(0.3, 1.0, e));
  float sun = max(dot(d, normalize(uSunDir)), 0.0);
  c += uGlow * (0.55 * pow(sun, 6.0) + 0.25 * pow(sun, 64.0)) * (1.0 - smoothstep(0.0, 0.5, e));
  return c;
}
`;

export const ENTITY_VERTEX = /* glsl */ `
attribute vec3 iPos;
attribute vec3 iHead;
attribute float iFlag;
attribute float iDensity;  // 3D agents of a large flock: local density relative to the flock's (density.js)
attribute float iBank;     // 3D banked birds: bank angle [rad], positive rolled toward the side (0: level)
attribute vec3 aEdge;      // 2D arrow: 0 along its outer edges (the rim of highlights)

uniform float uQuant;      // 1: iPos is normalized q16, dequantize with the box
uniform vec3 uBoxMin;      // frame bbox_min [world units]
uniform vec3 uBoxExt;      // bbox_max - bbox_min [world units]
uniform float uDim;        // 2 or 3
uniform float uSize;       // body length [world units]
uniform vec3 uColor;       // colour of an entry without a highlight flag
uniform float uUseFlags;   // 1: colour and size follow the flag byte (agents)
uniform vec3 uSelectedColor;
uniform vec3 uNeighborColor;
uniform vec3 uTurningColor;
uniform float uMinPixels;  // 3D: smallest drawn body length [px] (highlighted agents: their own, larger)
uniform float uMinPixels2D; // 2D: smallest drawn body length [px] (a lowered resolution never loses an agent)
uniform float uPixelSize;  // 3D: world size of one pixel at view depth 1
uniform float uViewPx;     // the view's height [px]
uniform float uStride;     // the level of detail draws 1 in uStride birds: each stands for uStride
uniform float uFlap;       // 3D: wing-beat phase [rad]
uniform float uFish;       // 3D: 1 for fish (the tail wags), 0 for birds (the wing tips beat)
uniform vec3 uSunDir;      // 3D: toward the sun (world)
uniform float uFogNear;    // 3D: view depth where haze begins [world units]
uniform float uFogFar;     // 3D: view depth of full haze [world units]
uniform float uFogMax;     // 3D: haze at uFogFar, 0..1
uniform vec3 uHazeColor;   // 3D: the sky's colour toward the flock
uniform float uHighlight;  // the layer's own highlight (predators 1)
uniform float uOpacity;    // plain entries' opacity (large 3D flocks: density shows as shade)
uniform float uDensity;    // 3D: 1 where iDensity shades plain entries (large flocks), 0 off
uniform float uXray;       // 3D: the selected agent, its neighbours and predators are drawn this much
                           // nearer the camera along their line of sight (same place and size on
                           // screen), so the flock does not hide them [world units]

varying vec3 vColor;
varying vec3 vEdge;
varying vec3 vWorld;
varying float vHighlight;  // 0 plain, up to 1 for the selected agent: less shading and haze
varying float vAlpha;      // opacity of a plain entry

void main() {
  vec3 p = uQuant > 0.5 ? uBoxMin + iPos * uBoxExt : iPos;
  float hl = length(iHead);
  vec3 fwd = hl > 1e-6 ? iHead / hl : vec3(1.0, 0.0, 0.0);
  vec3 up;
  vec3 side;
  if (uDim < 2.5) {
    fwd = normalize(vec3(fwd.xy, 0.0) + vec3(1e-9, 0.0, 0.0));
    up = vec3(-fwd.y, fwd.x, 0.0);
    side = vec3(0.0, 0.0, 1.0);
  } else {
    vec3 ref = abs(fwd.y) > 0.99 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0);
    side = normalize(cross(fwd, ref));
    up = cross(side, fwd);
    if (iBank != 0.0) {  // roll about the heading: the body's up tilts toward the side
      float cb = cos(iBank);
      float sb = sin(iBank);
      vec3 rolled = up * cb + side * sb;
      side = side * cb - up * sb;
      up = rolled;
    }
  }
  float size = uSize;
  float minPixels = uMinPixels;
  vec3 colour = uColor;
  float lift = 0.0;  // 2D: highlighted entries drawn above the others
  vHighlight = uHighlight;
  if (uUseFlags > 0.5) {
    int flag = int(iFlag + 0.5);
    if ((flag & 1) != 0) {
      colour = uSelectedColor; size *= 2.2; minPixels = 15.4; lift = 3.0; vHighlight = 1.0;
    } else if ((flag & 2) != 0) {
      colour = uNeighborColor; size *= 1.3; minPixels = 7.7; lift = 2.0; vHighlight = 0.8;
    } else if ((flag & 4) != 0) {
      colour = uTurningColor; minPixels = max(minPixels, 3.1); lift = 1.0; vHighlight = 0.6;
    }
  }
  vec3 local = position;
  vec4 centre = modelViewMatrix * vec4(p, 1.0);  // the bird's centre in view space
  float depth = 0.0;
  if (uDim > 2.5) {
    depth = max(-centre.z, 1e-6);
    size = max(size, minPixels * depth * uPixelSize / 1.6);  // base shapes are 1.6 long
    float phase = uFlap + float(gl_InstanceID) * 2.39996;
    if (uFish > 0.5) local.z += max(-local.x - 0.3, 0.0) * 0.5 * sin(0.5 * phase);
    else local.y += abs(local.z) * 0.45 * sin(phase);
    // flat shading from the face normal and aerial perspective, per vertex: the fragment shader
    // only fills (cheap at 100 000 birds, also in a software renderer)
    vec3 n = normalize(normal.x * fwd + normal.y * up + normal.z * side + vec3(1e-9));
    float lit = abs(dot(n, normalize(uSunDir)));
    colour *= mix(mix(0.6, 1.0, vHighlight), mix(1.6, 1.15, vHighlight), lit);
    float haze = clamp((depth - uFogNear) / max(uFogFar - uFogNear, 1e-6), 0.0, 1.0);
    float fog = haze * uFogMax * (1.0 - 0.75 * vHighlight);
    vAlpha = uOpacity;
    if (uDensity > 0.5 && vHighlight < 0.5) {
      // density shading (footage: dense parts near black, thin parts pale grey): a bird in a
      // dense sheet is more opaque, larger (at a distance the eye no longer separates its
      // neighbours: the sheet fills in) and a dark silhouette, little hazed; one in a thin region
      // or at an edge fainter and paled toward the sky
      float rho = clamp(iDensity, 0.05, 4.0);
      float dense = smoothstep(1.0, 2.2, rho);
      float thin = 1.0 - smoothstep(0.25, 1.0, rho);
      vAlpha = clamp(uOpacity * rho * rho, 0.06, 1.0);
      // a bird drawn for uStride birds (the level of detail thins the flock) stands for them:
      // uStride^(1/2) times their area (1.19 times as long at 1 in 2, 2 at 1 in 16) and, along a
      // line of sight, the opacity of uStride^(1/2) of them, so the flock keeps its shade
      size *= pow(uStride, 0.25);
      vAlpha = 1.0 - pow(1.0 - min(vAlpha, 0.999), sqrt(uStride));
      size *= clamp(pow(rho, 0.75), 0.6, 2.2);
      colour *= mix(1.0, 0.3, dense);
      fog = min(fog * (1.0 - 0.6 * dense) + 0.55 * thin, 0.92);
    }
    colour = mix(colour, uHazeColor, fog);
  } else {
    vAlpha = uOpacity;
    // world size of one pixel of the orthographic view: never drawn smaller than uMinPixels2D
    size = max(size, uMinPixels2D * 2.0 / (projectionMatrix[1][1] * max(uViewPx, 1.0)) / 1.6);
  }
  vec3 offset = size * (local.x * fwd + local.y * up + local.z * side);  // from the centre [world units]
  vec4 view;
  if (uDim < 2.5) {
    vec3 world = vec3(p.xy + offset.xy, lift);
    view = modelViewMatrix * vec4(world, 1.0);
    vWorld = (modelMatrix * vec4(world, 1.0)).xyz;  // for the world's clip region
  } else {
    // the centre's view position plus the rotated offset: one matrix product per vertex less
    view = vec4(centre.xyz + mat3(modelViewMatrix) * offset, 1.0);
    vWorld = vec3(0.0);  // 3D does not clip
    if (vHighlight > 0.7) {
      float d = max(-view.z, 1e-6);
      view.xyz *= (d - min(uXray, 0.9 * d)) / d;
    }
  }
  vColor = colour;
  vEdge = aEdge;
  gl_Position = projectionMatrix * view;
}
`;

export const ENTITY_FRAGMENT = /* glsl */ `
uniform float uShade;      // 1: 3D (shaded in the vertex shader); 0: 2D
uniform float uClipKind;   // 2D: 0 none, 1 box, 2 ellipse
uniform vec4 uClip;        // box: min x, min y, max x, max y; ellipse: 0, 0, semi-axis x, semi-axis y
uniform vec3 uRimColor;    // 2D: rim of highlighted entries
varying vec3 vColor;
varying vec3 vEdge;
varying vec3 vWorld;
varying float vHighlight;
varying float vAlpha;
void main() {
  if (uClipKind > 0.5) {
    if (uClipKind < 1.5) {
      if (vWorld.x < uClip.x || vWorld.y < uClip.y || vWorld.x > uClip.z || vWorld.y > uClip.w) discard;
    } else {
      vec2 q = vWorld.xy / uClip.zw;
      if (dot(q, q) > 1.0) discard;
    }
  }
  vec3 colour = vColor;
  if (uShade < 0.5 && vHighlight > 0.0) {
    // a dark rim about 1.3 px wide, so light highlights stand out on the light page
    vec3 rim = smoothstep(vec3(0.0), 1.3 * fwidth(vEdge), vEdge);
    colour = mix(uRimColor, colour, min(rim.x, min(rim.y, rim.z)));
  }
  gl_FragColor = vec4(colour, vHighlight > 0.5 ? 1.0 : vAlpha);
  #include <colorspace_fragment>
}
`;

/**
 * The 3D sky: a grid covering the screen at the far plane (`position.xy` in [-1, 1]); each vertex
 * takes the sky colour of its direction (`uInvViewProj` unprojects it) and the pixels in between
 * are interpolated: the gradient is smooth, and filling the screen costs no more than a flat
 * background (a software renderer fills it on the CPU).
 */
export const SKY_VERTEX = /* glsl */ `
uniform mat4 uInvViewProj;
varying vec3 vColour;
${SKY_GLSL}
void main() {
  vec4 far = uInvViewProj * vec4(position.xy, 1.0, 1.0);
  vColour = skyColour(far.xyz / far.w - cameraPosition);
  gl_Position = vec4(position.xy, 1.0, 1.0);
}
`;

export const SKY_FRAGMENT = /* glsl */ `
varying vec3 vColour;
void main() {
  gl_FragColor = vec4(vColour, 1.0);
  #include <colorspace_fragment>
}
`;

/**
 * Flappy Boids' rock: lit colours baked per vertex (`aColour`, rocks.js) fading toward the sky's
 * colour behind each vertex from view depth `uRockFogNear` to `uRockFogFar` [world units], where
 * the page stops drawing the rock: far walls come out of the haze instead of popping in. Per
 * vertex, so the fragment shader only fills. `vDepth` is the view depth [world units] for the
 * cut-away of ROCK_FRAGMENT.
 */
export const ROCK_VERTEX = /* glsl */ `
attribute vec3 aColour;
uniform float uRockFogNear;
uniform float uRockFogFar;
varying vec3 vColour;
varying float vDepth;
${SKY_GLSL}
void main() {
  vec4 world = modelMatrix * vec4(position, 1.0);
  vec4 view = viewMatrix * world;
  float haze = smoothstep(uRockFogNear, uRockFogFar, -view.z);
  vColour = mix(aColour, skyColour(world.xyz - cameraPosition), haze);
  vDepth = -view.z;
  gl_Position = projectionMatrix * view;
}
`;

/**
 * Flappy Boids' rock: the colour of ROCK_VERTEX, filled, with the rock nearer the camera than
 * `uRockCut` [world units of view depth] cut away, so that the chase camera, which follows the
 * target through gaps narrower than its offset, never looks at the inside of a wall instead of
 * the school. A hard cut: a dithered edge showed as a dotted line where it crossed a gap's walls.
 */
export const ROCK_FRAGMENT = /* glsl */ `
uniform float uRockCut;
varying vec3 vColour;
varying float vDepth;
void main() {
  if (vDepth < uRockCut) discard;
  gl_FragColor = vec4(vColour, 1.0);
  #include <colorspace_fragment>
}
`;

/**
 * Trails: per agent a line strip through its positions at the last few samples (`iP0` newest
 * ... `iP7` oldest, world coordinates) and its current position (`iNow`), fading with age.
 * A segment longer than `uMaxJump` (a wrap across a periodic edge) is not drawn.
 */
export const TRAIL_VERTEX = /* glsl */ `
attribute float aAge;     // 0: the agent now, k: the k-th sample back
attribute float aOther;   // age of the segment's other end
attribute vec3 iNow;
attribute vec3 iP0;
attribute vec3 iP1;
attribute vec3 iP2;
attribute vec3 iP3;
attribute vec3 iP4;
attribute vec3 iP5;
attribute vec3 iP6;
uniform float uHead;      // index of the newest sample slot (the slots are a ring)
uniform float uSamples;   // samples held (0 .. 7)
uniform float uMaxJump;   // [world units]
uniform float uDim;
varying float vAlpha;

vec3 slot(float k) {
  if (k < 0.5) return iP0;
  if (k < 1.5) return iP1;
  if (k < 2.5) return iP2;
  if (k < 3.5) return iP3;
  if (k < 4.5) return iP4;
  if (k < 5.5) return iP5;
  return iP6;
}

vec3 at(float age) {
  if (age < 0.5) return iNow;
  return slot(mod(uHead - (age - 1.0) + 7.0, 7.0));
}

void main() {
  vec3 p = at(aAge);
  vec3 q = at(aOther);
  float held = max(aAge, aOther) <= uSamples ? 1.0 : 0.0;
  float jump = length(p - q) <= uMaxJump ? 1.0 : 0.0;
  vAlpha = held * jump * (1.0 - aAge / (uSamples + 1.0));
  if (uDim < 2.5) p.z = -0.5;
  gl_Position = projectionMatrix * modelViewMatrix * vec4(p, 1.0);
}
`;

export const TRAIL_FRAGMENT = /* glsl */ `
uniform vec3 uColor;
uniform float uOpacity;
varying float vAlpha;
void main() {
  if (vAlpha <= 0.0) discard;
  gl_FragColor = vec4(uColor, vAlpha * uOpacity);
  #include <colorspace_fragment>
}
`;
