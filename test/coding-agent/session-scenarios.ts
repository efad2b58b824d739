/**
 * Scenarios for the coding agent's RPC commands that manage sessions, models and the shell:
 * `new_session` (also while a tool runs), `switch_session`, `clone`, `export_html`, the `bash`
 * and `abort_bash` commands, `set_model`, `cycle_model` and thinking level changes between and
 * during a run, with `get_state` and `get_messages` after each.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { textAnswer, toolAnswer, waitForFileCommand } from "./answers.js";
import { type JsonObject, MODEL_ID, PROVIDER, type RunContext } from "./harness.js";
import type { Scenario } from "./observe.js";
import { ask, isType, nth, readState, requestsReceived, startRpc, until } from "./rpc-drive.js";

/** The session data an exported HTML page embeds (base64 JSON), as one more record to compare. */
async function exportedSessionData(path: string): Promise<JsonObject> {
	const html = await readFile(path, "utf8");
	const match = /"([A-Za-z0-9+/=]{200,})"/.exec(html) ?? /([A-Za-z0-9+/=]{200,})/.exec(html);
	if (!match?.[1]) throw new Error("export_html: no embedded session data in the page");
	return { type: "exported_session_data", data: JSON.parse(Buffer.from(match[1], "base64").toString("utf8")) as JsonObject };
}

/**
 * A prompt, `new_session` and a prompt there, `switch_session` back to the first file, `clone`,
 * a prompt on the clone, `export_html`: the state and messages read after each step.
 */
export const rpcSessionCommands: Scenario = {
	name: "RPC mode: new_session, switch_session, clone and export_html",
	mode: "rpc",
	requestCount: 3,
	responses: [
		textAnswer("msg_first", ["First ", "answer."]),
		textAnswer("msg_second", ["Second ", "answer."]),
		textAnswer("msg_third", ["Third ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "First question" });
		await nth(rpc, "agent_end", 1);
		const first = await readState(rpc);
		const firstFile = (first["data"] as JsonObject)["sessionFile"];
		await ask(rpc, { id: "n1", type: "new_session" });
		await readState(rpc);
		rpc.send({ id: "p2", type: "prompt", message: "Second question" });
		await nth(rpc, "agent_end", 2);
		await readState(rpc);
		await ask(rpc, { id: "w1", type: "switch_session", sessionPath: firstFile ?? "" });
		await readState(rpc);
		await ask(rpc, { id: "c1", type: "clone" });
		await readState(rpc);
		rpc.send({ id: "p3", type: "prompt", message: "Third question" });
		await nth(rpc, "agent_end", 3);
		await readState(rpc);
		const outputPath = join(run.ws.root, "export.html");
		await ask(rpc, { id: "e1", type: "export_html", outputPath });
		const exported = await exportedSessionData(outputPath);
		const exit = await rpc.close();
		return { exit, records: [...rpc.records, exported] };
	},
};

/**
 * `new_session` while a tool of the run executes, with a steer queued: the old session lets go of
 * its agent, whose run goes on unheard (its next request, with the steer, is made), and a prompt
 * in the new session runs.
 */
export const rpcNewSessionDuringTool: Scenario = {
	name: "RPC mode: new_session while a tool runs",
	mode: "rpc",
	requestCount: 3,
	responses: [
		toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("go") } }]),
		textAnswer("msg_unheard", ["Nobody ", "listens."]),
		textAnswer("msg_new", ["New ", "session."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
		await rpc.waitFor(isType("tool_execution_start"));
		await ask(rpc, { id: "s1", type: "steer", message: "Actually, be brief" });
		await ask(rpc, { id: "n1", type: "new_session" });
		await readState(rpc);
		await writeFile(join(run.ws.cwd, "go"), "");
		await requestsReceived(run, 2);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/**
 * The RPC `bash` command when idle and while an answer streams (the server holds it), then a
 * prompt: the command outputs reach the model as context, in the same place.
 */
export const rpcBashCommand: Scenario = {
	name: "RPC mode: the bash command, idle and while streaming",
	mode: "rpc",
	requestCount: 2,
	responses: [
		// ping, message_start, ping, content_block_start, "Partial " | held | the rest
		{ ...textAnswer("msg_streaming", ["Partial ", "answer."]), holdAfter: 5 },
		textAnswer("msg_after", ["Saw ", "both."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		await ask(rpc, { id: "b1", type: "bash", command: "echo idle; echo oops >&2; exit 2" });
		await readState(rpc);
		rpc.send({ id: "p1", type: "prompt", message: "Write a long essay" });
		await rpc.waitFor((record) => {
			const event = record["assistantMessageEvent"] as JsonObject | undefined;
			return record["type"] === "message_update" && event?.["type"] === "text_delta";
		});
		await ask(rpc, { id: "b2", type: "bash", command: "echo streaming" });
		await readState(rpc);
		run.server.release();
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		rpc.send({ id: "p2", type: "prompt", message: "What did the commands print?" });
		await nth(rpc, "agent_end", 2);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** `abort_bash` while an RPC `bash` command runs, then a prompt that carries its output. */
export const rpcAbortBash: Scenario = {
	name: "RPC mode: abort_bash while the bash command runs",
	mode: "rpc",
	requestCount: 1,
	responses: [textAnswer("msg_after", ["Saw ", "it."])],
	async drive(run) {
		const rpc = startRpc(run);
		// The shell says it started (on stdout, then with a file) and waits: abort_bash comes after
		// the output, which the command's result keeps.
		rpc.send({ id: "b1", type: "bash", command: `echo started; touch started; ${waitForFileCommand("never")}` });
		await until(() => existsSync(join(run.ws.cwd, "started")), "the bash command did not start");
		await ask(rpc, { id: "x1", type: "abort_bash" });
		await rpc.waitForResponse("bash");
		await readState(rpc);
		rpc.send({ id: "p1", type: "prompt", message: "What happened?" });
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** The second model declared in the workspace (the first is `MODEL_ID`). */
const SECOND_MODEL_ID = "claude-local-2";

/** Declares a second thinking model beside the first one, both thinking. */
async function declareTwoModels(run: RunContext): Promise<void> {
	const path = join(run.ws.agentDir, "models.json");
	const models = JSON.parse(await readFile(path, "utf8")) as { providers: Record<string, { models: JsonObject[] }> };
	const provider = models.providers[PROVIDER];
	const first = provider?.models[0];
	if (!provider || !first) throw new Error("models.json: no local model");
	provider.models = [
		{ ...first, reasoning: true },
		{ ...first, id: SECOND_MODEL_ID, name: "Local Claude 2", reasoning: true, maxTokens: 4096 },
	];
	await writeFile(path, JSON.stringify(models, null, 2));
}

/**
 * `set_model` before a run, `set_model` and `set_thinking_level` while a tool of the run
 * executes (the run's next request is made after the change), `cycle_model` and
 * `cycle_thinking_level` between runs: each request names the model and thinking the engine
 * chose, and the state is read after each change.
 */
export const rpcModelChanges: Scenario = {
	name: "RPC mode: set_model, cycle_model and thinking levels, between and during runs",
	mode: "rpc",
	requestCount: 3,
	responses: [
		toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("go") } }]),
		textAnswer("msg_after_tool", ["Tool ", "done."]),
		textAnswer("msg_cycled", ["Cycled ", "answer."]),
	],
	async drive(run) {
		await declareTwoModels(run);
		const rpc = startRpc(run);
		await readState(rpc);
		await ask(rpc, { id: "m1", type: "set_model", provider: PROVIDER, modelId: SECOND_MODEL_ID });
		await readState(rpc);
		await ask(rpc, { id: "t1", type: "set_thinking_level", level: "low" });
		rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
		await rpc.waitFor(isType("tool_execution_start"));
		await ask(rpc, { id: "t2", type: "set_thinking_level", level: "high" });
		await ask(rpc, { id: "m2", type: "set_model", provider: PROVIDER, modelId: MODEL_ID });
		await readState(rpc);
		await writeFile(join(run.ws.cwd, "go"), "");
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		await ask(rpc, { id: "m3", type: "cycle_model" });
		await readState(rpc);
		await ask(rpc, { id: "t3", type: "cycle_thinking_level" });
		await readState(rpc);
		rpc.send({ id: "p2", type: "prompt", message: "Which model are you?" });
		await nth(rpc, "agent_end", 2);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const SESSION_SCENARIOS: readonly Scenario[] = [rpcSessionCommands, rpcNewSessionDuringTool, rpcBashCommand, rpcAbortBash, rpcModelChanges];
