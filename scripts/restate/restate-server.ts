/**
 * `restate-server` for the tests, the demo and the bench: the Linux x64 binary that the npm
 * package `@restatedev/restate-server` ships, started on 127.0.0.1 (free ports, TCP only) with
 * its data in a temporary folder that is removed when it stops.
 */
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ManagedProcess, freePort, startProcess, waitUntil } from "./processes.js";

/** A running restate-server. */
export interface RestateServer {
	/** Where clients call handlers (`POST {ingressUrl}/{service}/{key}/{handler}`). */
	readonly ingressUrl: string;
	/** The admin API (`POST {adminUrl}/deployments` registers a worker). */
	readonly adminUrl: string;
	readonly process: ManagedProcess;
	/** The temporary folder of its config and data (removed when it stops, or when this process exits). */
	readonly dataDir: string;
	/** Registers the deployment at `uri` (a worker, or the balancer in front of several). */
	register(uri: string): Promise<void>;
	/** Stops the server and removes its data. */
	stop(): Promise<void>;
}

/** Options of {@link startRestateServer}. */
export interface RestateServerOptions {
	/** Retry delays of failed invocation attempts (a killed worker): short, so tests recover fast. */
	retryInitialMs?: number;
	retryMaxMs?: number;
	/** Called with each line the server prints. */
	onLine?: (line: string) => void;
}

/**
 * The path of the restate-server binary installed from npm.
 *
 * @example
 * restateServerBinary(); // ".../node_modules/@restatedev/restate-server-linux-x64/bin/restate-server"
 */
export function restateServerBinary(): string {
	const require = createRequire(import.meta.url);
	const platform = `${process.platform}-${process.arch}`;
	const manifest = require.resolve(`@restatedev/restate-server-${platform}/package.json`);
	return join(dirname(manifest), "bin", "restate-server");
}

/**
 * Starts restate-server on free 127.0.0.1 ports with a temporary data folder, and waits until
 * its ingress and admin API answer.
 *
 * @example
 * const server = await startRestateServer();
 * await server.register("http://127.0.0.1:9080");
 * await server.stop();
 */
export async function startRestateServer(options: RestateServerOptions = {}): Promise<RestateServer> {
	const dir = await mkdtemp(join(tmpdir(), "agentchart-restate-"));
	const [fabric, admin, ingress] = [await freePort(), await freePort(), await freePort()];
	// Small and quiet: a few partitions, a small RocksDB budget (the machine is shared), no
	// telemetry, no web UI, TCP only (no unix sockets in the data folder).
	const config = `
cluster-name = "agentchart"
default-num-partitions = 4
rocksdb-total-memory-size = "256 MiB"
disable-telemetry = true
listen-mode = "tcp"
bind-address = "127.0.0.1:${fabric}"
log-format = "compact"
log-disable-ansi-codes = true
log-filter = "warn"

[admin]
bind-address = "127.0.0.1:${admin}"
disable-web-ui = true

[ingress]
bind-address = "127.0.0.1:${ingress}"

[default-retry-policy]
initial-interval = "${options.retryInitialMs ?? 100}ms"
exponentiation-factor = 2.0
max-interval = "${options.retryMaxMs ?? 1000}ms"
max-attempts = 1000
on-max-attempts = "pause"
`;
	const configFile = join(dir, "restate.toml");
	await writeFile(configFile, config);
	// The server makes temporary folders of its own (`invoker-*`), which it leaves behind: in ours, they go with it.
	const temporary = join(dir, "tmp");
	await mkdir(temporary);
	const server = startProcess("restate-server", restateServerBinary(), ["--config-file", configFile, "--base-dir", join(dir, "data"), "--no-logo"], {
		env: { ...process.env, RUST_BACKTRACE: "0", TMPDIR: temporary },
		...(options.onLine ? { onLine: options.onLine } : {}),
	});
	const ingressUrl = `http://127.0.0.1:${ingress}`;
	const adminUrl = `http://127.0.0.1:${admin}`;
	// However this process ends, the data folder goes with the server (the exit hook of
	// processes.ts kills it first: listeners run in the order they were added).
	const removeData = () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
	process.on("exit", removeData);
	const stop = async () => {
		await server.stop("SIGTERM");
		await rm(dir, { recursive: true, force: true });
		process.off("exit", removeData);
	};
	try {
		await waitUntil("restate-server's admin API", async () => (await fetch(`${adminUrl}/health`)).ok, 60_000, server);
		await waitUntil("restate-server's ingress", async () => (await fetch(`${ingressUrl}/restate/health`)).ok, 60_000, server);
	} catch (error) {
		await stop();
		throw error;
	}
	return {
		ingressUrl,
		adminUrl,
		process: server,
		dataDir: dir,
		async register(uri: string) {
			const response = await fetch(`${adminUrl}/deployments`, {
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify({ uri, force: true }),
			});
			if (!response.ok) throw new Error(`registering ${uri} failed: ${response.status} ${await response.text()}`);
		},
		stop,
	};
}
