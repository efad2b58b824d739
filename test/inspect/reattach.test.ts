/**
 * An inspector detached and attached again to the same agent tells what happened while it was
 * away, not again what it had already told: its pages and recordings show each message, run and
 * call once, and what it had shown open and ended meanwhile is closed. (The class, at random
 * points of random runs: reattach.property.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { makeTool, ok } from "../agent/helpers.js";
import { modelOf, recordingInspector } from "../visualizer/attach-helpers.js";
import { attachVisualizer } from "../../src/inspect/visualizer-server.js";
import { deployAgent } from "../visualizer/scenarios.js";

/** The conversation as the page shows it: who, a user's text, a call's or a wait's status. */
function conversation(records: readonly InspectionRecord[]): string[] {
	return modelOf(records).transcript.map((entry) => {
		if (entry.kind === "user") return `user: ${entry.text}`;
		if (entry.kind === "span") return `${entry.spanKind} ${entry.status}`;
		return entry.kind;
	});
}

function emitted(records: readonly InspectionRecord[], type: string): number {
	return records.filter((record) => record.type === "@agentchart.emitted" && record.event.type === type).length;
}

describe("an inspector attached again to the same agent", () => {
	it("between runs: tells the run it missed, not the one it saw", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		try {
			const { inspector, records } = recordingInspector();
			let detach = inspector.attach(agent.actor);
			await agent.prompt("first");
			inspector.flush();
			detach();
			await agent.prompt("second, while detached");
			detach = inspector.attach(agent.actor);
			await agent.prompt("third");
			inspector.flush();
			detach();
			expect(conversation(records)).toEqual(["user: first", "assistant", "user: second, while detached", "assistant", "user: third", "assistant"]);
			expect(conversation(inspector.history())).toEqual(conversation(records));
		} finally {
			agent.dispose();
		}
	});

	it("while calls wait for approval: the run, its turn and the waiting calls are not told twice", async () => {
		const { agent, asked } = deployAgent();
		const run = agent.prompt("Deploy billing and search");
		try {
			await asked;
			const { inspector, records } = recordingInspector();
			let detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			detach = inspector.attach(agent.actor);
			inspector.flush();
			await agent.approve("d1");
			await agent.reject("d2", "not on a Friday");
			await run;
			inspector.flush();
			detach();
			expect(conversation(records)).toEqual(["user: Deploy billing and search", "assistant", "tool done", "approval done", "tool error", "approval error", "assistant"]);
			expect(emitted(records, "agent_start")).toBe(1);
			expect(emitted(records, "turn_start")).toBe(2);
			expect(emitted(records, "approval_requested")).toBe(2);
			expect(emitted(records, "tool_execution_start")).toBe(2);
		} finally {
			await Promise.all(agent.pendingApprovals.map((call) => agent.reject(call.toolCallId, "test cleanup")));
			await run.catch(() => undefined);
			agent.dispose();
		}
	});

	it("twice at once (attachVisualizer given the inspector a recording uses): inspected once, until both let go", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		try {
			const { inspector, records } = recordingInspector();
			const detach = inspector.attach(agent.actor);
			const visualizer = await attachVisualizer(agent.actor, { inspector });
			await agent.prompt("first");
			inspector.flush();
			await visualizer.close();
			await agent.prompt("second");
			inspector.flush();
			detach();
			expect(conversation(records)).toEqual(["user: first", "assistant", "user: second", "assistant"]);
			expect(emitted(records, "agent_start")).toBe(2);
			const counted = records.filter((record) => record.type === "@agentchart.deltas").reduce((sum, record) => sum + record.chars, 0);
			expect(counted).toBe("onetwo".length);
		} finally {
			agent.dispose();
		}
	});

	it("after the approvals were answered and the run ended while detached: nothing is left open, as when attached throughout", async () => {
		const { agent, asked } = deployAgent();
		const run = agent.prompt("Deploy billing and search");
		try {
			await asked;
			const { inspector, records } = recordingInspector();
			let detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			await agent.approve("d1");
			await agent.reject("d2", "not on a Friday");
			await run;
			detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			// Attached throughout, the page shows this, with no span open.
			expect(conversation(records)).toEqual(["user: Deploy billing and search", "assistant", "tool done", "approval done", "tool error", "approval error", "assistant"]);
			expect(Object.keys(modelOf(records).open)).toEqual([]);
		} finally {
			await Promise.all(agent.pendingApprovals.map((call) => agent.reject(call.toolCallId, "test cleanup")));
			await run.catch(() => undefined);
			agent.dispose();
		}
	});

	it("detached while a reply streamed, and the run ended meanwhile: the reply is shown once, ended, and the run is not left open", async () => {
		const scripted = createScriptedModel([{ content: "a reply long enough to stream in many chunks" }], { chunkSize: 4, delayMs: 5 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		try {
			const { inspector, records } = recordingInspector();
			let detach = inspector.attach(agent.actor);
			const streaming = new Promise<void>((resolve) => {
				const unsubscribe = agent.subscribe((event) => {
					if (event.type !== "message_update") return;
					unsubscribe();
					resolve();
				});
			});
			const run = agent.prompt("go");
			await streaming;
			inspector.flush();
			detach();
			await run;
			detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			const model = modelOf(records);
			expect(conversation(records)).toEqual(["user: go", "assistant"]);
			expect(Object.keys(model.open)).toEqual([]);
		} finally {
			agent.dispose();
		}
	});

	it("while two calls with one id wait, one decided while detached: its row closes and the other stays open (told by key, not id)", async () => {
		const scripted = createScriptedModel([
			{ content: [toolCall("deploy", { service: "billing" }, "d1"), toolCall("deploy", { service: "search" }, "d1")] },
			{ content: "done" },
		]);
		const deploy = makeTool("deploy", async () => ok("deployed"), { needsApproval: true });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		let asked = 0;
		const bothAsked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && ++asked === 2 && resolve())));
		const run = agent.prompt("Deploy billing and search");
		try {
			await bothAsked;
			const { inspector, records } = recordingInspector();
			let detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			// The second call (its key `d1#2`) is rejected while nobody watches; the first still waits.
			await agent.reject("d1#2", "not now");
			detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			expect(conversation(records)).toEqual(["user: Deploy billing and search", "assistant", "tool open", "approval open", "tool error", "approval error"]);
			detach = inspector.attach(agent.actor);
			await agent.approve("d1#1");
			await run;
			inspector.flush();
			detach();
			expect(conversation(records)).toEqual(["user: Deploy billing and search", "assistant", "tool done", "approval done", "tool error", "approval error", "assistant"]);
			expect(Object.keys(modelOf(records).open)).toEqual([]);
		} finally {
			await Promise.all(agent.pendingApprovals.map((call) => agent.reject(call.callKey, "test cleanup")));
			await run.catch(() => undefined);
			agent.dispose();
		}
	});

	it("when the model's own ids look like keys (x, x#2, x: keyed x, x#2, x#3), each call is told by its place among its id's calls", async () => {
		const scripted = createScriptedModel([
			{ content: [toolCall("deploy", { service: "a" }, "x"), toolCall("deploy", { service: "b" }, "x#2"), toolCall("deploy", { service: "c" }, "x")] },
			{ content: "done" },
		]);
		const deploy = makeTool("deploy", async () => ok("deployed"), { needsApproval: true });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		let asked = 0;
		const allAsked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && ++asked === 3 && resolve())));
		const throughout = recordingInspector();
		const detachThroughout = throughout.inspector.attach(agent.actor);
		const run = agent.prompt("Deploy a, b and c");
		try {
			await allAsked;
			const { inspector, records } = recordingInspector();
			let detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			for (const call of agent.pendingApprovals) await agent.approve(call.callKey);
			await run;
			detach = inspector.attach(agent.actor);
			inspector.flush();
			detach();
			throughout.inspector.flush();
			// Before, the third call's approval stayed open and its result was told again as a new call.
			expect(conversation(records)).toEqual(conversation(throughout.records));
			expect(Object.keys(modelOf(records).open)).toEqual([]);
		} finally {
			detachThroughout();
			await run.catch(() => undefined);
			agent.dispose();
		}
	});
});
