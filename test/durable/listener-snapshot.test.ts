/**
 * A snapshot taken by a listener right after it gave a command. A listener runs while the machine
 * finishes the step that emitted its event, so the machine takes `steer()`, `followUp()`, a queue
 * change or `abort()` only after it: the snapshot still carries each, and the restored run takes
 * it. Found by probing: the snapshot lost them (a run aborted by the listener went on after the
 * restore and asked the model again), and a streaming run stored after its abort lost the calls of
 * its reply, also those that had run or that a person had been asked about.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, ToolExecutionMode } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { expectValidTranscript, makeTool, ok, textOf, throughJson, user } from "../agent/helpers.js";

/** Each message as `role: text` (tool calls by id), so transcripts compare at a glance. */
function lines(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => {
		if (message.role === "toolResult") return `toolResult ${message.toolCallId}: ${textOf(message).slice(0, 40)}`;
		if (message.role === "assistant") return `assistant (${message.stopReason}) ${message.content.map((block) => (block.type === "toolCall" ? `call ${block.id}` : block.type === "text" ? block.text.slice(0, 12) : block.type)).join(", ")}`;
		return `${message.role}: ${textOf(message)}`;
	});
}

/** The restored run ended, and its listeners heard the end. */
function expectEnded(agent: Agent, events: readonly AgentEvent[]): void {
	expect(agent.state.isStreaming).toBe(false);
	expect(events.at(-1)?.type).toBe("agent_end");
}

for (const interpreter of ["agentchart", "xstate"] as const) {
	describe(`a listener's command just before its snapshot (${interpreter} interpreter)`, () => {
		const run = <T>(make: () => T) => withInterpreter(interpreter, make);

		/**
		 * An agent whose reply calls `send` ("a"; it takes 5 ms, after a long streamed tail in
		 * streaming mode), and whose listener, at the first `at` event, gives `command` and takes a
		 * snapshot. Returns the snapshot (through JSON) and what the agent did.
		 */
		async function snapshotAfter(at: AgentEvent["type"], mode: ToolExecutionMode, command: (agent: Agent) => void, needsApproval = false) {
			const runs: string[] = [];
			const send = makeTool("send", async (id) => (runs.push(id), await new Promise((resolve) => setTimeout(resolve, 5)), ok("sent")), needsApproval ? { needsApproval: true } : {});
			const reply = mode === "streaming" ? { content: [toolCall("send", {}, "a"), text("a long tail ".repeat(200))] } : { content: [toolCall("send", {}, "a")] };
			const scripted = createScriptedModel([reply, { content: "done" }, { content: "more" }, { content: "even more" }], { delayMs: 1 });
			const agent = run(() => new Agent({ initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn, toolExecution: mode }));
			let snapshot: AgentSnapshot | undefined;
			agent.subscribe((event) => {
				if (event.type !== at || snapshot) return;
				command(agent);
				snapshot = throughJson(agent.snapshot());
			});
			const settled = agent.prompt("go");
			if (!needsApproval) await settled;
			else for (let i = 0; i < 500 && !snapshot; i++) await new Promise((resolve) => setTimeout(resolve, 1));
			if (!snapshot) throw new Error(`no ${at} event`);
			return { snapshot, runs, send, live: agent };
		}

		async function restoreAndFinish(snapshot: AgentSnapshot, tools: NonNullable<Parameters<typeof Agent.restore>[1]>["initialState"], mode: ToolExecutionMode) {
			const model = createScriptedModel([{ content: "after the restore" }, { content: "and again" }]);
			const events: AgentEvent[] = [];
			const restored = await run(() => Agent.restore(snapshot, { ...(tools ? { initialState: tools } : {}), streamFn: model.streamFn, toolExecution: mode, listeners: [(event: AgentEvent) => void events.push(event)] }));
			await restored.waitForIdle();
			return { restored, model, events };
		}

		for (const mode of ["parallel", "streaming"] as const) {
			it(`keeps a steer, a follow-up and a queue mode change (${mode})`, async () => {
				const { snapshot, send } = await snapshotAfter("tool_execution_end", mode, (agent) => {
					agent.steer(user("steered"));
					agent.followUp(user("later"));
					agent.followUpMode = "all";
				});
				const context = snapshot.machine.context;
				expect(context.steeringQueue.map(textOf)).toEqual(["steered"]);
				expect(context.followUpQueue.map(textOf)).toEqual(["later"]);
				expect(context.followUpMode).toBe("all");
				const { restored } = await restoreAndFinish(snapshot, { tools: [send] }, mode);
				const users = restored.state.messages.filter((message) => message.role === "user").map(textOf);
				expect(users).toEqual(["go", "steered", "later"]);
				expectValidTranscript(restored.state.messages);
			});

			it(`keeps an abort: the restored run ends without asking the model again, and keeps what the tool did (${mode})`, async () => {
				const { snapshot, runs, send, live } = await snapshotAfter("tool_execution_end", mode, (agent) => agent.abort());
				// The condition this case is about: the machine had not taken the abort.
				expect(snapshot.machine.context.run?.aborted).not.toBe(true);
				expect(snapshot.agent.abortPending).toBe(true);
				const { restored, model, events } = await restoreAndFinish(snapshot, { tools: [send] }, mode);
				expect(model.calls).toHaveLength(0);
				expect(runs).toEqual(["a"]);
				const restoredLines = lines(restored.state.messages);
				expect(restoredLines).toContain("toolResult a: sent");
				// The live run closed the same call with the same result (streaming: also what streamed after it, which a restore drops).
				expect(lines(live.state.messages).slice(0, restoredLines.length)).toEqual(restoredLines);
				expect(restoredLines.some((line) => line.includes("after the restore"))).toBe(false);
				expectValidTranscript(restored.state.messages);
				expectEnded(restored, events);
			});
		}

		it("keeps the calls of a streaming reply stored after its abort: one a person was asked about is answered, not dropped", async () => {
			const { snapshot, runs, send, live } = await snapshotAfter("approval_requested", "streaming", (agent) => agent.abort(), true);
			await live.waitForIdle();
			expect(snapshot.machine.context.run?.aborted).toBe(true);
			const { restored, model, events } = await restoreAndFinish(snapshot, { tools: [send] }, "streaming");
			expect(model.calls).toHaveLength(0);
			expect(runs).toEqual([]);
			expect(restored.pendingApprovals).toEqual([]);
			const restoredLines = lines(restored.state.messages);
			expect(restoredLines).toEqual(["user: go", "assistant (toolUse) call a", "toolResult a: Tool call was aborted before it ran"]);
			// Live, the call got the reply's end as its reason: the same call, answered as not run.
			expect(lines(live.state.messages).slice(0, 3)).toEqual(["user: go", "assistant (toolUse) call a", "toolResult a: Tool call aborted: the assistant message"]);
			expectValidTranscript(restored.state.messages);
			expectEnded(restored, events);
		});

		// The class, not only the cases above: a listener may give its commands and take its snapshot at any event of a run.
		for (const mode of ["parallel", "sequential", "streaming"] as const) {
			it(`keeps what a listener gave at any event of a run, in a snapshot it took then (${mode})`, async () => {
				const replies = () => createScriptedModel([{ content: [text("checking"), toolCall("send", {}, "a"), toolCall("send", {}, "b")] }, { content: "done" }, { content: "more" }, { content: "even more" }], { delayMs: 1 });
				const send = makeTool("send", async () => (await new Promise((resolve) => setTimeout(resolve, 2)), ok("sent")));
				const counted = run(() => new Agent({ initialState: { model: replies().model, tools: [send] }, streamFn: replies().streamFn, toolExecution: mode }));
				let eventCount = 0;
				counted.subscribe(() => void eventCount++);
				await counted.prompt("go");
				expect(eventCount).toBeGreaterThan(15);
				const failures: string[] = [];
				for (let at = 0; at < eventCount; at++) {
					for (const command of ["queue", "abort"] as const) {
						const scripted = replies();
						const agent = run(() => new Agent({ initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn, toolExecution: mode }));
						let seen = 0;
						let snapshot: AgentSnapshot | undefined;
						let where = "";
						agent.subscribe((event) => {
							if (seen++ !== at) return;
							where = event.type;
							if (command === "abort") agent.abort();
							else {
								agent.steer(user("steered"));
								agent.followUp(user("later"));
							}
							snapshot = throughJson(agent.snapshot());
						});
						await agent.prompt("go");
						if (!snapshot) throw new Error(`no event ${at}`);
						const model = createScriptedModel([{ content: "after the restore" }, { content: "and again" }]);
						const restored = await run(() => Agent.restore(snapshot as AgentSnapshot, { initialState: { tools: [send] }, streamFn: model.streamFn, toolExecution: mode }));
						await restored.waitForIdle();
						const users = restored.state.messages.filter((message) => message.role === "user").map(textOf);
						const rest = restored.snapshot().machine.context;
						const queued = [...rest.steeringQueue, ...rest.followUpQueue].map(textOf);
						const label = `event ${at} (${where}), ${command}`;
						if (command === "abort" && model.calls.length > 0) failures.push(`${label}: the restored run asked the model ${model.calls.length} time(s) after the abort`);
						if (command === "queue") {
							for (const given of ["steered", "later"]) {
								const times = users.filter((each) => each === given).length + queued.filter((each) => each === given).length;
								if (times !== 1) failures.push(`${label}: "${given}" is in the restored agent ${times} times`);
							}
						}
						expectValidTranscript(restored.state.messages);
					}
				}
				expect(failures).toEqual([]);
			});
		}

		it("numbers a restored agent's queue commands after those its stored machine took", async () => {
			const send = makeTool("send", async () => ok("sent"), { needsApproval: true });
			const scripted = createScriptedModel([{ content: [toolCall("send", {}, "a")] }, { content: "done" }, { content: "more" }, { content: "even more" }]);
			const first = run(() => new Agent({ initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn }));
			void first.prompt("go");
			for (let i = 0; i < 500 && first.pendingApprovals.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
			// Taken by the waiting machine at once: its context counts them.
			first.followUp(user("one"));
			first.clearFollowUpQueue();
			first.followUp(user("two"));
			first.clearFollowUpQueue();
			const waiting = throughJson(first.snapshot());
			first.abort();
			expect(waiting.machine.context.commandSeq).toBe(4);

			const model = createScriptedModel([{ content: "done" }, { content: "more" }]);
			const second = await run(() => Agent.restore(waiting, { initialState: { tools: [send] }, streamFn: model.streamFn }));
			let stored: AgentSnapshot | undefined;
			second.subscribe((event) => {
				if (event.type !== "tool_execution_end" || stored) return;
				second.steer(user("steered after the restore"));
				stored = throughJson(second.snapshot());
			});
			second.approve("a");
			await second.waitForIdle();
			expect(stored?.machine.context.steeringQueue.map(textOf)).toEqual(["steered after the restore"]);
			expect(second.state.messages.filter((message) => message.role === "user").map(textOf)).toEqual(["go", "steered after the restore"]);
		});
	});
}
