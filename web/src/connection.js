/**
 * The viewer socket (`/ws`): JSON text messages both ways, binary frames server -> browser, and
 * pull flow control (docs/protocol.md): the client asks for one frame with `{"type": "next"}`
 * and asks again only after it has drawn it, so at most one frame is ever in flight.
 *
 * @module connection
 */

import { VERSION, readFrame } from "./protocol.js";
import { isRockMessage } from "./rocks.js";

/** Largest control message the server accepts [bytes] (hello.limits may say otherwise). */
export const MAX_CONTROL_BYTES = 65536;

/**
 * @typedef {object} ConnectionHandlers
 * @property {(msg: object) => void} onHello
 * @property {(msg: object) => void} onParams
 * @property {(msg: object) => void} onState
 * @property {(message: string) => void} onError an `error` reply or a local failure
 * @property {(frame: import("./protocol.js").Frame) => void} onFrame
 * @property {(open: boolean) => void} onStatus socket opened (true) or lost (false)
 * @property {(msg: object) => void} [onCompiling] the server compiles kernels (progress) or is done
 * @property {(buf: ArrayBuffer) => void} [onRocks] a Flappy Boids rock mesh (binary, not a frame)
 * @property {(msg: object) => void} [onGame] a Flappy Boids `game` message (score, target, chunks)
 */

export class Connection {
  /**
   * @param {string} url ws:// or wss:// URL of the viewer socket, query included
   * @param {ConnectionHandlers} handlers
   */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    /** @type {WebSocket|null} */
    this.socket = null;
    this.waiting = false; // a `next` is in flight
    this.maxBytes = MAX_CONTROL_BYTES;
    this.retryMs = 500;
    this.closed = false;
    this.bytesReceived = 0;
  }

  /** Open the socket (and reopen it after a loss, waiting longer each time, up to 8 s). */
  open() {
    const ws = new WebSocket(this.url);
    ws.binaryType = "arraybuffer";
    this.socket = ws;
    this.waiting = false;
    ws.onopen = () => {
      this.retryMs = 500;
      this.handlers.onStatus(true);
    };
    ws.onmessage = (event) => this._receive(event.data);
    ws.onclose = () => {
      this.handlers.onStatus(false);
      if (this.closed) return;
      setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 8000);
    };
  }

  /** Close for good (no reconnect). */
  close() {
    this.closed = true;
    this.socket?.close();
  }

  /** Whether the socket is open. */
  get isOpen() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /**
   * Send a control message.
   *
   * @param {object} message e.g. {type: "set", changes: {...}}
   * @returns {boolean} whether it was sent
   */
  send(message) {
    if (!this.isOpen) {
      this.handlers.onError("not connected to the server");
      return false;
    }
    const text = JSON.stringify(message);
    if (new TextEncoder().encode(text).length > this.maxBytes) {
      this.handlers.onError(`message of ${text.length} characters is over the ${this.maxBytes}-byte limit`);
      return false;
    }
    this.socket.send(text);
    return true;
  }

  /** Ask for the next frame unless one is already on its way. */
  requestFrame() {
    if (this.waiting || !this.isOpen) return;
    this.waiting = true;
    this.socket.send('{"type":"next"}');
  }

  _receive(data) {
    if (typeof data !== "string" && isRockMessage(data)) {
      this.bytesReceived += data.byteLength; // not a frame: the pull flow control does not count it
      this.handlers.onRocks?.(data);
      return;
    }
    if (typeof data !== "string") {
      this.waiting = false;
      this.bytesReceived += data.byteLength;
      let frame;
      try {
        frame = readFrame(data);
      } catch (err) {
        this.handlers.onError(`bad frame: ${err.message}`);
        return;
      }
      this.handlers.onFrame(frame);
      return;
    }
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      this.handlers.onError("the server sent a message that is not JSON");
      return;
    }
    switch (msg.type) {
      case "hello":
        if (msg.limits?.max_control_bytes) this.maxBytes = msg.limits.max_control_bytes;
        this.handlers.onHello(msg);
        break;
      case "params":
        this.handlers.onParams(msg);
        break;
      case "state":
        this.handlers.onState(msg);
        break;
      case "compiling":
        this.handlers.onCompiling?.(msg);
        break;
      case "game":
        this.handlers.onGame?.(msg);
        break;
      case "error":
        this.handlers.onError(String(msg.message));
        break;
      default:
        break; // unknown message types are ignored (forward compatibility)
    }
  }
}

/**
 * The socket URL for this page: same host, `/ws`, the frame version this page reads
 * (`protocol=2`: the server refuses other versions) and the page's own query string passed through
 * (`?preset=boids-2d&set=agents.n%3D200`).
 *
 * @param {{protocol: string, host: string, pathname: string, search: string}} location
 * @returns {string}
 */
export function socketUrl(location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const base = location.pathname.replace(/[^/]*$/, "");
  const query = new URLSearchParams(location.search);
  query.set("protocol", String(VERSION));
  return `${scheme}//${location.host}${base}ws?${query}`;
}
