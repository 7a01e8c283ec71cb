/**
 * Flappy Boids in the page (docs/viewer.md, "Flappy Boids"): while the shown scene plays the game
 * (`params.game.enabled`) the player steers the flock's target with the arrow keys or WASD, or
 * by holding the mouse or a finger on the view (the target moves toward it); R restarts. The
 * camera chases the target; the rock meshes, walls and seabed alike, come from the server
 * (rocks.js; the page's flat sand seabed is not drawn under the course); a HUD shows the score,
 * the distance and the birds kept, and "game over" when none is left.
 *
 * @module flappy
 */

import { takesText } from "./keys.js";
import { RockLayer } from "./rocks.js";

/** Key -> [y, z] steering (y up, z to the right of a camera looking along +x). */
export const STEER_KEYS = {
  ArrowUp: [1, 0],
  ArrowDown: [-1, 0],
  ArrowLeft: [0, -1],
  ArrowRight: [0, 1],
  w: [1, 0],
  W: [1, 0],
  s: [-1, 0],
  S: [-1, 0],
  a: [0, -1],
  A: [0, -1],
  d: [0, 1],
  D: [0, 1],
};
/** Chase camera: offset from the target and the point it looks at, ahead of the target [world units]. */
const CAMERA_BEHIND = [-32, 9, 0];
const CAMERA_AHEAD = [24, 0, 0];
/**
 * Rock nearer the chase camera than the target's view depth less this [world units] is cut away
 * (rocks.js): the camera sits 9 units above the target, as far as the narrowest gap's radius, so it
 * is often inside the wall the target flies through, and the player saw only rock.
 */
const CUT_BEFORE_TARGET = 6;
/**
 * View depth [world units] of a point seen from a camera at `camera` looking at `look`.
 *
 * @param {number[]} camera
 * @param {number[]} look
 * @param {number[]} point
 * @returns {number}
 */
export function viewDepth(camera, look, point) {
  const dir = look.map((a, i) => a - camera[i]);
  const norm = Math.hypot(...dir) || 1;
  return point.reduce((sum, p, i) => sum + (p - camera[i]) * dir[i], 0) / norm;
}

/** View depth [world units] of the target seen from the chase camera at its default offset (CAMERA_BEHIND, CAMERA_AHEAD). */
export function chaseDepth() {
  return viewDepth(CAMERA_BEHIND, CAMERA_AHEAD, [0, 0, 0]);
}

/**
 * Where the chase camera sits for a `game` message: the server's `camera` (kept out of the rock
 * and above the seabed, behind the school: flocksim.game.flappy), else CAMERA_BEHIND the target.
 *
 * @param {{target: number[], camera?: number[]}} status
 * @returns {number[]}
 */
export function chaseCamera(status) {
  if (Array.isArray(status.camera) && status.camera.length === 3) return status.camera;
  return status.target.map((t, i) => t + CAMERA_BEHIND[i]);
}

/** Render order of the target in a game: after the rock and the fish (it is drawn over them). */
const TARGET_RENDER_ORDER = 10;

/** Rock is drawn this many walls ahead of the target, the farthest wall fading in from the haze. */
const VIEW_WALLS = 2;
/** Wall spacing [world units] until the game's parameters arrive. */
const DEFAULT_WALL_SPACING = 60;
/** Distance on screen from the target at which the mouse or a finger steers at full rate, per view height. */
const POINTER_FULL = 0.2;
const POINTER_INTERVAL_MS = 33;
/** Where this browser keeps its best Flappy Boids score (localStorage). */
export const BEST_KEY = "flocksim.flappy.best";

/**
 * The best score kept in this browser (0 when none or storage is blocked).
 *
 * @param {Storage|null} storage
 * @returns {number}
 */
export function readBest(storage) {
  try {
    const v = Number(storage?.getItem(BEST_KEY));
    return Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
  } catch {
    return 0;
  }
}

/**
 * Keep a score as the best if it beats it.
 *
 * @param {Storage|null} storage
 * @param {number} score
 * @returns {boolean} whether it is a new best
 */
export function keepBest(storage, score) {
  if (!(score > readBest(storage))) return false;
  try {
    storage?.setItem(BEST_KEY, String(Math.floor(score)));
  } catch {
    // storage blocked (private mode): the best lasts this page only
  }
  return true;
}
/**
 * The [y, z] steering of the held keys (each component in [-1, 1]).
 *
 * @param {Iterable<string>} keys KeyboardEvent.key values held down
 * @returns {number[]}
 */
export function keySteering(keys) {
  let y = 0;
  let z = 0;
  for (const key of keys) {
    const s = STEER_KEYS[key];
    if (s) {
      y += s[0];
      z += s[1];
    }
  }
  return [Math.max(-1, Math.min(1, y)), Math.max(-1, Math.min(1, z))];
}

/**
 * The [y, z] steering toward a pointer at (dx, dy) CSS pixels from the target's screen position.
 *
 * @param {number} dx to the right
 * @param {number} dy down
 * @param {number} full pixels at which the rate is full
 * @returns {number[]}
 */
export function pointerSteering(dx, dy, full) {
  let y = -dy / full;
  let z = dx / full;
  const length = Math.hypot(y, z);
  if (length > 1) {
    y /= length;
    z /= length;
  }
  return [y, z];
}

export class FlappyPage {
  /**
   * @param {import("./renderer.js").ViewRenderer} view
   * @param {HTMLCanvasElement} canvas
   * @param {(msg: object) => boolean} send
   */
  constructor(view, canvas, send) {
    this.view = view;
    this.canvas = canvas;
    this.send = send;
    this.rocks = new RockLayer(view.shared);
    this.wallSpacing = DEFAULT_WALL_SPACING;
    view.scene.add(this.rocks.group);
    this.active = false;
    /** the last `game` message */
    this.status = null;
    this.held = new Set();
    this.steering = [0, 0];
    this.player = false; // the player took over from the scripted pilot
    this.pointerId = null;
    this.lastPointerSend = 0;
    this.hud = document.createElement("div");
    this.hud.id = "flappy-hud";
    // items that wrap onto more lines rather than overflow a narrow view (a phone held upright:
    // the HUD of one 16 px line was cut off at both ends 412 px wide)
    Object.assign(this.hud.style, {
      position: "absolute",
      top: "6px",
      left: "50%",
      transform: "translateX(-50%)",
      boxSizing: "border-box",
      width: "max-content",
      maxWidth: "calc(100% - 12px)",
      display: "flex",
      flexWrap: "wrap",
      justifyContent: "center",
      columnGap: "0.9em",
      padding: "4px 10px",
      borderRadius: "6px",
      background: "rgba(20, 24, 32, 0.7)",
      color: "#f4f1e8",
      font: "600 clamp(12px, 3.4vw, 16px) system-ui, sans-serif",
      pointerEvents: "none",
      textAlign: "center",
    });
    this.hud.hidden = true;
    /** what the HUD calls the agents ("fish", "birds") */
    this.agents = "birds";
    this.storage = safeStorage();
    this.best = readBest(this.storage);
    /** the game that ended set a new best */
    this.newBest = false;
    this.end = document.createElement("div");
    this.end.id = "flappy-end";
    this.end.hidden = true;
    const parent = canvas.parentElement ?? canvas;
    if (getComputedStyle(parent).position === "static") parent.style.position = "relative";
    parent.appendChild(this.hud);
    parent.appendChild(this.end);
    parent.addEventListener("pointerdown", (e) => this._down(e), { capture: true });
    window.addEventListener("pointermove", (e) => this._move(e));
    window.addEventListener("pointerup", (e) => this._up(e));
    window.addEventListener("pointercancel", (e) => this._up(e));
    window.addEventListener("keyup", (e) => this.onKeyUp(e));
    window.addEventListener("blur", () => this._release());
  }

  /**
   * A `params` message: the game is on or off; a refill (restart) drops the rocks.
   *
   * @param {{reset: boolean, params: object}} msg
   */
  onParams(msg) {
    const active = Boolean(msg.params?.game?.enabled);
    const was = this.active;
    if (msg.reset || !active) this.rocks.clear();
    this.rocks.setSea(this.view.sea); // the view was configured for this scene first
    if (msg.reset) this.status = null;
    this.active = active;
    this.wallSpacing = msg.params?.game?.wall_spacing ?? DEFAULT_WALL_SPACING;
    this.hud.hidden = !active;
    if (msg.reset || !active) {
      this.end.hidden = true;
      this.newBest = false;
    }
    this.canvas.style.touchAction = active ? "none" : "";
    // the target is the player's cursor: drawn over the rock, last, so it is seen wherever it is
    this.view.targets.material.depthTest = !active;
    this.view.targets.mesh.renderOrder = active ? TARGET_RENDER_ORDER : 0;
    if (active) {
      this.view.setFollow(false, false);
      if (this.view.controls) this.view.controls.enabled = false;
      if (this.player && msg.reset) this.send({ type: "steer", y: 0, z: 0 }); // a restart stays the player's
    } else if (was) {
      if (this.view.controls) this.view.controls.enabled = true; // the camera is the user's again
      this.player = false;
    }
    this.view.dirty = true;
  }

  /** A rock-mesh message. */
  onRocks(buf) {
    this.rocks.add(buf);
    this.view.dirty = true;
  }

  /** A `game` message: counters, the target, the chunks that exist. */
  onGame(msg) {
    this.status = msg;
    this.rocks.keep(msg.chunks ?? []);
    // the best is the player's: a game the scripted pilot flew any part of does not count
    if (msg.autopilot === false && keepBest(this.storage, msg.score)) {
      this.best = msg.score;
      this.newBest = true;
    }
    this.hud.replaceChildren(...hudItems(msg, this.best, this.agents, !msg.game_over && !this.player).map(item));
    this.showEnd(msg);
  }

  /** The end screen: shown once no fish is left, until the restart. */
  showEnd(msg) {
    this.end.hidden = !msg.game_over;
    if (!msg.game_over) return;
    const best = this.newBest ? "a new best!" : msg.autopilot ? "autopilot: no best kept" : `best ${this.best}`;
    this.end.replaceChildren(
      line("h2", "Game over"),
      line("p", `score ${msg.score} (${best})`, "flappy-score"),
      line("p", `distance ${Math.floor(msg.distance)}; lost ${msg.lost_rock} on rock, ${msg.lost_behind} left behind`),
      line("p", "press R or tap to play again", "flappy-again"),
    );
  }

  /** After a frame is drawn: the chase camera behind the target. */
  afterShow() {
    if (!this.active || !this.status || this.view.dim !== 3) return;
    const target = this.status.target;
    const [x, y, z] = target;
    const cam = this.view.perspective;
    const at = chaseCamera(this.status);
    const look = target.map((t, i) => t + CAMERA_AHEAD[i]);
    cam.position.set(...at);
    this.view.controls?.target.set(...look);
    cam.lookAt(...look);
    this.rocks.cutNearerThan(viewDepth(at, look, target) - CUT_BEFORE_TARGET);
    const range = x - at[0] + VIEW_WALLS * this.wallSpacing;
    this.rocks.view(cam.position.x, range, this.wallSpacing);
    // the depth range follows the course around the target, not the whole (very long) box
    this.view.fitBox = { min: [x - 100, -10, -10], max: [x + 200, y + 60, z + 60] };
    this.view.dirty = true;
  }

  /**
   * A key went down: steering keys are the game's while it is shown.
   *
   * @param {KeyboardEvent} e
   * @returns {boolean} whether the key was taken
   */
  onKeyDown(e) {
    if (!this.active || !Object.hasOwn(STEER_KEYS, e.key) || e.ctrlKey || e.metaKey || e.altKey) return false;
    if (takesText(/** @type {any} */ (e.target))) return false;
    e.preventDefault();
    this.held.add(e.key);
    this._steer(keySteering(this.held));
    return true;
  }

  onKeyUp(e) {
    if (!this.held.delete(e.key)) return;
    this._steer(keySteering(this.held));
  }

  _steer([y, z]) {
    if (y === this.steering[0] && z === this.steering[1] && this.player) return;
    this.steering = [y, z];
    this.player = true;
    this.send({ type: "steer", y, z });
  }

  _pointerSteering(e) {
    if (!this.status) return [0, 0];
    const at = this.view.screenAt(this.status.target);
    const full = POINTER_FULL * this.canvas.getBoundingClientRect().height;
    return pointerSteering(e.clientX - at.x, e.clientY - at.y, full);
  }

  _down(e) {
    if (!this.active || (e.target !== this.canvas && e.target !== this.end && !this.end.contains(e.target))) return;
    if (e.button !== 0) return;
    e.preventDefault();
    e.stopPropagation();
    if (this.status?.game_over) {
      this.send({ type: "reset" }); // the end screen: a tap plays again
      return;
    }
    this.pointerId = e.pointerId;
    this._steer(this._pointerSteering(e));
  }

  _move(e) {
    if (this.pointerId === null || e.pointerId !== this.pointerId) return;
    const now = performance.now();
    if (now - this.lastPointerSend < POINTER_INTERVAL_MS) return;
    this.lastPointerSend = now;
    this._steer(this._pointerSteering(e));
  }

  _up(e) {
    if (this.pointerId === null || e.pointerId !== this.pointerId) return;
    this.pointerId = null;
    this._steer(keySteering(this.held));
  }

  _release() {
    this.held.clear();
    this.pointerId = null;
    if (this.active && this.player) this._steer([0, 0]);
  }
}

/**
 * The HUD's items: score, best, distance, agents kept (and lost), and the hint while the
 * scripted pilot flies.
 *
 * @param {{score: number, distance: number, alive: number, lost: number}} msg a `game` message
 * @param {number} best
 * @param {string} agents what the agents are called
 * @param {boolean} hint
 * @returns {string[]}
 */
export function hudItems(msg, best, agents, hint) {
  const items = [`score ${msg.score}`, `best ${best}`, `distance ${Math.floor(msg.distance)}`, `${agents} ${msg.alive} (lost ${msg.lost})`];
  if (hint) items.push("arrows / WASD, mouse or touch to steer");
  return items;
}

/** One HUD item: it wraps as a whole; the hint takes a line of its own. */
function item(text) {
  const node = document.createElement("span");
  node.textContent = text;
  node.style.whiteSpace = text.includes("steer") ? "normal" : "nowrap";
  if (text.includes("steer")) node.style.flexBasis = "100%";
  return node;
}

/** An element with text (and a class). */
function line(tag, text, className = "") {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** The page's localStorage, null where it is blocked. */
function safeStorage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
