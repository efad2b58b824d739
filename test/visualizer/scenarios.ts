/**
 * Runs the visualizer tests watch, each a way of running the agent: an `Agent`, the agent
 * machine embedded in a parent machine, the loop API. Tools can be held open by a gate, so a
 * test sees a call running without timing guesses.
 */
import { Type } from "typebox";
import { createActor } from "xstate";
import { Agent } from "../../src/agent.js";
import type { AgentInspector } from "../../src/inspect/inspector.js";
import { runOnMachine } from "../../src/loop/run-on-machine.js";
import { type ScriptedReply, createScriptedModel, text, thinking, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { supportTicketMachine } from "../../examples/support-ticket.js";
import { createMemoryStore } from "../../src/durable/store.js";

const cityParams = Type.Object({ city: Type.String() });

/** A promise a test resolves when it wants a held tool call to finish. */
export interface Gate {
	readonly opened: Promise<void>;
	open(): void;
}

export function createGate(): Gate {
	let open = () => {};
	const opened = new Promise<void>((resolve) => (open = resolve));
	return { opened, open };
}

/** A weather tool; with a gate, each call waits for it before answering. */
export function weatherTool(gate?: Gate): AgentTool<typeof cityParams> {
	return {
		name: "get_weather",
		label: "Weather",
		description: "Weather in a city.",
		parameters: cityParams,
		execute: async (_id, { city }) => {
			await gate?.opened;
			return { content: [{ type: "text", text: `${city}: sunny, 21 °C` }], details: {} };
		},
	};
}

/** A reply that thinks, says something and calls the weather tool for two cities; then an answer. */
export function weatherScript(): ScriptedReply[] {
	return [
		{
			content: [
				thinking("Two independent lookups: run them in parallel."),
				text("Let me check both cities."),
				toolCall("get_weather", { city: "Paris" }, "w1"),
				toolCall("get_weather", { city: "Tokyo" }, "w2"),
			],
		},
		{ content: "Paris is sunny and so is Tokyo." },
	];
}

/** An `Agent` running the weather script. */
export function weatherAgent(options: { gate?: Gate; delayMs?: number; streamingTools?: boolean } = {}): Agent {
	const scripted = createScriptedModel(weatherScript(), { chunkSize: 6, delayMs: options.delayMs ?? 10 });
	return new Agent({
		initialState: { model: scripted.model, systemPrompt: "You are concise.", tools: [weatherTool(options.gate)] },
		streamFn: scripted.streamFn,
		...(options.streamingTools ? { toolExecution: "streaming" as const } : {}),
	});
}

/**
 * The support-ticket example (examples/support-ticket.ts): the agent machine invoked by a parent
 * machine, created with the inspector as its `inspect` option. The ticket resolves when the
 * agent's run ends, which stops the agent.
 */
export function embeddedTicket(inspector: AgentInspector, gate?: Gate): { open(): void; resolved: Promise<void> } {
	const scripted = createScriptedModel(weatherScript(), { chunkSize: 6, delayMs: 5 });
	const ticket = createActor(supportTicketMachine, {
		input: { agent: { model: scripted.model, tools: [weatherTool(gate)], config: { streamFn: scripted.streamFn } }, timeoutMs: 30_000 },
		inspect: inspector.inspect,
	});
	const resolved = new Promise<void>((resolve) => ticket.subscribe({ complete: () => resolve() }));
	ticket.start();
	return { open: () => ticket.send({ type: "ticket.opened", question: "Weather in Paris and Tokyo?" }), resolved };
}

/** One run of pi's loop API on the agent machine, inspected from the machine's start. */
export async function loopRun(inspector: AgentInspector): Promise<AgentMessage[]> {
	const scripted = createScriptedModel(weatherScript(), { chunkSize: 6 });
	const prompt: AgentMessage = { role: "user", content: "Weather in Paris and Tokyo?", timestamp: Date.now() };
	return runOnMachine(
		{ type: "prompt", messages: [prompt] },
		{ systemPrompt: "", messages: [], tools: [weatherTool()] },
		{ model: scripted.model, convertToLlm: (messages) => messages.filter((message): message is Extract<AgentMessage, { role: "user" | "assistant" | "toolResult" }> => ["user", "assistant", "toolResult"].includes(message.role)) },
		async () => {},
		undefined,
		scripted.streamFn,
		// The loop API has no inspection option of its own: the test attaches before the start.
		(machine) => void inspector.attach(machine),
	);
}

/** Lets the inspector flush (it flushes on setImmediate). */
export async function flushed(inspector: AgentInspector): Promise<void> {
	await new Promise((resolve) => setImmediate(resolve));
	inspector.flush();
}

const serviceParams = Type.Object({ service: Type.String() });

/** A deploy tool that needs a person's approval (`needsApproval`) and answers "<service> deployed". */
function deployTool(): AgentTool<typeof serviceParams> {
	return {
		name: "deploy",
		label: "Deploy",
		description: "Deploy a service to production.",
		parameters: serviceParams,
		needsApproval: true,
		execute: async (_id, { service }) => ({ content: [{ type: "text", text: `${service} deployed` }], details: {} }),
	};
}

/**
 * An `Agent` whose deploy tool needs a person's approval (`needsApproval`), asked to deploy two
 * services: each call waits in `awaiting-approval` until the test approves or rejects it.
 * `asked` resolves once both questions are out. `ids` are the two calls' ids (one id twice for a
 * model that repeats ids).
 */
export function deployAgent(ids: readonly [string, string] = ["d1", "d2"]): { agent: Agent; asked: Promise<void> } {
	const deploy = deployTool();
	const scripted = createScriptedModel(
		[{ content: [text("Deploying both."), toolCall("deploy", { service: "billing" }, ids[0]), toolCall("deploy", { service: "search" }, ids[1])] }, { content: "Billing is deployed; search was refused." }],
		{ chunkSize: 8, delayMs: 2 },
	);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
	let questions = 0;
	const asked = new Promise<void>((resolve) => {
		const unsubscribe = agent.subscribe((event) => {
			if (event.type !== "approval_requested" || ++questions < 2) return;
			unsubscribe();
			resolve();
		});
	});
	return { agent, asked };
}

/**
 * docs/durable.md's approval example: a session stored while its run waits for approval of
 * `call-1` (deploy billing), then loaded again as a new agent, as a second process would.
 */
export async function loadedWaitingForApproval(): Promise<Agent> {
	const deploy = deployTool();
	const store = createMemoryStore();
	const first = createScriptedModel([{ content: [text("Deploying billing now."), toolCall("deploy", { service: "billing" }, "call-1")] }]);
	const asking = new Agent({ initialState: { model: first.model, tools: [deploy] }, streamFn: first.streamFn, store, sessionId: "ops-7" });
	void asking.prompt("Deploy billing");
	for (let waited = 0; asking.pendingApprovals.length === 0; waited++) {
		if (waited > 1000) throw new Error("the agent never asked for approval");
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
	// The question is stored once its listeners have it; the first process then goes away.
	await new Promise((resolve) => setTimeout(resolve, 20));
	asking.dispose();
	const again = createScriptedModel([{ content: "Deployed." }]);
	return Agent.load({ store, sessionId: "ops-7", initialState: { model: again.model, tools: [deploy] }, streamFn: again.streamFn });
}
