/**
 * An inspector attached between a turn's end and the next reply's start (a listener still holding
 * turn_start, a compaction before the call): the stream's progress still holds the last reply,
 * which is in the transcript already; it must not be re-told as a reply streaming.
 */
import { describe, expect, it } from "vitest";
import { Agent, createScriptedModel } from "../../src/index.js";
import { toolCall } from "../../src/providers/scripted.js";
import { Type } from "typebox";
import { assistantsOf as assistants, attachRecording, modelOf } from "./attach-helpers.js";

describe("restore after a turn", () => {
	it("does not show the previous turn's reply as streaming while the next call waits", async () => {
		const { model, streamFn } = createScriptedModel([
			{ content: [{ type: "text", text: "Let me check." }, toolCall("clock", {})] },
			{ content: [{ type: "text", text: "It is noon." }] },
		]);
		const clock = { name: "clock", label: "clock", description: "time", parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text" as const, text: "12:00" }], details: {} }) };
		const agent = new Agent({ initialState: { model, tools: [clock] }, streamFn });
		let release!: () => void;
		const gate = new Promise<void>((r) => (release = r));
		let turns = 0;
		let reached!: () => void;
		const atSecondTurn = new Promise<void>((r) => (reached = r));
		agent.subscribe(async (event) => {
			if (event.type === "turn_start" && ++turns === 2) {
				reached();
				await gate;
			}
		});
		try {
			const run = agent.prompt("time?");
			await atSecondTurn;
			const { inspector, records } = attachRecording(agent);
			const shown = assistants(modelOf(records));
			release();
			await run;
			inspector.flush();
			const after = assistants(modelOf(records));
			expect(shown.filter((e) => e.streaming)).toHaveLength(0);
			expect(after).toHaveLength(2);
		} finally {
			agent.dispose();
		}
	});
});
