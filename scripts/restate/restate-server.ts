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
	/**
	 * Gives the ports of each attempt, called in the order fabric, admin, ingress (default
	 * {@link freePort}). It exists so that a test can hand out a port that is taken, the race
	 * that `freePort` leaves open, and see the server come up on new ones.
	 */
	ports?: () => Promise<number>;
}

/** How many times {@link startRestateServer} starts the server when a port it was given was taken meanwhile. */
const ATTEMPTS = 3;

/** How long one health check may take: a request that hangs must not use up the wait. */
const HEALTH_TIMEOUT_MS = 5_000;

/** Whether the server said it could not bind a port ("failed binding to address '127.0.0.1:41933': Address in use (os error 98)"). */
function portTaken(server: ManagedProcess): boolean {
	return server.output.some((line) => /Address (already )?in use|os error 98/.test(line));
}

/** Whether `url` answers 2xx within {@link HEALTH_TIMEOUT_MS}. */
async function healthy(url: string): Promise<boolean> {
	return (await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) })).ok;
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
 * its ingress and admin API answer. A port can be taken by another process between
 * {@link freePort} and the server's bind; the server then exits ("Address in use"), and it is
 * started again on new ports, up to three attempts in all.
 *
 * @example
 * const server = await startRestateServer();
 * await server.register("http://127.0.0.1:9080");
 * await server.stop();
 */
export async function startRestateServer(options: RestateServerOptions = {}): Promise<RestateServer> {
	for (let attempt = 1; ; attempt++) {
		const started = await startOnce(options);
		if ("server" in started) return started.server;
		// Only a port taken meanwhile is worth another try: any other failure would fail again.
		if (attempt >= ATTEMPTS || !started.portTaken) throw started.error;
	}
}

/** One attempt of {@link startRestateServer}: the server, or why it did not come up (it is stopped and its data removed). */
async function startOnce(options: RestateServerOptions): Promise<{ server: RestateServer } | { error: unknown; portTaken: boolean }> {
	// Found before the data folder is made, which a missing binary would otherwise leave behind.
	const binary = restateServerBinary();
	const dir = await mkdtemp(join(tmpdir(), "agentchart-restate-"));
	const port = options.ports ?? freePort;
	const fabric = await port();
	const admin = await port();
	const ingress = await port();
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
	const server = startProcess("restate-server", binary, ["--config-file", configFile, "--base-dir", join(dir, "data"), "--no-logo"], {
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
		await waitUntil("restate-server's admin API", () => healthy(`${adminUrl}/health`), 60_000, server);
		await waitUntil("restate-server's ingress", () => healthy(`${ingressUrl}/restate/health`), 60_000, server);
	} catch (error) {
		await stop();
		return { error, portTaken: portTaken(server) };
	}
	return {
		server: {
			ingressUrl,
			adminUrl,
			process: server,
			dataDir: dir,
			async register(uri: string) {
				const response = await fetch(`${adminUrl}/deployments`, {
					method: "POST",
					headers: { "content-type": "application/json" },
					body: JSON.stringify({ uri, force: true }),
					// Restate asks the deployment what it serves before it answers: a worker that hangs must fail the start, not hang it.
					signal: AbortSignal.timeout(60_000),
				});
				if (!response.ok) throw new Error(`registering ${uri} failed: ${response.status} ${await response.text()}`);
			},
			stop,
		},
	};
}
