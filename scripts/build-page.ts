/**
 * The visualizer page: `visualizer/app.ts` bundled by esbuild (a build-time tool only) into
 * `dist/visualizer/app.js`, beside its HTML and CSS, so the installed package serves a prebuilt
 * page and never needs a bundler at run time.
 *
 * `npm run build` builds it with the rest. Run alone (`tsx scripts/build-page.ts --if-stale`,
 * which `npm start` and `npm run visualize` do first), it builds the page only when it is
 * missing or older than its sources: a fresh clone's `npm start -- --inspect` needs the page,
 * and nothing else of `dist/`.
 */
import { copyFile, mkdir, readdir, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const sources = `${root}visualizer/`;
const page = `${root}dist/visualizer/`;

/** Bundles the page into dist/visualizer/. */
export async function buildPage(): Promise<void> {
	await mkdir(page, { recursive: true });
	await build({
		entryPoints: [`${sources}app.ts`],
		outfile: `${page}app.js`,
		bundle: true,
		format: "esm",
		platform: "browser",
		target: "es2022",
		minify: false,
		sourcemap: "linked",
		logLevel: "warning",
	});
	for (const file of ["index.html", "style.css"]) await copyFile(`${sources}${file}`, `${page}${file}`);
}

async function modifiedMs(path: string): Promise<number | undefined> {
	return (await stat(path).catch(() => undefined))?.mtimeMs;
}

/** True when the built page is missing or older than a file of visualizer/ (or the inspector it draws). */
async function pageIsStale(): Promise<boolean> {
	const built = await modifiedMs(`${page}app.js`);
	if (built === undefined) return true;
	for (const dir of [sources, `${root}src/inspect/`]) {
		for (const entry of await readdir(dir, { recursive: true })) {
			const changed = await modifiedMs(`${dir}${entry}`);
			if (changed !== undefined && changed > built) return true;
		}
	}
	return false;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	if (!process.argv.includes("--if-stale") || (await pageIsStale())) {
		await buildPage();
		console.error("built dist/visualizer/ (the visualizer page)");
	}
}
