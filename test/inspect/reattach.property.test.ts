/**
 * The class of "an inspector detached and attached again shows the agent wrongly": random runs
 * (text replies, tool calls that answer or fail, calls that wait for approval and are approved
 * or rejected, several prompts), one inspector attached throughout, another detached at a random
 * event and attached again at a later one. Once the agent rests, the second one's page must show
 * what the first one's shows: each message once and in order, each tool call once with the same
 * outcome, nothing left open. (Approvals asked and answered entirely while it was away are not in
 * the agent any more, so they are allowed to be missing, never to be doubled.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { createScriptedModel, type ScriptedReply, text, toolCall } from "../../src/providers/scripted.js";
import { makeTool, ok } from "../agent/helpers.js";
import { modelOf } from "../visualizer/attach-helpers.js";

/** A call may repeat the id of the reply's call before it (a model that repeats ids): its `callKey` tells it apart. */
type Block = { kind: "text" } | { kind: "call"; tool: "echo" | "fail" | "guarded"; repeatId: boolean };
interface Scenario {
	prompts: { replies: Block[][] }[];
	approve: boolean[];
	chunkSize: number;
	detachAt: number;
	awayFor: number;
}

const block: fc.Arbitrary<Block> = fc.oneof(
	fc.constant<Block>({ kind: "text" }),
	fc.record({ kind: fc.constant("call" as const), tool: fc.constantFrom("echo" as const, "fail" as const, "guarded" as const), repeatId: fc.boolean() }),
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
	prompts: fc.array(fc.record({ replies: fc.array(fc.array(block, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 2 }),
	approve: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
	chunkSize: fc.integer({ min: 2, max: 12 }),
	detachAt: fc.integer({ min: 0, max: 60 }),
	awayFor: fc.integer({ min: 1, max: 60 }),
});

/** The page's conversation: who, a user's text, a span's kind and status. */
function conversation(records: readonly InspectionRecord[]): string[] {
	return modelOf(records).transcript.map((entry) => {
		if (entry.kind === "user") return `user: ${entry.text}`;
		if (entry.kind === "span") return `${entry.spanKind} ${entry.status}`;
		return entry.kind;
	});
}

async function play(scenario: Scenario): Promise<{ throughout: InspectionRecord[]; reattached: InspectionRecord[]; detached: boolean; reattachedAt: boolean }> {
	let id = 0;
	const replies: ScriptedReply[] = [];
	for (const prompt of scenario.prompts) {
		for (const reply of prompt.replies) {
			let lastId: string | undefined;
			const content = reply.map((b) => {
				if (b.kind === "text") return text(`words ${id++} of a reply`);
				const callId: string = b.repeatId && lastId !== undefined ? lastId : `c${id}`;
				lastId = callId;
				return toolCall(b.tool, { n: id++ }, callId);
			});
			replies.push({ content });
		}
		replies.push({ content: `prompt done ${id++}` });
	}
	// Each prompt's replies end with calls or text; the scripted model answers in order across prompts.
	const scripted = createScriptedModel(replies, { chunkSize: scenario.chunkSize, whenExhausted: { content: "nothing more" } });
	const tools = [
		makeTool("echo", async () => ok("echoed")),
		makeTool("fail", async () => {
			throw new Error("broken");
		}),
		makeTool("guarded", async () => ok("guarded ran"), { needsApproval: true }),
	];
	const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
	const throughout: InspectionRecord[] = [];
	const reattached: InspectionRecord[] = [];
	const first = createAgentInspector();
	first.subscribe((batch) => throughout.push(...batch));
	const second = createAgentInspector();
	second.subscribe((batch) => reattached.push(...batch));
	const stopFirst = first.attach(agent.actor);
	let stopSecond: (() => void) | undefined = second.attach(agent.actor);
	let events = 0;
	let asked = 0;
	let detached = false;
	let reattachedAt = false;
	agent.subscribe((event) => {
		events++;
		if (events === scenario.detachAt && stopSecond) {
			second.flush();
			stopSecond();
			stopSecond = undefined;
			detached = true;
		} else if (events === scenario.detachAt + scenario.awayFor && detached && !stopSecond) {
			stopSecond = second.attach(agent.actor);
			reattachedAt = true;
		}
		if (event.type === "approval_requested") {
			const yes = scenario.approve[asked++ % scenario.approve.length];
			setTimeout(() => void (yes ? agent.approve(event.callKey) : agent.reject(event.callKey, "no")).catch(() => undefined), 0);
		}
	});
	try {
		for (const [index] of scenario.prompts.entries()) await agent.prompt(`prompt ${index}`);
		// Attached again after the agent came to rest, if it had not been yet.
		if (!stopSecond) {
			stopSecond = second.attach(agent.actor);
			reattachedAt = true;
		}
		first.flush();
		second.flush();
	} finally {
		stopFirst();
		stopSecond?.();
		agent.dispose();
	}
	return { throughout, reattached, detached, reattachedAt };
}

/** Runs of the property: `PROPERTY_RUNS` (default 60). */
const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 60);

describe("an inspector detached and attached again, at random points of random runs", () => {
	it("shows each message and call once, as one attached throughout does, and nothing open once the agent rests", async () => {
		await fc.assert(
			fc.asyncProperty(scenarioArb, async (scenario) => {
				const { throughout, reattached } = await play(scenario);
				const expected = conversation(throughout);
				const actual = conversation(reattached);
				const withoutApprovals = (entries: string[]) => entries.filter((entry) => !entry.startsWith("approval "));
				expect(withoutApprovals(actual)).toEqual(withoutApprovals(expected));
				// An approval shown is shown once, with the outcome the other shows: told apart by the
				// call's arguments, unique in a scenario (a count alone passed a reattached page that
				// showed a rejection as approved).
				const approvals = (records: readonly InspectionRecord[]) =>
					modelOf(records).transcript.flatMap((entry) => (entry.kind === "span" && entry.spanKind === "approval" ? [[JSON.stringify(entry.input), entry.status] as const] : []));
				const shown = approvals(reattached);
				const all = new Map(approvals(throughout));
				expect(new Set(shown.map(([id]) => id)).size).toBe(shown.length);
				for (const [id, status] of shown) expect([id, status]).toEqual([id, all.get(id)]);
				expect(Object.keys(modelOf(reattached).open)).toEqual([]);
				expect(Object.keys(modelOf(throughout).open)).toEqual([]);
			}),
			{ numRuns: PROPERTY_RUNS, ...(process.env["PROPERTY_SEED"] ? { seed: Number(process.env["PROPERTY_SEED"]) } : {}) },
		);
	}, Math.max(120_000, PROPERTY_RUNS * 1_000));
});
