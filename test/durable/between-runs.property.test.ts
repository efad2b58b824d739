/**
 * Whatever an agent with a store is told between runs is what a restart finds once `saved()`
 * resolves: the transcript, both queues and both queue modes. The property makes random
 * sequences of the commands an idle agent takes (steer, follow-up, clearing a queue, setting a
 * mode, reset, prompt, continue, compact) and after each one restores a new agent from what the
 * store holds, comparing the two. It covers the class of defect where a command changed the
 * agent but not its store (clearing a queue, a mode, `reset()` and `compact()` were once not
 * saved; see `probe-idle-commands.test.ts` for those cases one by one). One more command is a crash
 * in the middle of a `compact()`: the session is loaded by a new agent, whose listeners must hear
 * the compaction made again, start then end (it once came back as before `compact()`, with no
 * event, when no snapshot was saved during it; see `journaled-compaction.test.ts`).
 * `PROPERTY_RUNS` (default 40) sets the runs, `PROPERTY_SEED` replays a seed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import type { CompactionSettings } from "../../src/compaction/settings.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { StreamFn } from "../../src/types/stream.js";
import { textOf, user } from "../agent/helpers.js";

const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 40);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

type Command =
	| { kind: "steer" | "followUp" | "prompt" | "continue" | "reset" | "compact" | "crashWhileCompacting" | "clearSteeringQueue" | "clearFollowUpQueue" | "clearAllQueues" }
	| { kind: "steeringMode" | "followUpMode"; mode: "all" | "one-at-a-time" };

const command: fc.Arbitrary<Command> = fc.oneof(
	fc.constantFrom<Command>(
		{ kind: "steer" },
		{ kind: "followUp" },
		{ kind: "prompt" },
		{ kind: "continue" },
		{ kind: "reset" },
		{ kind: "compact" },
		{ kind: "crashWhileCompacting" },
		{ kind: "clearSteeringQueue" },
		{ kind: "clearFollowUpQueue" },
		{ kind: "clearAllQueues" },
	),
	fc.record({ kind: fc.constantFrom("steeringMode" as const, "followUpMode" as const), mode: fc.constantFrom("all" as const, "one-at-a-time" as const) }),
);

/** A model that answers every request with a short text, numbered by the replies before it. */
const streamFn: StreamFn = (model, context, options) => {
	const replies = context.messages.filter((message) => message.role === "assistant").length;
	return createScriptedModel([{ content: `reply ${replies}` }]).streamFn(model, context, options);
};

const summarising: CompactionSettings = { enabled: false, keepRecentTokens: 1, summarize: async () => "summary so far" };

/**
 * `compact()` on `agent` with a summariser that never answers, and a crash once it asks (what was
 * written before is stored): the agent that loads the session, or `agent` when the compaction
 * ended by itself (nothing to compact). The loaded agent's listeners must hear the compaction made
 * again, start then end.
 */
async function crashWhileCompacting(agent: Agent, options: AgentOptions & { store: AgentStore; sessionId: string }): Promise<Agent> {
	let asked = false;
	agent.compaction = { ...summarising, summarize: () => ((asked = true), new Promise<string>(() => {})) };
	let ended = false;
	void agent
		.compact()
		.catch(() => undefined)
		.finally(() => (ended = true));
	for (let i = 0; i < 200 && !asked && !ended; i++) await new Promise((resolve) => setTimeout(resolve, 1));
	agent.compaction = summarising;
	if (!asked) return agent;
	await agent.saved();
	const events: string[] = [];
	const loaded = await Agent.load({ ...options, listeners: [(event) => void (event.type === "auto_compaction_start" || event.type === "auto_compaction_end" ? events.push(event.type) : undefined)] });
	// The crashed process writes no more (the load took the session over): its agent is let go.
	agent.dispose();
	await loaded.waitForIdle();
	expect(events, "the listeners of the agent that loaded a session a crash interrupted mid-compaction").toEqual(["auto_compaction_start", "auto_compaction_end"]);
	return loaded;
}

/** What a restart must find: the transcript's texts, the queues' texts, the modes. */
function held(snapshot: AgentSnapshot) {
	const context = snapshot.machine.context;
	return {
		messages: context.messages.map((message) => `${message.role}: ${textOf(message)}`),
		steering: context.steeringQueue.map((message) => textOf(message)),
		followUps: context.followUpQueue.map((message) => textOf(message)),
		steeringMode: context.steeringMode,
		followUpMode: context.followUpMode,
	};
}

describe("an agent with a store, between runs", () => {
	it("property: after each command and saved(), an agent restored from the store holds what the agent holds", async () => {
		console.log(`property seed (between runs): ${PROPERTY_SEED}  (PROPERTY_SEED=${PROPERTY_SEED} to replay)`);
		await fc.assert(
			fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
				const store = createMemoryStore();
				const model = createScriptedModel([]).model;
				const options: AgentOptions = { initialState: { model }, streamFn, compaction: summarising };
				let agent = new Agent({ ...options, store, sessionId: "s" });
				try {
					for (const [index, next] of commands.entries()) {
						switch (next.kind) {
							case "steer":
							case "followUp":
								agent[next.kind](user(`${next.kind} ${index}`));
								break;
							case "prompt":
								await agent.prompt(`prompt ${index}`);
								break;
							case "continue":
								// Refused where there is nothing to continue from: that is not what is checked here.
								await agent.continue().catch(() => undefined);
								break;
							case "compact":
								await agent.compact().catch(() => undefined);
								break;
							case "crashWhileCompacting":
								agent = await crashWhileCompacting(agent, { ...options, store, sessionId: "s" });
								break;
							case "steeringMode":
							case "followUpMode":
								agent[next.kind] = next.mode;
								break;
							default:
								agent[next.kind]();
						}
						await agent.saved();
						const loaded = await store.load("s", { peek: true });
						// Nothing stored yet (a new session where nothing changed, say a compact() that found nothing): a restart starts a new agent.
						const restored = loaded?.snapshot ? Agent.restore(loaded.snapshot, options) : new Agent(options);
						try {
							expect(held(restored.snapshot()), `after ${commands.slice(0, index + 1).map((each) => each.kind).join(", ")}`).toEqual(held(agent.snapshot()));
						} finally {
							restored.dispose();
						}
					}
				} finally {
					await agent.saved().catch(() => undefined);
					agent.dispose();
				}
			}),
			{ numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
		);
	}, Math.max(120_000, PROPERTY_RUNS * 1_000));
});
