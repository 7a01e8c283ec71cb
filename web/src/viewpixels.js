/**
 * Measures of the picture the view draws, for the tests and the benchmarks: what some objects add
 * to it (pixels compared, pixels.js) and what they cost to draw.
 *
 * @module viewpixels
 */

import { pixelDifference } from "./pixels.js";
import { ViewCamera } from "./viewcamera.js";

/** The view's pixel measures (the base of the renderer's class, renderer.js). */
export class ViewPixels extends ViewCamera {
  /**
   * What the flock adds to the picture: the scene rendered without the flock (agents,
   * predators, seek targets, trails) and with it, compared pixel by pixel (pixels.js). Nothing
   * when no agent is drawn, whatever the background.
   *
   * @returns {{width: number, height: number, foreground: number, box: number[]|null}} box: the
   *   differing pixels' bounds [left, top, right, bottom] in client (CSS pixel) coordinates
   */
  foregroundPixels() {
    return this.pixelsAddedBy([this.agents.mesh, this.predators.mesh, this.targets.mesh, this.trails.mesh]);
  }

  /**
   * What some objects of the scene add to the picture: the scene rendered without them and with
   * them (as they are shown), compared pixel by pixel.
   *
   * @param {THREE.Object3D[]} objects
   * @returns {{width: number, height: number, foreground: number, box: number[]|null}} box: the
   *   differing pixels' bounds [left, top, right, bottom] in client (CSS pixel) coordinates
   */
  pixelsAddedBy(objects) {
    const shown = objects.map((m) => m.visible);
    const gl = this.renderer.getContext();
    const w = gl.drawingBufferWidth;
    const h = gl.drawingBufferHeight;
    const read = () => {
      this.render();
      const px = new Uint8Array(w * h * 4);
      gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
      return px;
    };
    for (const m of objects) m.visible = false;
    const without = read();
    objects.forEach((m, k) => (m.visible = shown[k]));
    const withThem = read();
    const { count, box } = pixelDifference(without, withThem, w, h);
    const rect = this.canvas.getBoundingClientRect();
    const sx = rect.width / w;
    const sy = rect.height / h;
    const client = box && [rect.left + box[0] * sx, rect.top + box[1] * sy, rect.left + (box[2] + 1) * sx, rect.top + (box[3] + 1) * sy];
    return { width: w, height: h, foreground: count, box: client };
  }

  /**
   * The cost of drawing some objects: ``renders`` pairs of renders drawn to completion (a
   * one-pixel read waits for each), without and with the objects, alternately.
   *
   * @param {THREE.Object3D[]} objects
   * @param {number} renders pairs of renders timed (one untimed pair before)
   * @returns {{without_ms: number, with_ms: number}} mean wall time of one render [ms]
   */
  drawCost(objects, renders) {
    const shown = objects.map((m) => m.visible);
    const gl = this.renderer.getContext();
    const px = new Uint8Array(4);
    const time = (visible) => {
      objects.forEach((m, k) => (m.visible = visible && shown[k]));
      const t0 = performance.now();
      this.render();
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
      return performance.now() - t0;
    };
    let without = 0;
    let withThem = 0;
    for (let i = -1; i < renders; i++) {
      const a = time(false);
      const b = time(true);
      if (i >= 0) {
        without += a;
        withThem += b;
      }
    }
    objects.forEach((m, k) => (m.visible = shown[k]));
    return { without_ms: without / Math.max(renders, 1), with_ms: withThem / Math.max(renders, 1) };
  }
}
