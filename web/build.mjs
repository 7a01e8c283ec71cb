// Bundle the viewer page into the Python package: ../src/flocksim/viewer/static/
//   index.html, assets/main.js (three.js included), assets/main.css
// The static folder is a build output (gitignored): it is emptied first so no stale file stays.
// FLOCKSIM_WEB_DEV=1 builds unminified with source maps (for debugging in the browser).
import { copyFile, mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "flocksim", "viewer", "static");
const dev = process.env.FLOCKSIM_WEB_DEV === "1";

await rm(outdir, { recursive: true, force: true });
await mkdir(join(outdir, "assets"), { recursive: true });
await esbuild.build({
  entryPoints: { main: join(here, "src", "main.js") },
  outdir: join(outdir, "assets"),
  bundle: true,
  format: "esm",
  target: ["es2022"],
  minify: !dev,
  sourcemap: dev,
  legalComments: "linked",
  logLevel: "warning",
});
await copyFile(join(here, "index.html"), join(outdir, "index.html"));
console.log(`built ${outdir}`);
