/**
 * Driving the coding agent's RPC mode in a scenario: start it, send a command and wait for its
 * response, read the state and the messages, wait for a record, a file or the model server.
 * What waits, waits for something to happen (checked every few ms), never for a fixed time.
 */
import { type JsonObject, RpcClient, type RunContext, startCli } from "./harness.js";

/** Hard limit for one CLI process. */
export const PROCESS_TIMEOUT_MS = 30_000;

export function startRpc(run: RunContext): RpcClient {
	return new RpcClient(startCli(run.engine, run.ws, ["--mode", "rpc"], PROCESS_TIMEOUT_MS));
}

export const isType = (type: string) => (record: JsonObject) => record["type"] === type;

/** Resolves when the n-th (from 1) record of `type` has arrived. */
export function nth(rpc: RpcClient, type: string, n: number): Promise<JsonObject> {
	let count = 0;
	return rpc.waitFor((record) => record["type"] === type && ++count === n);
}

/** Resolves once `condition` holds (checked every few ms); rejects with `failure` after `timeoutMs`. */
export async function until(condition: () => boolean, failure: string, timeoutMs = 20_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(failure);
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/** Resolves once the model server has received `count` requests. */
export function requestsReceived(run: RunContext, count: number): Promise<void> {
	return until(() => run.server.requests.length >= count, `the model server did not get ${count} requests`);
}

/**
 * Sends a command and waits for its response (the n-th of its type, counted over the whole
 * conversation, so a scenario can ask the same thing several times).
 */
export async function ask(rpc: RpcClient, command: JsonObject): Promise<JsonObject> {
	const type = String(command["type"]);
	const nthResponse = rpc.records.filter((record) => record["type"] === "response" && record["command"] === type).length;
	rpc.send(command);
	return rpc.waitForResponse(type, nthResponse);
}

/** `get_state` then `get_messages`: what a client reads after each command. */
export async function readState(rpc: RpcClient): Promise<JsonObject> {
	const state = await ask(rpc, { type: "get_state" });
	await ask(rpc, { type: "get_messages" });
	return state;
}
