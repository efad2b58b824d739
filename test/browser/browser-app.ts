/**
 * The browser tests' page: test/browser/app.ts bundled by esbuild as a web developer bundles an
 * app (platform "browser", ES modules, no Node polyfills), with `agentchart` resolved by its
 * package name through package.json `exports` (its `browser` condition) to the built `dist/`,
 * never to `src/` (tsconfig.json's paths are not read).
 */
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";
import type { Browser, Page } from "playwright-core";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PAGE_HTML = '<!doctype html><html><body><script type="module" src="/app.js"></script></body></html>';

/** The bundled page script and the files that went into it. */
export interface BrowserBundle {
	code: string;
	inputs: string[];
}

/** Bundles test/browser/app.ts for the browser; fails with esbuild's messages (a `node:` import, say). */
export async function bundleApp(): Promise<BrowserBundle> {
	if (!existsSync(`${REPO_ROOT}dist/index.js`)) throw new Error("dist/ is missing: run `npm run build` first (the browser tests bundle the built package)");
	const result = await build({
		entryPoints: [`${REPO_ROOT}test/browser/app.ts`],
		absWorkingDir: REPO_ROOT,
		bundle: true,
		platform: "browser",
		format: "esm",
		target: "es2022",
		write: false,
		metafile: true,
		logLevel: "silent",
		// Without tsconfig.json's paths, `agentchart` resolves as in a user's project: by its exports.
		tsconfigRaw: {},
	});
	const output = result.outputFiles[0];
	if (!output) throw new Error("esbuild wrote no bundle");
	return { code: output.text, inputs: Object.keys((result.metafile as Metafile).inputs) };
}

/** A dev server for the page on 127.0.0.1 (a loopback page may call the providers' local servers). */
export async function serveApp(bundle: BrowserBundle): Promise<{ url: string; close(): Promise<void> }> {
	const server = createServer((req, res) => {
		if (req.url === "/app.js") res.writeHead(200, { "content-type": "text/javascript" }).end(bundle.code);
		else res.writeHead(200, { "content-type": "text/html" }).end(PAGE_HTML);
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/`,
		close: () => {
			server.closeAllConnections();
			return new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/**
 * The origin of a page the browser serves itself (a route, no server): plain http from a host that
 * is not local, so not a secure context, as an app on a LAN address or an intranet name is.
 */
export const INSECURE_ORIGIN = "http://agentchart-app.test";

/**
 * A page with the bundle loaded, from `url` (a {@link serveApp} server) or else from
 * {@link INSECURE_ORIGIN}; `errors` collects the page's uncaught errors.
 */
export async function openApp(browser: Browser, bundle: BrowserBundle, url?: string): Promise<{ page: Page; errors: string[] }> {
	const page = await browser.newPage();
	page.setDefaultTimeout(15_000);
	const errors: string[] = [];
	page.on("pageerror", (error) => errors.push(`${error.name}: ${error.message}`));
	if (url === undefined) {
		await page.route(`${INSECURE_ORIGIN}/**`, (route) => {
			const isScript = new URL(route.request().url()).pathname === "/app.js";
			return route.fulfill({ contentType: isScript ? "text/javascript" : "text/html", body: isScript ? bundle.code : PAGE_HTML });
		});
	}
	await page.goto(url ?? `${INSECURE_ORIGIN}/`);
	await page.waitForFunction(() => document.body.dataset["ready"] === "true");
	return { page, errors };
}

/** Runs `window.scenarios[name](argument)` in the page and returns its result. */
export function runScenario(page: Page, name: string, argument = ""): Promise<Record<string, unknown>> {
	return page.evaluate(
		([scenario, input]) => {
			const run = window.scenarios[scenario];
			if (!run) throw new Error(`no scenario ${scenario}`);
			return run(input);
		},
		[name, argument] as const,
	);
}
