/**
 * A throwaway project that installs agentchart the way a user does: `npm pack` of this
 * repository (its `dist/`, as `npm publish` would ship it), then `npm install` of the tarball
 * into an empty folder. Tests that judge the package from outside run their code there.
 *
 * The project is cached per tarball checksum in the system's temp folder, and built once even
 * when several test files ask for it at the same time (a directory lock). Each holds a whole
 * install (about 200 MB), so the projects of other builds go once nobody used them for an hour.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
// Outside the repository: module resolution must not find the repository's own node_modules.
export const CACHE = join(tmpdir(), "agentchart-consumer");
/** How long the project of another build may go unused before it is removed. */
export const UNUSED_PROJECT_MS = 60 * 60_000;

/** The installed consumer project. */
export interface ConsumerProject {
	/** The project folder (its node_modules holds agentchart from the tarball). */
	dir: string;
	/** The tarball that was installed. */
	tarball: string;
}

/** Options of {@link consumerProject}. */
export interface ConsumerProjectOptions {
	/**
	 * Installs the optional peers the docs' examples need (the MCP and Restate SDKs, and
	 * pi-agent-core, which brings pi-ai) besides agentchart (default true). Without them the
	 * project is an application that installed agentchart alone, as npm leaves it.
	 */
	peers?: boolean;
}

/** Packages the consumer installs besides agentchart, pinned to what the repository tests with. */
function consumerDependencies(peers: boolean): Record<string, string> {
	const lock = JSON.parse(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
	const version = (name: string) => {
		const found = lock.packages[`node_modules/${name}`]?.version;
		if (!found) throw new Error(`consumer project: ${name} is not in package-lock.json`);
		return found;
	};
	if (!peers) return { typebox: version("typebox") };
	return {
		typebox: version("typebox"),
		"@types/node": version("@types/node"),
		"@mariozechner/pi-agent-core": version("@mariozechner/pi-agent-core"),
		// The optional peer of agentchart/mcp, installed as a user of that subpath does.
		"@modelcontextprotocol/sdk": version("@modelcontextprotocol/sdk"),
		// The optional peer of agentchart/restate (its worker side), for the docs' examples.
		"@restatedev/restate-sdk": version("@restatedev/restate-sdk"),
	};
}

function npm(args: string[], cwd: string): string {
	return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
}

async function sleep(ms: number): Promise<void> {
	await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Packs the repository's built package into `dir`; returns the tarball path and checksum. */
function pack(dir: string): { tarball: string; shasum: string } {
	if (!existsSync(join(REPO_ROOT, "dist", "index.js"))) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
	const output = npm(["pack", "--ignore-scripts", "--json", "--pack-destination", dir], REPO_ROOT);
	const [info] = JSON.parse(output) as { filename: string; shasum: string }[];
	if (!info) throw new Error(`npm pack printed no result: ${output}`);
	return { tarball: join(dir, info.filename), shasum: info.shasum };
}

async function install(dir: string, tarball: string, peers: boolean): Promise<void> {
	await mkdir(dir, { recursive: true });
	await copyFile(tarball, join(dir, "agentchart.tgz"));
	const manifest = {
		name: "agentchart-consumer",
		private: true,
		type: "module",
		dependencies: { agentchart: "file:./agentchart.tgz", ...consumerDependencies(peers) },
	};
	await writeFile(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
	npm(["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], dir);
}

/**
 * The consumer project for the current build, installing it if needed.
 *
 * @example
 * const { dir } = await consumerProject();
 * execFileSync("node", ["app.mjs"], { cwd: dir });
 */
export async function consumerProject(options: ConsumerProjectOptions = {}): Promise<ConsumerProject> {
	const peers = options.peers ?? true;
	await mkdir(CACHE, { recursive: true });
	const scratch = await mkdtemp(join(tmpdir(), "agentchart-pack-"));
	const { tarball, shasum: packed } = pack(scratch);
	// The project without peers is another project of the same build.
	const shasum = peers ? packed : `${packed}-no-peers`;
	const dir = join(CACHE, shasum);
	const ready = join(dir, ".ready");
	const lock = `${dir}.lock`;
	for (;;) {
		if (existsSync(ready)) break;
		try {
			await mkdir(lock);
		} catch {
			// Another test file is installing it; a lock older than 5 minutes is a crashed run.
			const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
			if (age > 300_000) await rm(lock, { recursive: true, force: true });
			await sleep(200);
			continue;
		}
		try {
			const staging = `${dir}.staging`;
			await rm(staging, { recursive: true, force: true });
			await install(staging, tarball, peers);
			await rm(dir, { recursive: true, force: true });
			await rename(staging, dir);
			await writeFile(ready, shasum);
		} finally {
			await rm(lock, { recursive: true, force: true });
		}
	}
	await rm(scratch, { recursive: true, force: true });
	const now = new Date();
	await utimes(ready, now, now);
	await removeUnusedProjects(shasum);
	return { dir, tarball: join(dir, "agentchart.tgz") };
}

/**
 * Removes the cached projects of other builds (and what a crashed install left of one) that
 * nobody used for {@link UNUSED_PROJECT_MS}: a project's use is the time of its `.ready` file,
 * touched by every {@link consumerProject} call.
 */
async function removeUnusedProjects(current: string): Promise<void> {
	for (const name of await readdir(CACHE)) {
		if (name === current || name.startsWith(`${current}.`)) continue;
		const path = join(CACHE, name);
		const used = (await stat(join(path, ".ready")).catch(() => undefined)) ?? (await stat(path).catch(() => undefined));
		if (used && Date.now() - used.mtimeMs > UNUSED_PROJECT_MS) await rm(path, { recursive: true, force: true });
	}
}

/** Reads a file of the consumer project (for assertions on what was installed). */
export async function readConsumerFile(project: ConsumerProject, path: string): Promise<string> {
	return readFile(join(project.dir, path), "utf8");
}
