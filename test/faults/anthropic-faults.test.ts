/**
 * Fault injection with the real Anthropic SDK against the local wire-level server, in all
 * three tool execution modes: every fault a network, a proxy or the API can produce ends the
 * run within a bound, with an error a person can act on, and leaves a transcript whose next
 * request the API would accept (checked on the body the server receives).
 */
import { Type } from "typebox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import type { AgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { Model } from "../../src/types/model.js";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";
import {
	type AnthropicTestServer,
	type ScriptedResponse,
	blockDelta,
	blockStart,
	errorBody,
	messageDelta,
	messageStart,
	messageStop,
	startAnthropicServer,
	streamError,
	textBlock,
	textReply,
	toolUseBlock,
} from "../providers/anthropic-server.js";

let server: AnthropicTestServer;
let model: Model;
beforeAll(async () => {
	server = await startAnthropicServer();
	model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: server.baseUrl };
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const BOUND_MS = 10_000;

const params = Type.Object({ job: Type.String() });
const work: AgentTool<typeof params> = {
	name: "work",
	label: "Work",
	description: "does work",
	parameters: params,
	async execute(_id, { job }, signal) {
		await new Promise((resolve) => setTimeout(resolve, 20));
		signal?.throwIfAborted();
		return { content: [{ type: "text", text: `did ${job}` }], details: {} };
	},
};

/** A fault: what the server answers to the first call (several for retries), and the error a person should read. */
interface Fault {
	name: string;
	responses: ScriptedResponse[];
	/** The run's `errorMessage`, or undefined when the call recovers (retries). */
	error: RegExp | undefined;
	/** The agent's streamIdleTimeoutMs: short for the stall faults, longer than the SDK's connection backoff (0.5 s, 1 s) otherwise. */
	idleMs?: number;
}

const beginning = [messageStart("msg_fault", { input_tokens: 20 }), ...textBlock(0, ["I will run the job."])];
const toolStarted = [...beginning, blockStart(1, { type: "tool_use", id: "toolu_f1", name: "work", input: {} }), blockDelta(1, { type: "input_json_delta", partial_json: '{"jo' })];
const toolComplete = [...beginning, ...toolUseBlock(1, "toolu_f1", "work", ['{"job":', '"a"}'])];
const rateLimited = (retryAfter: string): ScriptedResponse => ({
	kind: "error",
	status: 429,
	body: errorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
	headers: { "retry-after": retryAfter },
});
const html502: ScriptedResponse = {
	kind: "error",
	status: 502,
	body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
	headers: { "content-type": "text/html" },
};
const times = (response: ScriptedResponse, count: number) => Array.from({ length: count }, () => response);

const FAULTS: Fault[] = [
	{ name: "connection reset mid-text", responses: [{ kind: "sse", events: [messageStart("msg_f"), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "Partial" })], ending: "reset" }], error: /^Connection lost while streaming/ },
	{ name: "connection reset mid-tool-input", responses: [{ kind: "sse", events: toolStarted, ending: "reset" }], error: /^Connection lost while streaming/ },
	{ name: "connection reset after a complete tool call", responses: [{ kind: "sse", events: toolComplete, ending: "reset", chunkDelayMs: 15 }], error: /^Connection lost while streaming/ },
	{ name: "429 with retry-after, then success", responses: [rateLimited("1"), { kind: "sse", events: textReply("Recovered.") }], error: undefined },
	{ name: "persistent 429", responses: times(rateLimited("0"), 3), error: /^429 rate_limit_error: Number of request tokens/ },
	{ name: "persistent 529", responses: times({ kind: "error", status: 529, body: errorBody("overloaded_error", "Overloaded") }, 3), error: /^529 overloaded_error: Overloaded$/ },
	{ name: "500", responses: times({ kind: "error", status: 500, body: errorBody("api_error", "Internal server error") }, 3), error: /^500 api_error: Internal server error$/ },
	{ name: "401", responses: [{ kind: "error", status: 401, body: errorBody("authentication_error", "invalid x-api-key") }], error: /^401 authentication_error: invalid x-api-key$/ },
	{ name: "400 context overflow", responses: [{ kind: "error", status: 400, body: errorBody("invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum") }], error: /^400 invalid_request_error: prompt is too long/ },
	{ name: "a malformed event", responses: [{ kind: "sse", events: [messageStart("msg_f"), blockStart(0, { type: "text", text: "" }), { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut' }] }], error: /^Malformed event in Anthropic's stream \(event 3, after content_block_start\)/ },
	{ name: "no message_stop", responses: [{ kind: "sse", events: [messageStart("msg_f"), ...textBlock(0, ["Almost"]), messageDelta("end_turn")] }], error: /^Anthropic stream ended before message_stop$/ },
	{ name: "a stall after the headers", responses: [{ kind: "sse", events: [messageStart("msg_f"), blockStart(0, { type: "text", text: "" })], ending: "stall" }], error: /stream stalled: no content arrived for 0\.4 s \(streamIdleTimeoutMs; keep-alive pings do not count\)/, idleMs: 400 },
	{ name: "no response at all", responses: [{ kind: "silent" }], error: /stream stalled: no content arrived for 0\.4 s \(streamIdleTimeoutMs; keep-alive pings do not count\)/, idleMs: 400 },
	{ name: "an error event mid-stream", responses: [{ kind: "sse", events: [messageStart("msg_f"), ...textBlock(0, ["Working"]), streamError("overloaded_error", "Overloaded")] }], error: /^overloaded_error: Overloaded$/ },
	{ name: "a refusal", responses: [{ kind: "sse", events: [messageStart("msg_f"), ...textBlock(0, ["I can't"]), messageDelta("refusal"), messageStop()] }], error: /^The model refused to answer/ },
	{ name: "a reset before any response", responses: times({ kind: "reset" }, 3), error: /^Connection error/ },
	{ name: "an HTML 502 from a proxy", responses: times(html502, 3), error: /^502 Bad Gateway from a proxy or gateway in front of the server \(an HTML page, not the API's JSON\): "502 Bad Gateway nginx"$/ },
];

/** The wire rule: each tool_result answers a tool_use of the assistant turn right before it; each tool_use is answered. */
function wireViolations(messages: { role: string; content: string | { type: string; id?: string; tool_use_id?: string }[] }[]): string[] {
	const violations: string[] = [];
	let open: string[] = [];
	messages.forEach((message, index) => {
		const blocks = typeof message.content === "string" ? [] : message.content;
		if (typeof message.content !== "string" && blocks.length === 0) violations.push(`#${index}: empty content`);
		if (message.role === "user") {
			const answered = blocks.flatMap((block) => (block.type === "tool_result" && block.tool_use_id ? [block.tool_use_id] : []));
			for (const id of answered) if (!open.includes(id)) violations.push(`#${index}: tool_result ${id} without its tool_use`);
			for (const id of open) if (!answered.includes(id)) violations.push(`#${index}: tool_use ${id} not answered`);
			open = [];
		} else {
			if (open.length > 0) violations.push(`#${index}: tool_use ${open.join(",")} not answered`);
			open = blocks.flatMap((block) => (block.type === "tool_use" && block.id ? [block.id] : []));
		}
	});
	return violations;
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	try {
		return await Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms)))]);
	} finally {
		clearTimeout(timer);
	}
}

describe.each(["parallel", "sequential", "streaming"] as ToolExecutionMode[])("faults of the Messages API (toolExecution: %s)", (mode) => {
	for (const fault of FAULTS) {
		it(`${fault.name}: the run ends with a readable error and the next request is valid`, async () => {
			server.respond(...fault.responses, { kind: "sse", events: textReply("Back again.", "msg_next") });
			const agent = new Agent({
				initialState: { model, systemPrompt: "You run jobs.", tools: [work] },
				streamFn: streamAnthropic,
				getApiKey: () => "test-key",
				toolExecution: mode,
				maxRetries: 2,
				maxRetryDelayMs: 20,
				streamIdleTimeoutMs: fault.idleMs ?? 5_000,
			});
			await within(agent.prompt("run job a"), BOUND_MS, "the faulted run");
			if (fault.error) expect(agent.state.errorMessage).toMatch(fault.error);
			else expect(agent.state.errorMessage).toBeUndefined();
			expect(providerRequestViolations(agent.state.messages)).toEqual([]);

			const before = server.requests.length;
			await within(agent.prompt("try again"), BOUND_MS, "the follow-up run");
			const next = server.requests[before];
			expect(next, "the follow-up reached the server").toBeDefined();
			const messages = (next?.body["messages"] ?? []) as Parameters<typeof wireViolations>[0];
			expect(wireViolations(messages)).toEqual([]);
			expect(messages.at(-1)).toMatchObject({ role: "user" });
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
			agent.dispose();
		});
	}
});

describe("a reset after a complete tool call, in streaming mode", () => {
	it("tells the model the tool ran: the next request carries the call and its result", async () => {
		server.respond({ kind: "sse", events: toolComplete, ending: "reset", chunkDelayMs: 15 }, { kind: "sse", events: textReply("Noted.", "msg_next") });
		const agent = new Agent({ initialState: { model, tools: [work] }, streamFn: streamAnthropic, getApiKey: () => "test-key", toolExecution: "streaming", maxRetries: 0 });
		await agent.prompt("run job a");
		await agent.prompt("what happened?");
		const messages = (server.requests.at(-1)?.body["messages"] ?? []) as { role: string; content: { type: string; text?: string; id?: string; tool_use_id?: string }[] }[];
		expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "user"]);
		expect(messages[1]?.content.map((block) => block.type)).toEqual(["text", "tool_use"]);
		expect(messages[2]?.content).toMatchObject([{ type: "tool_result", tool_use_id: "toolu_f1" }]);
	});
});
