/**
 * The page the browser tests run: an application that imports agentchart by its name, bundled by
 * esbuild for the browser (browser-app.ts), so the package resolves through its `exports` to
 * `dist/` as a user's bundler resolves it. Each scenario is a function on `window.scenarios` that
 * the test calls and whose plain-JSON result it judges.
 */
import { Type } from "typebox";
import {
	Agent,
	type AgentEvent,
	type AgentMessage,
	type AgentTool,
	createFileStore,
	createMemoryStore,
	createOpenAICompatibleModel,
	createScriptedModel,
	getModel,
	streamAnthropic,
	streamOpenAICompletions,
	text,
	toolCall,
} from "agentchart";
import { subscribeReplies } from "agentchart/reply";
import { checkAgentInvariants, exploreAgent, fuzzAgent, recordAgent } from "agentchart/testing";

type Result = Record<string, unknown>;

const waitParams = Type.Object({ id: Type.String(), ms: Type.Optional(Type.Number()), path: Type.Optional(Type.String()) });

/** A tool that takes `ms` (or until aborted) and records when it started and ended. */
function waitingTool(name: string, log: string[], mode?: "sequential"): AgentTool<typeof waitParams> {
	return {
		name,
		label: name,
		description: `waits, then answers (${name})`,
		parameters: waitParams,
		...(mode ? { executionMode: mode } : {}),
		async execute(_toolCallId, { id, ms }, signal) {
			log.push(`start ${id}`);
			await new Promise<void>((resolve, reject) => {
				const timer = setTimeout(resolve, ms ?? 5);
				signal?.addEventListener("abort", () => {
					clearTimeout(timer);
					reject(new Error(`aborted ${id}`));
				});
			});
			log.push(`end ${id}`);
			return { content: [{ type: "text", text: `done ${id}` }], details: undefined };
		},
	};
}

function lastText(messages: readonly AgentMessage[]): string {
	const last = messages.at(-1);
	if (!last || last.role !== "assistant") return "";
	return last.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

function toolResults(messages: readonly AgentMessage[]): string[] {
	return messages.flatMap((message) => (message.role === "toolResult" ? message.content.map((block) => (block.type === "text" ? block.text : "")) : []));
}

function eventTypes(agent: Agent): AgentEvent["type"][] {
	const types: AgentEvent["type"][] = [];
	agent.subscribe((event) => {
		if (event.type !== "message_update") types.push(event.type);
	});
	return types;
}

/** Resolves on the first event that `matches`. */
function nextEvent(agent: Agent, matches: (event: AgentEvent) => boolean): Promise<AgentEvent> {
	return new Promise((resolve) => {
		const unsubscribe = agent.subscribe((event) => {
			if (!matches(event)) return;
			unsubscribe();
			resolve(event);
		});
	});
}

const scenarios: Record<string, (input: string) => Promise<Result>> = {
	async parallelTools() {
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("wait", { id: "a", ms: 20 }), toolCall("wait", { id: "b", ms: 1 })] }, { content: "Both done." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [waitingTool("wait", log)] }, streamFn: scripted.streamFn });
		const recording = recordAgent(agent);
		await agent.prompt("go");
		return { log, results: toolResults(agent.state.messages), reply: lastText(agent.state.messages), violations: checkAgentInvariants(recording.events, agent).length };
	},

	async sequentialTools() {
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("wait", { id: "a", ms: 20 }), toolCall("wait", { id: "b", ms: 1 })] }, { content: "Both done." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [waitingTool("wait", log)] }, streamFn: scripted.streamFn, toolExecution: "sequential" });
		await agent.prompt("go");
		return { log, results: toolResults(agent.state.messages), reply: lastText(agent.state.messages) };
	},

	async streamingTools() {
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("wait", { id: "a" }), text("while it runs "), toolCall("wait", { id: "b" })] }, { content: "Streamed." }], { delayMs: 2 });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [waitingTool("wait", log)] }, streamFn: scripted.streamFn, toolExecution: "streaming" });
		await agent.prompt("go");
		return { log, results: toolResults(agent.state.messages), reply: lastText(agent.state.messages) };
	},

	async steeringAndFollowUp() {
		// As with pi: the steer joins the first request, the follow-up makes the second.
		const scripted = createScriptedModel([{ content: "Steered." }, { content: "Followed up." }], { delayMs: 5 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const run = agent.prompt("Start");
		agent.steer({ role: "user", content: "steer", timestamp: Date.now() });
		agent.followUp({ role: "user", content: "follow", timestamp: Date.now() });
		await run;
		return { roles: agent.state.messages.map((message) => message.role), reply: lastText(agent.state.messages), calls: scripted.calls.length };
	},

	async abortMidStream() {
		const scripted = createScriptedModel([{ content: "a long answer that streams slowly, chunk by chunk" }], { delayMs: 20 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const types = eventTypes(agent);
		const firstDelta = nextEvent(agent, (event) => event.type === "message_update");
		const run = agent.prompt("go");
		await firstDelta;
		agent.abort();
		await run;
		const last = agent.state.messages.at(-1);
		return { stopReason: last?.role === "assistant" ? last.stopReason : last?.role, errorMessage: agent.state.errorMessage, types, isStreaming: agent.state.isStreaming };
	},

	async abortMidTool() {
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("wait", { id: "slow", ms: 60_000 })] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [waitingTool("wait", log)] }, streamFn: scripted.streamFn });
		const run = agent.prompt("go");
		while (!log.includes("start slow")) await new Promise((resolve) => setTimeout(resolve, 1));
		agent.abort();
		await run;
		return { log, results: toolResults(agent.state.messages), calls: scripted.calls.length, isStreaming: agent.state.isStreaming };
	},

	async snapshotRestore() {
		const scripted = createScriptedModel([{ content: "One." }, { content: "Two." }]);
		const first = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await first.prompt("first");
		const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as ReturnType<Agent["snapshot"]>;
		first.dispose();
		const restored = Agent.restore(snapshot, { initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await restored.prompt("second");
		return { roles: restored.state.messages.map((message) => message.role), reply: lastText(restored.state.messages) };
	},

	async memoryStoreApproval() {
		const store = createMemoryStore();
		const log: string[] = [];
		const deploy: AgentTool<typeof waitParams> = { ...waitingTool("deploy", log), needsApproval: true };
		const scripted = createScriptedModel([{ content: [toolCall("deploy", { id: "billing" }, "call-1")] }, { content: "Deployed." }]);
		const options = { initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, store, sessionId: "ops-7" };
		const first = await Agent.load(options);
		const asked = nextEvent(first, (event) => event.type === "approval_requested");
		void first.prompt("Deploy billing");
		await asked;
		await first.saved();
		const pending = first.pendingApprovals.map((approval) => approval.toolCallId);
		first.dispose();
		// Another agent (a reloaded page) answers from the store.
		const second = await Agent.load(options);
		const ended = nextEvent(second, (event) => event.type === "agent_end");
		second.approve("call-1");
		await ended;
		await second.waitForIdle();
		return { pending, log, results: toolResults(second.state.messages), reply: lastText(second.state.messages) };
	},

	async manualCompaction() {
		const long = "word ".repeat(400);
		const scripted = createScriptedModel([{ content: long }, { content: long }, { content: "Summary of the talk." }, { content: "Summary of the turn." }]);
		const agent = new Agent({
			initialState: { model: scripted.model },
			streamFn: scripted.streamFn,
			compaction: { enabled: false, keepRecentTokens: 100 },
		});
		await agent.prompt("one");
		await agent.prompt("two");
		const result = await agent.compact();
		return { messagesDropped: result.messagesDropped, first: agent.state.messages[0]?.role, count: agent.state.messages.length };
	},

	async replies() {
		const log: string[] = [];
		const read = waitingTool("read", log);
		const scripted = createScriptedModel([{ content: [toolCall("read", { id: "r", path: "/home/user/notes.txt" })] }, { content: "<think>hidden</think>First block.\n\nSecond block." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [read] }, streamFn: scripted.streamFn });
		const blocks: string[] = [];
		const partials: string[] = [];
		const replies = subscribeReplies(agent, { blockReplyBreak: "text_end", onBlockReply: (payload) => void blocks.push(payload.text ?? ""), onPartialReply: ({ text }) => void partials.push(text ?? "") });
		await agent.prompt("hi");
		await replies.waitForCompactionRetry();
		replies.unsubscribe();
		return { blocks, partials: partials.length, toolMetas: replies.toolMetas, errorMessage: agent.state.errorMessage };
	},

	async toolThrowsNonError() {
		const params = Type.Object({});
		const failing: AgentTool<typeof params> = {
			name: "fail",
			label: "fail",
			description: "throws a plain object",
			parameters: params,
			async execute() {
				throw { code: "EPERM", path: "/etc" };
			},
		};
		const scripted = createScriptedModel([{ content: [toolCall("fail", {})] }, { content: "Noted." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [failing] }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		return { results: toolResults(agent.state.messages) };
	},

	async nodeOnlyTesting() {
		const scripted = createScriptedModel([{ content: "Hi." }]);
		const factory = () => new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const failures: string[] = [];
		for (const run of [() => exploreAgent(factory, { maxPaths: 2 }), () => fuzzAgent(factory, { runs: 1 })]) {
			try {
				await run();
				failures.push("ran");
			} catch (error) {
				failures.push(`${(error as Error).name}: ${(error as Error).message}`);
			}
		}
		return { failures };
	},

	async fileStore() {
		try {
			createFileStore("./sessions");
			return { threw: false };
		} catch (error) {
			return { threw: true, message: (error as Error).message };
		}
	},

	async anthropic(baseUrl) {
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl };
		const agent = new Agent({ initialState: { model }, streamFn: streamAnthropic, getApiKey: () => "test-key", maxRetries: 0 });
		let deltas = 0;
		agent.subscribe((event) => {
			if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") deltas++;
		});
		await agent.prompt("hi");
		return { reply: lastText(agent.state.messages), deltas, errorMessage: agent.state.errorMessage };
	},

	async anthropicWithoutKey(baseUrl) {
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl };
		const agent = new Agent({ initialState: { model }, streamFn: streamAnthropic, maxRetries: 0 });
		await agent.prompt("hi");
		return { errorMessage: agent.state.errorMessage };
	},

	async openAICompatible(baseUrl) {
		const model = createOpenAICompatibleModel({ baseUrl, id: "test-model" });
		const agent = new Agent({ initialState: { model }, streamFn: streamOpenAICompletions, maxRetries: 0 });
		let deltas = 0;
		agent.subscribe((event) => {
			if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") deltas++;
		});
		await agent.prompt("hi");
		return { reply: lastText(agent.state.messages), deltas, errorMessage: agent.state.errorMessage };
	},
};

declare global {
	interface Window {
		scenarios: typeof scenarios;
	}
}
window.scenarios = scenarios;
document.body.dataset["ready"] = "true";
