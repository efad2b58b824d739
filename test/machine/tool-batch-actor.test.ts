/**
 * The tool batch actor on its own, without the agent chart: what it promises its parent by
 * itself. In the agent the chart's guards (`isRunningCall`) also ignore what a cancelled or
 * stopped call reports late, so only a test that drives the batch alone can hold the batch to
 * its own part: a call cancelled or stopped reports nothing more and is not shown to
 * `afterToolCall`, its tool sees its signal aborted, and a call cancelled while `beforeToolCall`
 * decides never runs.
 */
import { describe, expect, it } from "vitest";
import { type AnyEventObject, createActor, sendTo, setup } from "xstate";
import { toolBatchActor } from "../../src/actors/tool-batch-actor.js";
import type { ToolBatchCommand, ToolBatchEvent, ToolBatchInput } from "../../src/actors/tool-batch-protocol.js";
import type { AgentToolCall, AnyAgentTool } from "../../src/types/agent.js";
import { RunAbort } from "../../src/util/run-abort.js";
import { assistant, deferred, flush, makeTool, ok } from "../agent/helpers.js";

/** A parent that invokes the batch, passes commands on and records what the batch sends back. */
function batchInParent(tools: AnyAgentTool[], hooks: Pick<ToolBatchInput, "beforeToolCall" | "afterToolCall"> = {}) {
	const events: ToolBatchEvent[] = [];
	const input: ToolBatchInput = {
		tools,
		assistantMessage: assistant("calls"),
		context: { systemPrompt: "", messages: [] },
		abort: new RunAbort(),
		timeoutMs: 0,
		journal: undefined,
		...hooks,
	};
	const parent = setup({ actors: { batch: toolBatchActor } }).createMachine({
		initial: "running",
		states: {
			running: {
				invoke: { id: "batch", src: "batch", input },
				on: {
					command: { actions: sendTo("batch", ({ event }) => (event as AnyEventObject & { command: ToolBatchCommand }).command) },
					finish: { target: "done" },
					"tool.*": { actions: ({ event }) => events.push(event as ToolBatchEvent) },
				},
			},
			done: {},
		},
	});
	const actor = createActor(parent).start();
	const send = (command: ToolBatchCommand) => actor.send({ type: "command", command });
	return { actor, events, send, input };
}

const call = (id: string, name = "slow"): AgentToolCall => ({ type: "toolCall", id, name, arguments: {} });

/** A tool that waits for its release, records its signal, and calls onUpdate after it resolved. */
function heldTool() {
	const release = deferred();
	const seen: { signal: AbortSignal | undefined; ran: number } = { signal: undefined, ran: 0 };
	let update: ((partial: ReturnType<typeof ok>) => void) | undefined;
	const tool = makeTool("slow", async (_id, _params, signal, onUpdate) => {
		seen.ran++;
		seen.signal = signal;
		update = onUpdate as typeof update;
		await release.promise;
		return ok("late");
	});
	return { tool, release, seen, lateUpdate: () => update?.(ok("after")) };
}

describe("the tool batch actor on its own", () => {
	it("a cancelled call reports nothing more, is not shown to afterToolCall, and its tool sees the cancel", async () => {
		const held = heldTool();
		const after: string[] = [];
		const { events, send } = batchInParent([held.tool], { afterToolCall: async ({ toolCall }) => void after.push(toolCall.id) });
		send({ type: "execute", callKey: "a", toolCall: call("a"), args: {} });
		await flush();
		send({ type: "cancel", callKey: "a" });
		expect(held.seen.signal?.aborted).toBe(true);
		held.release.resolve();
		await flush();
		held.lateUpdate();
		await flush();
		expect(events).toEqual([]);
		expect(after).toEqual([]);
	});

	it("a call that settled reports no update its tool sends afterwards", async () => {
		const held = heldTool();
		const { events, send } = batchInParent([held.tool]);
		send({ type: "execute", callKey: "a", toolCall: call("a"), args: {} });
		await flush();
		held.release.resolve();
		await flush();
		held.lateUpdate();
		await flush();
		expect(events.map((event) => event.type)).toEqual(["tool.settled"]);
	});

	it("a call cancelled while beforeToolCall decides never runs", async () => {
		const held = heldTool();
		const decide = deferred();
		const { events, send } = batchInParent([held.tool], { beforeToolCall: async () => { await decide.promise; return undefined; } });
		send({ type: "preflight-and-execute", callKey: "a", toolCall: call("a") });
		await flush();
		send({ type: "cancel", callKey: "a" });
		decide.resolve();
		await flush();
		expect(held.seen.ran).toBe(0);
		expect(events).toEqual([]);
	});

	it("stopping the batch (its parent leaves the state) aborts the calls in flight, and they report nothing more", async () => {
		const held = heldTool();
		const after: string[] = [];
		const { actor, events, send, input } = batchInParent([held.tool], { afterToolCall: async ({ toolCall }) => void after.push(toolCall.id) });
		send({ type: "execute", callKey: "a", toolCall: call("a"), args: {} });
		await flush();
		actor.send({ type: "finish" });
		// Stopped without the run's abort: the batch's own stop is what reaches the tool.
		expect(input.abort.aborted).toBe(false);
		expect(held.seen.signal?.aborted).toBe(true);
		held.release.resolve();
		await flush();
		expect(events).toEqual([]);
		expect(after).toEqual([]);
	});
});
