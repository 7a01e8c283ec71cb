/**
 * Keyboard shortcuts and focus: shortcuts act on the view unless a text field has the focus
 * (typing in a number, text or JSON field); a focused button, drop-down, checkbox or slider does
 * not also act on the key (no scene change on an arrow key, no checkbox ticked by Space).
 *
 * @module keys
 */

/** Input types whose keys are typing, not shortcuts. */
const TEXT_INPUTS = new Set(["text", "number", "search", "email", "url", "password", "tel", "date", "time"]);

/**
 * Whether an element takes typed text (then the keys are its own).
 *
 * @param {{tagName?: string, type?: string, isContentEditable?: boolean}|null} element
 * @returns {boolean}
 */
export function takesText(element) {
  if (!element) return false;
  if (element.isContentEditable) return true;
  const tag = (element.tagName ?? "").toUpperCase();
  if (tag === "TEXTAREA") return true;
  return tag === "INPUT" && TEXT_INPUTS.has(String(element.type ?? "text").toLowerCase());
}

/** Keys that change a closed drop-down's choice (Chromium): on the scene list they would switch
 * the scene and throw the flock away (and Up/Down are Flappy Boids' steering keys), so a closed
 * drop-down does not take them; Alt+Down, F4 or a click opens its list. */
export const DROPDOWN_KEYS = new Set(["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"]);

/**
 * Whether a key press on a focused element must not act on it as a drop-down choice.
 *
 * @param {{key: string, altKey?: boolean, target?: {tagName?: string}}} e
 * @returns {boolean}
 */
export function keepFromDropdown(e) {
  const tag = String(e.target?.tagName ?? "").toUpperCase();
  return tag === "SELECT" && !e.altKey && DROPDOWN_KEYS.has(e.key);
}

/** Shortcut keys (KeyboardEvent.key) and what they do. */
export const SHORTCUTS = {
  " ": "pause",
  c: "clean",
  C: "clean",
  Escape: "leave-clean",
  f: "fit",
  F: "fit",
  r: "reset",
  R: "reset",
  ArrowLeft: "turn-left",
  ArrowRight: "turn-right",
};

/**
 * The action of a key press, or null when it is not a shortcut here.
 *
 * @param {{key: string, ctrlKey?: boolean, metaKey?: boolean, altKey?: boolean, target?: object}} e
 * @returns {string|null}
 */
export function shortcutFor(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  if (takesText(/** @type {any} */ (e.target))) return null;
  return Object.hasOwn(SHORTCUTS, e.key) ? SHORTCUTS[e.key] : null;
}
