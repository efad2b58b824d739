/**
 * Tool execution: preflight (lookup, prepareArguments, validation, beforeToolCall), parallel
 * and sequential batches, afterToolCall, terminate (reference §1.4; pi tests N7–N20, T5–T8).
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, type ScriptedReply, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool, AgentToolResult } from "../../src/types/agent.js";
import type { ToolResultMessage } from "../../src/types/messages.js";
import {
	deferred,
	echoTool,
	expectIdle,
	expectWellFormedRun,
	makeTool,
	ok,
	record,
	roles,
	sleep,
	textOf,
	type ToolExecute,
	user,
	valueSchema,
	watchEscapes,
	whenAborted,
} from "./helpers.js";

function toolResults(agent: Agent): ToolResultMessage[] {
	return agent.state.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
}

function agentWith(replies: ScriptedReply[], tools: AgentTool<never, unknown>[] | AgentTool<object, unknown>[], options: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
	const scripted = createScriptedModel(replies);
	const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, ...options });
	return { agent, scripted, rec: record(agent) };
}

/** Resolves to "timeout" if `promise` has not settled within `ms` (a guard against a deadlocking failure). */
function within<T>(promise: Promise<T>, ms = 2000): Promise<T | "timeout"> {
	return Promise.race([promise, sleep(ms).then(() => "timeout" as const)]);
}

/** A listener that takes 20 ms over each tool_execution_start, logging when it starts and settles. */
function holdStarts(agent: Agent, log: string[]): void {
	agent.subscribe(async (event) => {
		if (event.type !== "tool_execution_start") return;
		log.push(`start:${event.toolCallId}`);
		await sleep(20);
		log.push(`settled:${event.toolCallId}`);
	});
}

describe("tool preflight", () => {
	it("parallel mode preflights every call in source order before any call executes", async () => {
		const log: string[] = [];
		const secondInPreflight = deferred();
		const releaseSecond = deferred();
		const tool = makeTool("work", async (id) => {
			log.push(`exec:${id}`);
			return ok(id);
		});
		const { agent } = agentWith([{ content: [toolCall("work", {}, "t1"), toolCall("work", {}, "t2")] }, { content: "done" }], [tool], {
			beforeToolCall: async ({ toolCall }) => {
				log.push(`before:${toolCall.id}`);
				if (toolCall.id === "t2") {
					secondInPreflight.resolve();
					await releaseSecond.promise;
				}
				return undefined;
			},
		});
		const run = agent.prompt("go");
		await secondInPreflight.promise;
		await sleep(20);
		// A slow beforeToolCall on the second call holds back the first call's execution.
		expect(log).toEqual(["before:t1", "before:t2"]);
		releaseSecond.resolve();
		await run;
		expect(log.slice(2).sort()).toEqual(["exec:t1", "exec:t2"]);
	});

	it("a tool_execution_start listener settles before that call's preflight, and every preflight before any execution", async () => {
		const log: string[] = [];
		const tool = makeTool("work", async (id) => {
			log.push(`exec:${id}`);
			return ok(id);
		});
		const { agent } = agentWith([{ content: [toolCall("work", {}, "t1"), toolCall("work", {}, "t2")] }, { content: "done" }], [tool], {
			beforeToolCall: async ({ toolCall }) => {
				log.push(`before:${toolCall.id}`);
				return undefined;
			},
		});
		holdStarts(agent, log);
		await agent.prompt("go");
		// pi 0.73.1 records exactly this order.
		expect(log).toEqual(["start:t1", "settled:t1", "before:t1", "start:t2", "settled:t2", "before:t2", "exec:t1", "exec:t2"]);
	});

	it.each([
		["parallel", ["start:t1", "settled:t1", "start:t2", "settled:t2", "exec:t1", "exec:t2"]],
		["sequential", ["start:t1", "settled:t1", "exec:t1", "start:t2", "settled:t2", "exec:t2"]],
	] as const)("without a beforeToolCall hook, a call runs only once its tool_execution_start listeners settled (%s, as pi)", async (mode, order) => {
		const log: string[] = [];
		const tool = makeTool("work", async (id) => {
			log.push(`exec:${id}`);
			return ok(id);
		});
		const { agent } = agentWith([{ content: [toolCall("work", {}, "t1"), toolCall("work", {}, "t2")] }, { content: "done" }], [tool], { toolExecution: mode });
		holdStarts(agent, log);
		await agent.prompt("go");
		// pi 0.73.1 records exactly this order (before, the calls ran before their announcements reached the listener).
		expect(log).toEqual(order);
	});

	it.each([false, true])("streaming mode: a call runs only once its tool_execution_start listeners settled (beforeToolCall hook: %s)", async (hooked) => {
		const log: string[] = [];
		const tool = makeTool("work", async (id) => {
			log.push(`exec:${id}`);
			return ok(id);
		});
		const beforeToolCall = async ({ toolCall: call }: { toolCall: { id: string } }) => {
			log.push(`before:${call.id}`);
			return undefined;
		};
		const { agent } = agentWith([{ content: [toolCall("work", {}, "t1"), toolCall("work", {}, "t2")] }, { content: "done" }], [tool], { toolExecution: "streaming", ...(hooked ? { beforeToolCall } : {}) });
		holdStarts(agent, log);
		await agent.prompt("go");
		// Before, the call ran (and its hook was asked) in the step that announced it: exec:t1 came before settled:t1.
		for (const id of ["t1", "t2"]) {
			expect(log.indexOf(`exec:${id}`)).toBeGreaterThan(log.indexOf(`settled:${id}`));
			if (hooked) expect(log.indexOf(`before:${id}`)).toBeGreaterThan(log.indexOf(`settled:${id}`));
		}
		expect(log.filter((line) => line.startsWith("exec")).sort()).toEqual(["exec:t1", "exec:t2"]);
		expect(toolResults(agent).map((message) => textOf(message))).toEqual(["t1", "t2"]);
	});

	it("streaming mode: a listener that aborts on a call's tool_execution_start keeps it from running, and the call still ends", async () => {
		let runs = 0;
		const tool = makeTool("work", async () => {
			runs++;
			return ok("ran");
		});
		const { agent, rec } = agentWith([{ content: [toolCall("work", {}, "t1")] }, { content: "done" }], [tool], { toolExecution: "streaming" });
		agent.subscribe(async (event) => {
			if (event.type !== "tool_execution_start") return;
			await sleep(5);
			agent.abort();
		});
		await agent.prompt("go");
		expect(runs).toBe(0);
		const ends = rec.events.filter((event) => event.type === "tool_execution_end");
		expect(ends.map((event) => event.type === "tool_execution_end" && event.isError)).toEqual([true]);
		expect(toolResults(agent).map((message) => message.toolCallId)).toEqual(["t1"]);
	});

	it("tool_execution_start carries the raw arguments while execute gets the converted ones", async () => {
		const received: unknown[] = [];
		const tool = makeTool(
			"num",
			async (_id, params) => {
				received.push(params);
				return ok("ok");
			},
			{ parameters: Type.Object({ n: Type.Number() }) },
		);
		const { agent, rec } = agentWith([{ content: [toolCall("num", { n: "7" }, "t1")] }, { content: "done" }], [tool]);
		await agent.prompt("go");
		const start = rec.events.find((e) => e.type === "tool_execution_start");
		expect(start?.type === "tool_execution_start" && start.args).toEqual({ n: "7" });
		expect(received).toEqual([{ n: 7 }]);
	});

	it("a TypeBox schema failure lists every failing path and the received arguments", async () => {
		const tool = makeTool("pair", async () => ok("never"), {
			parameters: Type.Object({ a: Type.Number(), b: Type.String(), c: Type.Boolean() }),
		});
		const { agent } = agentWith([{ content: [toolCall("pair", { a: "x", c: true }, "t1")] }, { content: "done" }], [tool]);
		await agent.prompt("go");
		const text = textOf(toolResults(agent)[0]);
		expect(text.startsWith('Validation failed for tool "pair":\n')).toBe(true);
		expect(text).toMatch(/\n {2}- a: /);
		expect(text).toContain("\n  - root: must have required properties b");
		expect(text).not.toMatch(/\n {2}- c: /);
		expect(text.endsWith(`\n\nReceived arguments:\n${JSON.stringify({ a: "x", c: true }, null, 2)}`)).toBe(true);
		expect(toolResults(agent)[0]?.isError).toBe(true);
	});

	it("a plain JSON Schema failure lists every failing path, missing required properties included", async () => {
		const tool = makeTool("pair", async () => ok("never"), {
			parameters: {
				type: "object",
				properties: { a: { type: "number" }, b: { type: "string" }, nested: { type: "object", properties: { n: { type: "integer" } } } },
				required: ["a", "b"],
			},
		});
		const { agent } = agentWith(
			[{ content: [toolCall("pair", { a: "x", nested: { n: "y" } }, "t1")] }, { content: "done" }],
			[tool],
		);
		await agent.prompt("go");
		const text = textOf(toolResults(agent)[0]);
		expect(text.startsWith('Validation failed for tool "pair":\n')).toBe(true);
		expect(text).toContain("\n  - a: must be number");
		expect(text).toContain("\n  - root: must have required properties b");
		expect(text).toMatch(/\n {2}- nested\.n: must be integer/);
		expect(text).toContain("\n\nReceived arguments:\n");
	});

	it("validation converts numeric and boolean strings for TypeBox and JSON Schema alike", async () => {
		const received: unknown[] = [];
		const execute: ToolExecute = async (_id, params) => {
			received.push(params);
			return ok("ok");
		};
		const typebox = makeTool("tb", execute, { parameters: Type.Object({ n: Type.Number(), f: Type.Boolean() }) });
		const json = makeTool("js", execute, {
			parameters: { type: "object", properties: { n: { type: "number" }, f: { type: "boolean" } } },
		});
		const { agent } = agentWith(
			[{ content: [toolCall("tb", { n: "1.5", f: "true" }, "t1"), toolCall("js", { n: "2", f: "false" }, "t2")] }, { content: "done" }],
			[typebox, json],
			{ toolExecution: "sequential" },
		);
		await agent.prompt("go");
		expect(received).toEqual([
			{ n: 1.5, f: true },
			{ n: 2, f: false },
		]);
	});

	it("N7: arguments mutated by beforeToolCall reach execute without revalidation", async () => {
		const received: unknown[] = [];
		const tool = makeTool(
			"echo",
			async (_id, params) => {
				received.push(params["value"]);
				return ok("ok");
			},
			{ parameters: valueSchema },
		);
		const { agent } = agentWith([{ content: [toolCall("echo", { value: "hello" }, "t1")] }, { content: "done" }], [tool], {
			beforeToolCall: async ({ args }) => {
				(args as { value: unknown }).value = 123;
				return undefined;
			},
		});
		await agent.prompt("go");
		expect(received).toEqual([123]);
		expect(toolResults(agent)[0]?.isError).toBe(false);
	});

	it("N8: prepareArguments rewrites legacy raw arguments before validation", async () => {
		const received: unknown[] = [];
		const edit = makeTool(
			"edit",
			async (_id, params) => {
				received.push(params["edits"]);
				return ok("edited");
			},
			{
				parameters: Type.Object({ edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() })) }),
				prepareArguments: (args: unknown) => {
					const raw = args as { oldText?: string; newText?: string; edits?: unknown };
					if (raw.edits) return raw as Record<string, unknown>;
					return { edits: [{ oldText: raw.oldText, newText: raw.newText }] };
				},
			},
		);
		const { agent, rec } = agentWith(
			[{ content: [toolCall("edit", { oldText: "before", newText: "after" }, "t1")] }, { content: "done" }],
			[edit],
		);
		await agent.prompt("go");
		expect(received).toEqual([[{ oldText: "before", newText: "after" }]]);
		const start = rec.events.find((e) => e.type === "tool_execution_start");
		expect(start?.type === "tool_execution_start" && start.args).toEqual({ oldText: "before", newText: "after" });
	});

	it("a prepareArguments that returns a promise (typed code cannot) is an error result naming it, and its rejection does not escape", async () => {
		const escapes = watchEscapes();
		try {
			let executed = 0;
			const tool = makeTool("t", async () => (executed++, ok("ran")), { prepareArguments: (() => Promise.reject(new Error("async prepare"))) as never });
			const { agent } = agentWith([{ content: [toolCall("t", {}, "t1")] }, { content: "done" }], [tool]);
			await agent.prompt("go");
			await sleep(10);
			expect(toolResults(agent).map((r) => [r.isError, textOf(r)])).toEqual([[true, "prepareArguments returned a promise; it must return the arguments synchronously"]]);
			expect(executed).toBe(0);
			expect(escapes.caught).toEqual([]);
		} finally {
			escapes.stop();
		}
	});

	it("a throwing prepareArguments or beforeToolCall becomes an error result and the tool does not run", async () => {
		let executed = 0;
		const tool = makeTool(
			"t",
			async () => {
				executed++;
				return ok("ran");
			},
			{
				prepareArguments: (args: unknown) => {
					if ((args as { bad?: boolean }).bad) throw new Error("cannot prepare");
					return args as Record<string, unknown>;
				},
			},
		);
		const { agent } = agentWith(
			[{ content: [toolCall("t", { bad: true }, "t1"), toolCall("t", { hook: true }, "t2")] }, { content: "done" }],
			[tool],
			{
				beforeToolCall: async ({ toolCall }) => {
					if (toolCall.arguments["hook"]) throw new Error("hook failed");
					return undefined;
				},
			},
		);
		await agent.prompt("go");
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
			["t1", true, "cannot prepare"],
			["t2", true, "hook failed"],
		]);
		expect(executed).toBe(0);
	});

	it("beforeToolCall sees the assistant message, the raw tool call, validated args and the transcript", async () => {
		const tool = makeTool("num", async () => ok("ok"), { parameters: Type.Object({ n: Type.Number() }) });
		const seen: { stop?: string; raw?: unknown; args?: unknown; roles?: string[] } = {};
		const { agent } = agentWith([{ content: [toolCall("num", { n: "3" }, "t1")] }, { content: "done" }], [tool], {
			beforeToolCall: async (ctx) => {
				seen.stop = ctx.assistantMessage.stopReason;
				seen.raw = ctx.toolCall.arguments;
				seen.args = structuredClone(ctx.args);
				seen.roles = ctx.context.messages.map((m) => m.role);
				return undefined;
			},
		});
		await agent.prompt("go");
		expect(seen).toEqual({ stop: "toolUse", raw: { n: "3" }, args: { n: 3 }, roles: ["user", "assistant"] });
	});
});

describe("parallel and sequential batches", () => {
	it("N9/N13: parallel calls overlap; tool_execution_end follows completion order, results follow source order", async () => {
		const secondStarted = deferred();
		const firstMayFinish = deferred();
		const overlap: string[] = [];
		const tool = makeTool("work", async (id) => {
			if (id === "tool-1") {
				overlap.push((await within(secondStarted.promise)) === "timeout" ? "no overlap" : "overlap");
				await firstMayFinish.promise;
			} else {
				secondStarted.resolve();
			}
			return ok(id);
		}, { executionMode: "parallel" });
		const { agent, rec } = agentWith([{ content: [toolCall("work", {}, "tool-1"), toolCall("work", {}, "tool-2")] }, { content: "done" }], [tool]);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_end" && event.toolCallId === "tool-2") firstMayFinish.resolve();
		});
		await agent.prompt("go");
		expect(overlap).toEqual(["overlap"]);
		const ends = rec.events.flatMap((e) => (e.type === "tool_execution_end" ? [e.toolCallId] : []));
		const messages = rec.events.flatMap((e) => (e.type === "message_end" && e.message.role === "toolResult" ? [e.message.toolCallId] : []));
		const turnEnd = rec.events.find((e) => e.type === "turn_end" && e.toolResults.length > 0);
		expect(ends).toEqual(["tool-2", "tool-1"]);
		expect(messages).toEqual(["tool-1", "tool-2"]);
		expect(turnEnd?.type === "turn_end" && turnEnd.toolResults.map((r) => r.toolCallId)).toEqual(["tool-1", "tool-2"]);
		expectWellFormedRun(rec.events);
	});

	it("sequential mode never runs two calls at once and keeps source order", async () => {
		let running = 0;
		let maxRunning = 0;
		const order: string[] = [];
		const tool = makeTool("slow", async (id) => {
			running++;
			maxRunning = Math.max(maxRunning, running);
			order.push(id);
			await sleep(id === "a" ? 25 : 0);
			running--;
			return ok(id);
		});
		const { agent } = agentWith([{ content: [toolCall("slow", {}, "a"), toolCall("slow", {}, "b"), toolCall("slow", {}, "c")] }, { content: "done" }], [tool], {
			toolExecution: "sequential",
		});
		await agent.prompt("go");
		expect(maxRunning).toBe(1);
		expect(order).toEqual(["a", "b", "c"]);
		expect(toolResults(agent).map((r) => r.toolCallId)).toEqual(["a", "b", "c"]);
	});

	it("N11: a tool with executionMode sequential makes its batch sequential under the default parallel mode", async () => {
		let running = 0;
		let maxRunning = 0;
		const tool = makeTool(
			"slow",
			async (id) => {
				running++;
				maxRunning = Math.max(maxRunning, running);
				await sleep(id === "tool-1" ? 25 : 0);
				running--;
				return ok(id);
			},
			{ executionMode: "sequential" },
		);
		const { agent, rec } = agentWith([{ content: [toolCall("slow", {}, "tool-1"), toolCall("slow", {}, "tool-2")] }, { content: "done" }], [tool]);
		await agent.prompt("go");
		expect(maxRunning).toBe(1);
		// Sequential event shape: each call's result message right after its end.
		expect(rec.skeleton().filter((l) => l.startsWith("tool_") || l.includes(":toolResult("))).toEqual([
			"tool_execution_start(tool-1)",
			"tool_execution_end(tool-1)",
			"message_start:toolResult(tool-1)",
			"message_end:toolResult(tool-1)",
			"tool_execution_start(tool-2)",
			"tool_execution_end(tool-2)",
			"message_start:toolResult(tool-2)",
			"message_end:toolResult(tool-2)",
		]);
	});

	it("N12: one sequential tool among parallel ones makes the whole batch sequential", async () => {
		const order: string[] = [];
		const slow = makeTool(
			"slow",
			async () => {
				order.push("slow:start");
				await sleep(25);
				order.push("slow:end");
				return ok("slow");
			},
			{ executionMode: "sequential" },
		);
		const fast = makeTool("fast", async () => {
			order.push("fast");
			return ok("fast");
		});
		const { agent } = agentWith([{ content: [toolCall("slow", {}, "a"), toolCall("fast", {}, "b")] }, { content: "done" }], [slow, fast]);
		await agent.prompt("go");
		expect(order).toEqual(["slow:start", "slow:end", "fast"]);
	});

	it("tool updates become tool_execution_update events with the raw args, and pendingToolCalls tracks running calls", async () => {
		const pendingAtUpdate: string[][] = [];
		const tool = makeTool("prog", async (_id, _params, _signal, onUpdate) => {
			onUpdate?.(ok("25%"));
			onUpdate?.(ok("50%"));
			return ok("done");
		});
		const { agent, rec } = agentWith([{ content: [toolCall("prog", { value: "x" }, "t1")] }, { content: "done" }], [tool]);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_update") pendingAtUpdate.push([...agent.state.pendingToolCalls]);
		});
		await agent.prompt("go");
		const updates = rec.events.filter((e) => e.type === "tool_execution_update");
		expect(updates.map((e) => e.type === "tool_execution_update" && [e.toolName, e.args, textOf(e.partialResult)])).toEqual([
			["prog", { value: "x" }, "25%"],
			["prog", { value: "x" }, "50%"],
		]);
		expect(pendingAtUpdate).toEqual([["t1"], ["t1"]]);
		expectIdle(agent);
	});
});

describe("afterToolCall", () => {
	it("T8: overrides field by field: given fields replace, omitted ones are kept", async () => {
		const tool = makeTool("t", async () => ok("original", { a: 1 }));
		const { agent, rec } = agentWith([{ content: [toolCall("t", {}, "t1")] }, { content: "done" }], [tool], {
			afterToolCall: async () => ({ content: [{ type: "text", text: "patched" }], isError: true }),
		});
		await agent.prompt("go");
		expect(rec.skeleton()).toContain("tool_execution_end(t1,err:patched)");
		expect(toolResults(agent)[0]).toMatchObject({ isError: true, content: [{ type: "text", text: "patched" }], details: { a: 1 } });
	});

	it("sees the result, isError and validated args, and may replace details only", async () => {
		const tool = makeTool("t", async () => {
			throw new Error("failed");
		});
		const seen: unknown[] = [];
		const { agent } = agentWith([{ content: [toolCall("t", { value: "v" }, "t1")] }, { content: "done" }], [tool], {
			afterToolCall: async ({ result, isError, args }) => {
				seen.push(textOf(result), isError, args);
				return { details: { replaced: true } };
			},
		});
		await agent.prompt("go");
		expect(seen).toEqual(["failed", true, { value: "v" }]);
		expect(toolResults(agent)[0]).toMatchObject({ isError: true, content: [{ type: "text", text: "failed" }], details: { replaced: true } });
	});

	it("a throwing afterToolCall yields an error result with its message and the batch goes on", async () => {
		const { agent } = agentWith(
			[{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("echo", { value: "b" }, "t2")] }, { content: "done" }],
			[echoTool()],
			{
				afterToolCall: async ({ toolCall }) => {
					if (toolCall.id === "t1") throw new Error("after failed");
					return undefined;
				},
			},
		);
		await agent.prompt("go");
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
			["t1", true, "after failed"],
			["t2", false, "echo:b"],
		]);
		expect(roles(agent.state.messages).at(-1)).toBe("assistant(stop)");
	});
});

describe("terminate", () => {
	const terminating = (terminate: boolean): AgentToolResult<unknown> => ({ ...ok("r"), terminate });

	it("N16: a batch whose every result terminates ends the run without another LLM call", async () => {
		const tool = makeTool("t", async () => terminating(true));
		const { agent, scripted, rec } = agentWith([{ content: [toolCall("t", {}, "a"), toolCall("t", {}, "b")] }, { content: "never" }], [tool]);
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(1);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(toolUse)", "toolResult:a", "toolResult:b"]);
		expect(rec.types().filter((t) => t === "turn_end")).toHaveLength(1);
	});

	it("N19: when only some results terminate the loop calls the model again", async () => {
		const tool = makeTool("t", async (id) => terminating(id === "a"));
		const { agent, scripted } = agentWith([{ content: [toolCall("t", {}, "a"), toolCall("t", {}, "b")] }, { content: "done" }], [tool]);
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(2);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(toolUse)", "toolResult:a", "toolResult:b", "assistant(stop)"]);
	});

	it("an error result (tool not found) in the batch prevents termination", async () => {
		const tool = makeTool("t", async () => terminating(true));
		const { agent, scripted } = agentWith([{ content: [toolCall("t", {}, "a"), toolCall("missing", {}, "b")] }, { content: "done" }], [tool]);
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(2);
	});

	it("N20: afterToolCall can mark a batch as terminating", async () => {
		const { agent, scripted } = agentWith([{ content: [toolCall("echo", { value: "x" }, "a")] }, { content: "never" }], [echoTool()], {
			afterToolCall: async () => ({ terminate: true }),
		});
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(1);
		expect(agent.state.messages.at(-1)?.role).toBe("toolResult");
	});

	it("a terminating batch still takes queued steering into a new turn", async () => {
		const tool = makeTool("t", async () => terminating(true));
		const { agent, scripted } = agentWith([{ content: [toolCall("t", {}, "a")] }, { content: "steered" }], [tool]);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_start") agent.steer(user("STEER"));
		});
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(2);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(toolUse)", "toolResult:a", "user", "assistant(stop)"]);
	});
});

describe("tool call signals", () => {
	// Each call's signal is its own while it runs (a timeout or a failing sibling stops it alone);
	// a later call of the run may get the controller of one that settled with its signal clean.
	function signalRecorder(name: string, behave: (signal: AbortSignal) => Promise<void> = async () => {}) {
		const signals: AbortSignal[] = [];
		const tool = makeTool(name, async (_id, _p, signal) => {
			if (!signal) throw new Error("no signal");
			signals.push(signal);
			await behave(signal);
			return ok(name);
		});
		return { tool, signals };
	}

	it("the calls in flight together each get a signal of their own, none of them the run's", async () => {
		const { tool, signals } = signalRecorder("t", () => sleep(5));
		const { agent } = agentWith([{ content: [toolCall("t", {}, "a"), toolCall("t", {}, "b"), toolCall("t", {}, "c")] }, { content: "done" }], [tool]);
		let runSignal: AbortSignal | undefined;
		agent.subscribe((event, signal) => {
			if (event.type === "agent_start") runSignal = signal;
		});
		await agent.prompt("go");
		expect(new Set(signals).size).toBe(3);
		expect(signals).not.toContain(runSignal);
	});

	it("each call gets a signal of its own, and the run's abort aborts an earlier call's too (work it left running hears it)", async () => {
		const { tool, signals } = signalRecorder("t");
		const { agent } = agentWith([{ content: [toolCall("t", {}, "a")] }, { content: [toolCall("t", {}, "b")] }, { content: "never read" }], [tool]);
		let abortedBeforeTheAbort: boolean | undefined;
		agent.subscribe((event) => {
			if (event.type === "turn_start" && signals.length === 2) {
				abortedBeforeTheAbort = signals[0]?.aborted;
				agent.abort();
			}
		});
		await agent.prompt("go");
		expect(signals[1]).not.toBe(signals[0]);
		expect(abortedBeforeTheAbort).toBe(false);
		expect(signals[0]?.aborted).toBe(true);
	});

	it("work a call left listening on its signal is not stopped by a later call's timeout", async () => {
		let leftoverStopped = false;
		const starter = makeTool("starter", async (_id, _p, signal) => {
			// Returns at once, leaving work that stops when its call's signal aborts.
			signal?.addEventListener("abort", () => (leftoverStopped = true));
			return ok("started");
		});
		const slow = makeTool("slow", async (_id, _p, signal) => (await whenAborted(signal), ok("late")), { timeoutMs: 20 });
		const { agent } = agentWith([{ content: [toolCall("starter", {}, "a")] }, { content: [toolCall("slow", {}, "b")] }, { content: "done" }], [starter, slow]);
		await agent.prompt("go");
		expect(toolResults(agent).map((r) => [r.toolCallId, textOf(r)])).toEqual([
			["a", "started"],
			["b", 'Tool "slow" timed out after 20 ms'],
		]);
		expect(leftoverStopped).toBe(false);
	});

	it("a timed-out call's signal is not handed to a later call", async () => {
		const signals: AbortSignal[] = [];
		const slow = makeTool("slow", async (_id, _p, signal) => {
			if (signal) signals.push(signal);
			await whenAborted(signal);
			return ok("late");
		}, { timeoutMs: 20 });
		const { tool, signals: later } = signalRecorder("t");
		const { agent } = agentWith([{ content: [toolCall("slow", {}, "a")] }, { content: [toolCall("t", {}, "b")] }, { content: "done" }], [slow, tool]);
		await agent.prompt("go");
		expect(signals[0]?.aborted).toBe(true);
		expect(later[0]?.aborted).toBe(false);
		expect(later[0]).not.toBe(signals[0]);
	});
});
