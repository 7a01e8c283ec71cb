// Bundle the viewer page into the Python package: ../src/flocksim/viewer/static/
//   index.html, assets/main.js (three.js included), assets/main.css
// and the notebook widget's module (same renderer, docs/notebook.md): ../src/flocksim/notebook/static/
//   widget.js (an ES module for anywidget, three.js included), widget.css
// The static folders are build outputs (gitignored): they are emptied first so no stale file stays.
// FLOCKSIM_WEB_DEV=1 builds unminified with source maps (for debugging in the browser).
import { copyFile, mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "flocksim", "viewer", "static");
const widgetDir = join(here, "..", "src", "flocksim", "notebook", "static");
const dev = process.env.FLOCKSIM_WEB_DEV === "1";

await rm(outdir, { recursive: true, force: true });
await rm(widgetDir, { recursive: true, force: true });
await mkdir(join(outdir, "assets"), { recursive: true });
const options = {
  bundle: true,
  format: "esm",
  target: ["es2022"],
  minify: !dev,
  sourcemap: dev,
  legalComments: "linked",
  logLevel: "warning",
};
await esbuild.build({ ...options, entryPoints: { main: join(here, "src", "main.js") }, outdir: join(outdir, "assets") });
// anywidget loads the module from a string: source maps inline, not as a file beside it
const sourcemap = dev ? "inline" : false;
await esbuild.build({ ...options, sourcemap, entryPoints: { widget: join(here, "src", "widget.js") }, outdir: widgetDir });
await copyFile(join(here, "index.html"), join(outdir, "index.html"));
console.log(`built ${outdir} and ${widgetDir}`);
