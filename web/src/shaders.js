/**
 * GLSL of the instanced entity layers (agents, predators, seek targets).
 *
 * Per-instance attributes are the frame's sections as sent: `iPos` (float32 world coordinates,
 * or uint16 normalized to [0, 1] in the q16 layout, dequantized here with the frame's bounding
 * box), `iHead` (float32 unit vector or int8 normalized to [-1, 1]; normalized here) and `iFlag`
 * (the flag byte). Orientation is computed here from the heading: no per-instance matrix is built
 * on the CPU. With 2 values per entry (2D) the attribute's z reads 0.
 *
 * The base geometry points along +x: in 2D its y axis maps to the heading's left-hand normal; in
 * 3D y maps to "up" (closest to +y, orthogonal to the heading) and z to the heading's side.
 *
 * Colours arrive in three.js's linear working space and are converted to the output colour space
 * at the end (the colorspace_fragment chunk), so they show as the sRGB values in layers.js.
 *
 * Written in GLSL ES 1.0 style (three.js maps `attribute`/`varying`/`gl_FragColor` to
 * GLSL ES 3.00 in WebGL 2, where the integer bit operations below are available).
 *
 * @module shaders
 */

export const ENTITY_VERTEX = /* glsl */ `
attribute vec3 iPos;
attribute vec3 iHead;
attribute float iFlag;

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

varying vec3 vColor;
varying vec3 vView;
varying float vShade;      // how much lighting darkens the faces (less for highlights: keep their hue)

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
  }
  float size = uSize;
  vec3 colour = uColor;
  float lift = 0.0;  // 2D: highlighted entries drawn above the others
  vShade = 0.3;
  if (uUseFlags > 0.5) {
    int flag = int(iFlag + 0.5);
    if ((flag & 1) != 0) {
      colour = uSelectedColor; size *= 2.2; lift = 3.0;
    } else if ((flag & 2) != 0) {
      colour = uNeighborColor; size *= 1.3; lift = 2.0;
    } else if ((flag & 4) != 0) {
      colour = uTurningColor; lift = 1.0;
    }
    if (lift > 0.0) vShade = 0.12;
  }
  vec3 world = p + size * (position.x * fwd + position.y * up + position.z * side);
  if (uDim < 2.5) world.z = lift;
  vec4 view = modelViewMatrix * vec4(world, 1.0);
  vColor = colour;
  vView = view.xyz;
  gl_Position = projectionMatrix * view;
}
`;

export const ENTITY_FRAGMENT = /* glsl */ `
uniform float uShade;      // 1: light the faces (3D), 0: flat colour (2D)
varying vec3 vColor;
varying vec3 vView;
varying float vShade;

void main() {
  vec3 colour = vColor;
  if (uShade > 0.5) {
    vec3 n = normalize(cross(dFdx(vView), dFdy(vView)));
    vec3 light = normalize(vec3(0.4, 0.8, 0.45));
    colour *= 1.0 - vShade + vShade * abs(dot(n, light));
  }
  gl_FragColor = vec4(colour, 1.0);
  #include <colorspace_fragment>
}
`;
