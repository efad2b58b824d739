/**
 * The set-up a Restate test file shares between its tests: a cluster (`cluster.ts`) started in
 * vitest's `beforeAll` and stopped in its `afterAll`, and RESTATE_* settings given to one start of
 * restate-server. Apart from `cluster.ts` because it imports vitest, under which the demo and the
 * bench (its other users) do not run.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { createSessionClient, type SessionClient } from "../../src/restate/client.js";
import { type Cluster, type ClusterOptions, startCluster } from "./cluster.js";

/** What {@link useLoggedCluster} starts, once its `beforeAll` has run. */
export interface LoggedCluster {
	/** A temporary folder of the file's own, removed at the end (the workers also look there for marker files a test writes, `deploy-v2-<sessionId>`). */
	readonly dir: string;
	/** The file the workers log every model request and tool execution to (read it with `readExecutions`). */
	readonly execLog: string;
	readonly cluster: Cluster;
	/** A session client on the cluster's ingress. */
	readonly client: SessionClient;
}

/**
 * Starts a cluster for the test file in `beforeAll` (two workers unless `options` say otherwise),
 * whose workers log their executions to `execLog` in a new temporary folder named from `prefix`,
 * and stops it and removes the folder in `afterAll`: also when `beforeAll` failed half-way, so that
 * no process outlives the file. The fields of what it returns are there from `beforeAll` on; read
 * before, they throw (a module-level read would otherwise see `undefined` and fail far from here).
 *
 * An `afterAll` the file registers after this call runs before the cluster stops (vitest runs
 * `afterAll` hooks in the reverse order of their registration).
 *
 * @example
 * const setup = useLoggedCluster("agentchart-restate-test-", { env: { STREAM_DELAY_MS: "2" } });
 * it("runs the tool once", async () => {
 * 	await setup.client.session("s1").prompt("slow-tool:100");
 * 	expect(executionCounts(await readExecutions(setup.execLog)).get("s1 work t0_0")).toBe(1);
 * });
 */
export function useLoggedCluster(prefix: string, options: ClusterOptions = {}): LoggedCluster {
	let dir: string | undefined;
	let cluster: Cluster | undefined;
	let up: LoggedCluster | undefined;
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), prefix));
		const execLog = join(dir, "executions.log");
		await writeFile(execLog, "");
		cluster = await startCluster({ workers: 2, ...options, env: { ...options.env, EXEC_LOG: execLog } });
		up = { dir, execLog, cluster, client: createSessionClient({ ingressUrl: cluster.ingressUrl }) };
	}, 120_000);
	afterAll(async () => {
		try {
			await cluster?.stop();
		} finally {
			if (dir !== undefined) await rm(dir, { recursive: true, force: true });
		}
	}, 60_000);
	const ready = (): LoggedCluster => {
		if (!up) throw new Error(`useLoggedCluster(${JSON.stringify(prefix)}): the cluster is not up: read its fields in a test or a hook that runs after its beforeAll`);
		return up;
	};
	return {
		get dir() {
			return ready().dir;
		},
		get execLog() {
			return ready().execLog;
		},
		get cluster() {
			return ready().cluster;
		},
		get client() {
			return ready().client;
		},
	};
}

/**
 * Runs `fn` with `vars` set in `process.env`, and puts back what was there before (an unset
 * variable unset again) once it has settled, failed or not. restate-server reads its settings from
 * RESTATE_* variables too, over its config file, and copies the environment when it starts: set
 * around the start only, a lowered limit reaches that server and no later one in the same process.
 *
 * @example
 * cluster = await withEnv({ RESTATE_INGRESS__REQUEST_SIZE_LIMIT: "1 MiB" }, () => startCluster({ workers: 1 }));
 */
export async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
	const saved = Object.keys(vars).map((name) => [name, process.env[name]] as const);
	Object.assign(process.env, vars);
	try {
		return await fn();
	} finally {
		for (const [name, value] of saved) {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
	}
}
