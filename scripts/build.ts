/**
 * `npm run build`: the package as users install it.
 *
 * 1. `tsc -p tsconfig.build.json`: `src/` → `dist/` as ES modules, one file per module, with
 *    declarations and source maps that carry their sources (the package ships no `.ts` files,
 *    so a map that only named them would send a stack trace or a debugger nowhere). One output file per source file keeps optional integrations
 *    (`agentchart/mcp`, the OpenAI SDK, the visualizer's server) in modules of their own, loaded
 *    only when used.
 * 2. The visualizer page (scripts/build-page.ts): `visualizer/app.ts` bundled into
 *    `dist/visualizer/app.js`, beside its HTML and CSS.
 */
import { spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { buildPage } from "./build-page.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = `${root}dist/`;
const require = createRequire(import.meta.url);

await rm(dist, { recursive: true, force: true });
// tsc emits even when it reports type errors; the build still fails on them, after the page.
const compiled = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", `${root}tsconfig.build.json`], { stdio: "inherit" });

await buildPage();
if (compiled.status !== 0) {
	console.error("build: tsc reported errors (see above)");
	process.exit(compiled.status ?? 1);
}
console.log(`built ${dist}`);
