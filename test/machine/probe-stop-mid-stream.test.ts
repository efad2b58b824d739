/**
 * The agent machine embedded in a user's own XState machine, stopped while its reply streams
 * (the parent leaves the state that invokes it, or the parent actor stops): the model request
 * must end with it, as a running tool call does, not stream on into a reader that is gone,
 * holding its connection (and the process) open.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createActor, sendTo, setup } from "xstate";
import { afterEach, describe, expect, it } from "vitest";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineInput } from "../../src/machines/types.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { StreamFn } from "../../src/types/stream.js";

/** A workflow that invokes the agent while `open`, prompts it on entry, and leaves on `close`. */
function workflowAround(agent: AgentMachineInput) {
	return setup({ types: { events: {} as { type: "close" } }, actors: { agent: agentMachine } }).createMachine({
		initial: "open",
		states: {
			open: {
				invoke: { src: "agent", id: "agent", input: agent },
				entry: sendTo("agent", { type: "prompt", messages: [{ role: "user", content: "go", timestamp: 1 }] }),
				on: { close: "closed" },
			},
			closed: { type: "final" },
		},
	});
}

function until(condition: () => boolean): Promise<void> {
	return new Promise((resolve, reject) => {
		const started = Date.now();
		const check = () => {
			if (condition()) resolve();
			else if (Date.now() - started > 5_000) reject(new Error("timed out waiting"));
			else setTimeout(check, 2);
		};
		check();
	});
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("an embedded agent stopped while its reply streams", () => {
	/** A stream function that never answers, and the signal it was called with. */
	function silentModel() {
		const scripted = createScriptedModel([]);
		const seen: { signal?: AbortSignal | undefined } = {};
		const streamFn: StreamFn = (_model, _context, options) => {
			seen.signal = options?.signal;
			return (async function* () {
				await new Promise(() => undefined);
			})() as never;
		};
		return { model: scripted.model, streamFn, seen };
	}

	it.each([
		["the parent leaves the state that invokes it", "close"],
		["the parent actor stops", "stop"],
	] as const)("aborts the request's signal when %s", async (_when, how) => {
		const { model, streamFn, seen } = silentModel();
		const parent = createActor(workflowAround({ model, config: { streamFn } })).start();
		cleanups.push(() => {
			parent.stop();
		});
		await until(() => seen.signal !== undefined);
		expect(seen.signal?.aborted).toBe(false);
		if (how === "close") parent.send({ type: "close" });
		else parent.stop();
		expect(seen.signal?.aborted).toBe(true);
	});

	it("closes the connection of an OpenAI-compatible request that is still streaming", async () => {
		let request: IncomingMessage | undefined;
		let closed = false;
		const server = createServer((req, res) => {
			request = req;
			res.on("close", () => (closed = true));
			res.writeHead(200, { "content-type": "text/event-stream" });
			const chunk = { id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }] };
			res.write(`data: ${JSON.stringify(chunk)}\n\n`);
			// ...and nothing more: the model is still thinking.
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
		cleanups.push(() => server.closeAllConnections());
		const { port } = server.address() as AddressInfo;
		const model = createOpenAICompatibleModel({ baseUrl: `http://127.0.0.1:${port}/v1`, id: "m" });

		const parent = createActor(workflowAround({ model, config: { streamFn: streamOpenAICompletions } })).start();
		cleanups.push(() => {
			parent.stop();
		});
		await until(() => request !== undefined);
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(closed).toBe(false);
		parent.send({ type: "close" });
		await until(() => closed);
		expect(closed).toBe(true);
	});
});
