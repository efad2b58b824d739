/**
 * The `Agent` on pi 0.73.1 and on agentchart, compared where code written against pi can
 * observe it: what `JSON.stringify` of each event gives inside a listener (the provider keeps
 * mutating its partial message, so the microtasks each delivery takes decide what a
 * `message_update` snapshot shows), and when `prompt()`, `continue()` and `waitForIdle()`
 * settle, counted in microtasks after the last listener call. pi's coding agent depends on
 * both: its JSON mode prints events through a promise queue and unsubscribes once `prompt()`
 * resolves; its RPC mode answers `abort` after `waitForIdle()`.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel, type ScriptedBlock, type ScriptedReply, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AssistantMessageEvent, StreamFn } from "../../src/types/stream.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok, sleep, type ToolExecute, whenAborted } from "./helpers.js";

/** What both Agents share, as these tests use it. */
interface CommonAgent {
	prompt(input: string): Promise<void>;
	continue(): Promise<void>;
	followUp(message: AgentMessage): void;
	steer(message: AgentMessage): void;
	hasQueuedMessages(): boolean;
	clearSteeringQueue(): void;
	clearFollowUpQueue(): void;
	clearAllQueues(): void;
	steeringMode: "all" | "one-at-a-time";
	followUpMode: "all" | "one-at-a-time";
	abort(): void;
	readonly signal: AbortSignal | undefined;
	waitForIdle(): Promise<void>;
	subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void;
	toolExecution: string;
}

/** pi, or agentchart with its own interpreter (the default) or XState's running the chart. */
type Impl = "pi" | "agentchart" | "xstate";

/**
 * A listener's behaviour: sync (returns nothing), sync returning a value that is not a promise
 * (`(e) => log.push(e)` returns a number; an object is looked at for `then`), returning a
 * thenable that is not a promise (its `await` takes more microtasks), a resolved promise, or a
 * macrotask's wait, per event type.
 */
type ListenerKind = "sync" | "value" | "object" | "thenable" | "async" | "slow";

interface Scenario {
	replies: { blocks: ({ kind: "text"; words: number } | { kind: "tool"; name: "echo" | "fail" | "wait" | "progress" })[]; error: boolean }[];
	toolExecution: "parallel" | "sequential";
	/** Every tool call of a reply has one id (models do this; each call still runs and is answered). */
	sameIds: boolean;
	listeners: { kind: ListenerKind; slowOn: string[] }[];
	chunkSize: number;
	/**
	 * How the stream is read: the scripted stream's own iterator (its `next()` answers a promise,
	 * as pi-ai's queue does), or an async generator over it, whose steps take more microtasks and
	 * which must be closed when the read ends early. Both engines close every stream before
	 * `prompt()` settles; agentchart closes it as soon as it has the final message, pi once
	 * `message_end` was delivered (docs/from-pi.md, "Differences"), so the closes are counted, not placed.
	 */
	streamKind: "iterator" | "generator";
	/**
	 * With the generator: an event of a kind pi's loop does not know (a proxy's keep-alive) before
	 * each of the stream's events. pi skips it; so must agentchart, at pi's pace.
	 */
	strayEvents: boolean;
	followUp: boolean;
	steer: boolean;
	/** The event whose first delivery steers (when `steer`); for message_start, the first reply's. */
	steerOn: "agent_start" | "tool_execution_start" | "message_start" | "message_update" | "message_end" | "turn_end";
	/**
	 * A queue operation listener 0 does at the first delivery of `queueOpOn` (after its steer, if
	 * both land on that event): another follow-up, a clear, or both queue modes set to "all".
	 */
	queueOp: "none" | "followUp" | "clearSteering" | "clearFollowUps" | "clearAll" | "modesAll";
	queueOpOn: "agent_start" | "tool_execution_start" | "message_start" | "message_update" | "message_end" | "turn_end";
	/** Abort once this many events were delivered (never when undefined). */
	abortAfter: number | undefined;
	/** Also call waitForIdle() when the run starts, and count when it settles. */
	waitForIdle: boolean;
	/**
	 * agentchart: listener 0 asks for `agent.actor` at the first delivery of this event, moving the
	 * run from its lean actor to an XState actor in the middle of a step; nothing may change.
	 */
	pinOn: "none" | "agent_start" | "tool_execution_start" | "message_start" | "message_update" | "message_end" | "turn_end";
	/**
	 * What the last listener does to the set of listeners at the first delivery of `churnOn`: pi's
	 * set is live (one added joins the event being delivered, one removed and added again is a new
	 * entry). With one listener this is agentchart's path for a lone listener.
	 */
	churn: "none" | "add" | "removeSelf" | "reAddSelf" | "addAndRemove";
	churnOn: "agent_start" | "tool_execution_start" | "message_start" | "message_update" | "message_end" | "turn_end";
	/**
	 * The first tool call to run subscribes a listener of its own, which at its first turn_end waits
	 * a macrotask and then steers: a run that started with nobody listening (agentchart's runs then
	 * skip their delivery waits) must wait for it from then on, as pi's awaited emit does.
	 */
	watchFromTool?: boolean | undefined;
	/** The agent has hooks (beforeToolCall, afterToolCall, transformContext), each logging its call where it happens. */
	hooks?: boolean | undefined;
	/**
	 * What the caller queues on the line after `prompt()`, before anything was delivered: pi's
	 * loop has awaited nothing yet, so a steer joins the first request (agentchart's unwatched
	 * run polled its steering queue within prompt() and missed it).
	 */
	afterPrompt?: "none" | "steer" | "followUp" | undefined;
}

/** A scenario written out for a targeted test: parallel, no listener, nothing done mid-run, but `changes`. */
function fixedScenario(changes: Partial<Scenario> & Pick<Scenario, "replies">): Scenario {
	return {
		toolExecution: "parallel",
		sameIds: false,
		listeners: [],
		chunkSize: 2,
		streamKind: "iterator",
		strayEvents: false,
		followUp: false,
		steer: false,
		steerOn: "tool_execution_start",
		queueOp: "none",
		queueOpOn: "turn_end",
		abortAfter: undefined,
		waitForIdle: false,
		pinOn: "none",
		churn: "none",
		churnOn: "agent_start",
		...changes,
	};
}

const WORDS = ["alpha", "beta", "gamma", "delta", "epsilon"];

function repliesOf(scenario: Scenario): ScriptedReply[] {
	let id = 0;
	return scenario.replies.map((reply, n) => {
		const callId = () => {
			const unique = `call-${id++}`;
			return scenario.sameIds ? `same-${n}` : unique;
		};
		const content: ScriptedBlock[] = reply.blocks.map((b) => (b.kind === "text" ? text(WORDS.slice(0, b.words).join(" ")) : toolCall(b.name, { value: `v${id}` }, callId())));
		return reply.error ? { content, stopReason: "error", errorMessage: "overloaded" } : { content };
	});
}

const message = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
const normalise = (json: string) => json.replace(/"timestamp":\d+/g, '"timestamp":0');

/** Counts microtasks from `start()` until `read()`; a fresh chain per start. */
function microtaskClock() {
	let ticks = 0;
	let generation = 0;
	return {
		start() {
			const mine = ++generation;
			ticks = 0;
			const step = () => {
				if (mine !== generation || ticks >= 200) return;
				ticks++;
				queueMicrotask(step);
			};
			queueMicrotask(step);
		},
		read: () => ticks,
	};
}

/**
 * Runs the scenario; the log holds every event's JSON (per listener) and, for each settled
 * promise, the number of microtasks since the last listener call.
 */
async function play(impl: Impl, scenario: Scenario): Promise<string[]> {
	const scripted = createScriptedModel(repliesOf(scenario), { chunkSize: scenario.chunkSize, whenExhausted: { content: "that is all" } });
	const log: string[] = [];
	let watching = false;
	const watchOnce = () => {
		if (!scenario.watchFromTool || watching) return;
		watching = true;
		let steeredHere = false;
		agent.subscribe(async (event) => {
			clock.start();
			log.push(`watcher:${event.type}`);
			if (event.type !== "turn_end" || steeredHere) return;
			steeredHere = true;
			await new Promise<void>((resolve) => setImmediate(resolve));
			agent.steer(message("watched"));
		});
	};
	/** A tool whose every call is logged where it starts (and may start the watcher) before `execute` runs. */
	const loggedTool = (name: string, execute: ToolExecute) =>
		makeTool(name, async (id, params, signal, onUpdate) => {
			log.push(`execute ${id}`);
			watchOnce();
			return execute(id, params, signal, onUpdate);
		});
	const tools = [
		loggedTool("echo", async (_id, params) => ok(`echo:${String(params["value"])}`)),
		loggedTool("fail", async () => {
			throw new Error("disk full");
		}),
		// Reports progress and returns in the same tick: pi ends it only once the update reached its
		// listeners, so a sibling that returned meanwhile ends first.
		loggedTool("progress", async (_id, _params, _signal, onUpdate) => {
			onUpdate?.(ok("halfway"));
			return ok("progressed");
		}),
		loggedTool("wait", async (_id, _params, signal) => {
			await Promise.race([loopTurns(WAIT_TURNS, signal), whenAborted(signal)]);
			return ok("waited");
		}),
	];
	let opened = 0;
	let closed = 0;
	// Effects are logged where they happen, so one that runs before the listeners had their events shows.
	const streamFn: StreamFn =
		scenario.streamKind === "iterator"
			? (model, context, options) => {
					log.push(`model call with ${context.messages.length} messages`);
					return scripted.streamFn(model, context, options);
				}
			: async (model, context, options) => {
					log.push(`model call with ${context.messages.length} messages`);
					const inner = await scripted.streamFn(model, context, options);
					opened++;
					return {
						async *[Symbol.asyncIterator]() {
							try {
								if (!scenario.strayEvents) yield* inner;
								else
									for await (const event of inner) {
										yield { type: "keep-alive" } as unknown as AssistantMessageEvent;
										yield event;
									}
							} finally {
								closed++;
							}
						},
						result: () => inner.result(),
					};
				};
	const hooks = scenario.hooks
		? {
				beforeToolCall: async ({ toolCall }: { toolCall: { id: string } }) => {
					log.push(`beforeToolCall ${toolCall.id}`);
					return undefined;
				},
				afterToolCall: async ({ toolCall }: { toolCall: { id: string } }) => {
					log.push(`afterToolCall ${toolCall.id}`);
					return undefined;
				},
				transformContext: async (messages: AgentMessage[]) => {
					log.push(`transformContext ${messages.length}`);
					return messages;
				},
			}
		: {};
	const options = { initialState: { model: scripted.model, tools }, streamFn, ...hooks };
	const agent = (impl === "pi" ? new PiAgent(options as never) : withInterpreter(impl, () => new Agent(options as never))) as unknown as CommonAgent;
	agent.toolExecution = scenario.toolExecution;
	const clock = microtaskClock();
	let delivered = 0;
	let steered = false;
	let queueOpDone = false;
	let pinned = false;
	let churned = false;
	scenario.listeners.forEach((listener, index) => {
		// Typed as returning nothing, which admits any value, as a listener written in JavaScript may return.
		const subscriber: (event: AgentEvent) => void = (event) => {
			clock.start();
			log.push(`${index}:${normalise(JSON.stringify(event))}`);
			if (index === scenario.listeners.length - 1 && event.type === scenario.churnOn && scenario.churn !== "none" && !churned) {
				churned = true;
				const late = (lateEvent: AgentEvent) => {
					log.push(`late:${lateEvent.type}`);
				};
				if (scenario.churn === "add") agent.subscribe(late);
				else if (scenario.churn === "addAndRemove") agent.subscribe(late)();
				else {
					unsubscribe();
					if (scenario.churn === "reAddSelf") agent.subscribe(subscriber);
				}
			}
			if (index === 0) {
				delivered++;
				// What a listener reads back from the agent: the queues as they stand at each event,
				// and right after it queued something itself.
				log.push(`queued: ${agent.hasQueuedMessages()}`);
				if (delivered === scenario.abortAfter) {
					agent.abort();
					log.push(`signal aborted after abort: ${agent.signal?.aborted}`);
				}
				if (event.type === scenario.pinOn && !pinned) {
					pinned = true;
					if (impl !== "pi") void (agent as unknown as Agent).actor;
				}
				if (event.type === "agent_start" && scenario.waitForIdle) void agent.waitForIdle().then(() => log.push(`waitForIdle settled after ${clock.read()}`));
				const steerHere = event.type === scenario.steerOn && (event.type !== "message_start" || event.message.role === "assistant");
				if (steerHere && scenario.steer && !steered) {
					steered = true;
					agent.steer(message("steer"));
					log.push(`queued after steer: ${agent.hasQueuedMessages()}`);
				}
				const opHere = event.type === scenario.queueOpOn && (event.type !== "message_start" || event.message.role === "assistant");
				if (opHere && scenario.queueOp !== "none" && !queueOpDone) {
					queueOpDone = true;
					if (scenario.queueOp === "followUp") agent.followUp(message("another follow-up"));
					else if (scenario.queueOp === "clearSteering") agent.clearSteeringQueue();
					else if (scenario.queueOp === "clearFollowUps") agent.clearFollowUpQueue();
					else if (scenario.queueOp === "clearAll") agent.clearAllQueues();
					else {
						agent.steeringMode = "all";
						agent.followUpMode = "all";
					}
					log.push(`after ${scenario.queueOp}: queued ${agent.hasQueuedMessages()}, modes ${agent.steeringMode}/${agent.followUpMode}`);
				}
			}
			if (listener.kind === "sync") return;
			if (listener.kind === "value") return log.length;
			if (listener.kind === "object") return { seen: log.length };
			if (listener.kind === "thenable") return { then: (resolve: () => void) => resolve() };
			if (listener.kind === "async" || !listener.slowOn.includes(event.type)) return Promise.resolve();
			return new Promise<void>((resolve) => setImmediate(resolve));
		};
		const unsubscribe = agent.subscribe(subscriber);
	});
	if (scenario.followUp) agent.followUp(message("follow-up"));
	const prompted = agent.prompt("go");
	if (scenario.afterPrompt === "steer") agent.steer(message("caller steer"));
	if (scenario.afterPrompt === "followUp") agent.followUp(message("caller follow-up"));
	await prompted.then(
		() => log.push(`prompt resolved after ${clock.read()}`),
		(error: unknown) => log.push(`prompt rejected after ${clock.read()}: ${String(error)}`),
	);
	await sleep(1);
	log.push(`streams closed: ${closed} of ${opened}`);
	return log;
}

/**
 * How long the "wait" tool takes, in turns of the event loop: more than every delivery to the slow
 * listeners (a `setImmediate` each) of a run takes, so its sibling calls and their events are done
 * first. Counted in turns, not milliseconds: a 5 ms timer raced those deliveries on a busy machine
 * (seed 959992922, one run in six), and the two interpreters then interleaved differently.
 */
const WAIT_TURNS = 500;

async function loopTurns(turns: number, signal: AbortSignal | undefined): Promise<void> {
	for (let turn = 0; turn < turns && !signal?.aborted; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
	replies: fc.array(
		fc.record({
			blocks: fc.array(
				fc.oneof(
					fc.record({ kind: fc.constant("text" as const), words: fc.integer({ min: 1, max: 5 }) }),
					fc.record({ kind: fc.constant("tool" as const), name: fc.constantFrom("echo" as const, "fail" as const, "wait" as const, "progress" as const) }),
				),
				{ minLength: 1, maxLength: 3 },
			),
			error: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
		}),
		{ minLength: 1, maxLength: 3 },
	),
	toolExecution: fc.constantFrom("parallel" as const, "sequential" as const),
	sameIds: fc.constantFrom(false, false, false, true),
	listeners: fc.array(
		fc.record({ kind: fc.constantFrom<ListenerKind>("sync", "value", "object", "thenable", "async", "slow"), slowOn: fc.subarray(["message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_end", "turn_end", "agent_end"]) }),
		{ minLength: 0, maxLength: 3 },
	),
	chunkSize: fc.integer({ min: 1, max: 6 }),
	streamKind: fc.constantFrom("iterator" as const, "generator" as const),
	strayEvents: fc.constantFrom(false, false, true),
	followUp: fc.boolean(),
	steer: fc.boolean(),
	steerOn: fc.constantFrom("agent_start" as const, "tool_execution_start" as const, "message_start" as const, "message_update" as const, "message_end" as const, "turn_end" as const),
	queueOp: fc.constantFrom("none" as const, "followUp" as const, "clearSteering" as const, "clearFollowUps" as const, "clearAll" as const, "modesAll" as const),
	queueOpOn: fc.constantFrom("agent_start" as const, "tool_execution_start" as const, "message_start" as const, "message_update" as const, "message_end" as const, "turn_end" as const),
	// Aborts are left to the targeted tests: where one lands decides between pi's behaviour and
	// agentchart's documented fixes (a call aborted before it ran is not executed).
	abortAfter: fc.constant(undefined),
	waitForIdle: fc.boolean(),
	pinOn: fc.constantFrom("none" as const, "agent_start" as const, "tool_execution_start" as const, "message_start" as const, "message_update" as const, "message_end" as const, "turn_end" as const),
	churn: fc.constantFrom("none" as const, "none" as const, "add" as const, "removeSelf" as const, "reAddSelf" as const, "addAndRemove" as const),
	churnOn: fc.constantFrom("agent_start" as const, "tool_execution_start" as const, "message_start" as const, "message_update" as const, "message_end" as const, "turn_end" as const),
	watchFromTool: fc.boolean(),
	hooks: fc.boolean(),
	afterPrompt: fc.constantFrom("none" as const, "none" as const, "steer" as const, "followUp" as const),
});

/** Runs of the property: `PROPERTY_RUNS` (default 60). */
const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 60);

describe("the Agent on pi and on agentchart, as code written for pi observes it", () => {
	it.each([
		["one sync listener", [{ kind: "sync", slowOn: [] }]],
		["one async listener", [{ kind: "async", slowOn: [] }]],
		["no listener", []],
		["two listeners, the second slow on agent_end", [{ kind: "sync", slowOn: [] }, { kind: "slow", slowOn: ["agent_end", "turn_end"] }]],
	] as const)("settles prompt() and waitForIdle() at the same microtask as pi (%s)", async (_name, listeners) => {
		const scenario = fixedScenario({
			replies: [{ blocks: [{ kind: "text", words: 3 }, { kind: "tool", name: "echo" }], error: false }],
			listeners: listeners.map((l) => ({ kind: l.kind, slowOn: [...l.slowOn] })),
			waitForIdle: true,
		});
		const expected = await play("pi", scenario);
		expect(expected.some((line) => line.startsWith("prompt resolved after"))).toBe(true);
		expect(await play("agentchart", scenario)).toEqual(expected);
	});

	it.each(["continue from a user message", "continue with a queued follow-up"])("settles continue() at the same microtask as pi (%s)", async (variant) => {
		const run = async (impl: Impl) => {
			const scripted = createScriptedModel([{ content: "answer" }], { chunkSize: 2 });
			const messages: AgentMessage[] =
				variant === "continue from a user message"
					? [message("hi")]
					: [message("hi"), { role: "assistant", content: [{ type: "text", text: "hello" }], api: "scripted", provider: "scripted", model: "scripted-1", usage: emptyUsage(), stopReason: "stop", timestamp: 0 } as AgentMessage];
			const options = { initialState: { model: scripted.model, messages }, streamFn: scripted.streamFn };
			const agent = (impl === "pi" ? new PiAgent(options as never) : withInterpreter(impl, () => new Agent(options as never))) as unknown as CommonAgent;
			if (variant !== "continue from a user message") agent.followUp(message("more"));
			const clock = microtaskClock();
			const log: string[] = [];
			agent.subscribe(async (event) => {
				clock.start();
				log.push(normalise(JSON.stringify(event)));
			});
			await agent.continue().then(() => log.push(`continue resolved after ${clock.read()}`));
			return log;
		};
		const expected = await run("pi");
		expect(expected.at(-1)).toMatch(/^continue resolved after \d+$/);
		expect(await run("agentchart")).toEqual(expected);
	});

	it("waits, as pi does, for a listener a tool subscribed in a run that started with none (its steering reaches the next call)", async () => {
		const scenario = fixedScenario({
			replies: [{ blocks: [{ kind: "tool", name: "echo" }], error: false }, { blocks: [{ kind: "text", words: 2 }], error: false }],
			watchFromTool: true,
		});
		const expected = await play("pi", scenario);
		// The steering is taken before the second call: its message_start comes before the reply's.
		expect(expected.filter((line) => line.startsWith("watcher:message_start")).length).toBeGreaterThanOrEqual(3);
		expect(await play("agentchart", scenario)).toEqual(expected);
		expect(await play("xstate", scenario)).toEqual(expected);
	});

	it.each([
		["parallel", ["transformContext", "beforeToolCall", "beforeToolCall", "afterToolCall", "afterToolCall", "transformContext"]],
		["sequential", ["transformContext", "beforeToolCall", "afterToolCall", "beforeToolCall", "afterToolCall", "transformContext"]],
	] as const)("calls the hooks where pi calls them, between the same events (%s)", async (toolExecution, order) => {
		const scenario = fixedScenario({
			replies: [{ blocks: [{ kind: "tool", name: "echo" }, { kind: "tool", name: "fail" }], error: false }, { blocks: [{ kind: "text", words: 2 }], error: false }],
			toolExecution,
			listeners: [{ kind: "slow", slowOn: ["tool_execution_start", "tool_execution_end", "message_end"] }],
			hooks: true,
		});
		const expected = await play("pi", scenario);
		const hookLines = expected.filter((line) => /^(beforeToolCall|afterToolCall|transformContext) /.test(line));
		expect(hookLines.map((line) => line.split(" ")[0])).toEqual(order);
		expect(await play("agentchart", scenario)).toEqual(expected);
	});

	it.each([
		["steer", "parallel", "tool"],
		["steer", "sequential", "text"],
		["followUp", "parallel", "text"],
		["followUp", "sequential", "tool"],
	] as const)("takes a %s queued on the line after prompt() where pi does, with no listener (%s, a %s reply first)", async (afterPrompt, toolExecution, first) => {
		// A run nobody watched polled its steering within prompt(): the steer missed the first
		// request (and after a text reply, a second request was made for it).
		const scenario = fixedScenario({
			replies: [{ blocks: [first === "tool" ? { kind: "tool", name: "echo" } : { kind: "text", words: 3 }], error: false }, { blocks: [{ kind: "text", words: 2 }], error: false }, { blocks: [{ kind: "text", words: 1 }], error: false }],
			toolExecution,
			afterPrompt,
		});
		const expected = await play("pi", scenario);
		expect(await play("agentchart", scenario)).toEqual(expected);
		expect(await play("xstate", scenario)).toEqual(expected);
	});

	it("settles at the same microtask as pi when aborted during a tool", async () => {
		const scenario = fixedScenario({
			replies: [{ blocks: [{ kind: "tool", name: "wait" }], error: false }],
			listeners: [{ kind: "sync", slowOn: [] }],
			chunkSize: 4,
			waitForIdle: true,
		});
		// Abort at the tool's start: the listener's 'delivered' count of that event.
		const probe = await play("pi", scenario);
		scenario.abortAfter = probe.findIndex((line) => line.includes('"tool_execution_start"')) + 1;
		const expected = await play("pi", scenario);
		const actual = await play("agentchart", scenario);
		expect(normaliseDocumentedFixes(actual)).toEqual(normaliseDocumentedFixes(expected));
	});

	it("gives a listener still handling one parallel call's end the next ones after it, in pi's order (pi enters it again at once)", async () => {
		// Found by the property below (seed -98637876, run 398 of 800): three calls that end in
		// consecutive turns, the listener taking a turn over each tool_execution_end.
		const scenario = fixedScenario({
			replies: [{ blocks: [{ kind: "tool", name: "wait" }, { kind: "tool", name: "wait" }, { kind: "tool", name: "wait" }], error: false }],
			listeners: [{ kind: "slow", slowOn: ["tool_execution_end"] }],
			chunkSize: 1,
			hooks: true,
		});
		const expected = await play("pi", scenario);
		const actual = await play("agentchart", scenario);
		const ends = (lines: string[]) => lines.filter((line) => line.includes('"tool_execution_end"')).map((line) => /"toolCallId":"([^"]+)"/.exec(line)?.[1]);
		expect(ends(actual)).toEqual(["call-0", "call-1", "call-2"]);
		expect(byListener(actual)).toEqual(byListener(expected));
		// pi's listener hears call-1's end before call-2's afterToolCall runs; agentchart's once it is done with call-0's.
		const order = (lines: string[]) => lines.filter((line) => line.startsWith("afterToolCall call-2") || (line.includes('"tool_execution_end"') && line.includes('"call-1"'))).map((line) => (line.startsWith("after") ? "hook 2" : "end 1"));
		expect(order(expected)).toEqual(["end 1", "hook 2"]);
		expect(order(actual)).toEqual(["hook 2", "end 1"]);
	});

	it("delivers the same JSON and settles at the same microtasks for random runs", async () => {
		await fc.assert(
			fc.asyncProperty(scenarioArb, async (scenario) => {
				// Settling is counted in microtasks from the last listener call; once the only listener
				// has unsubscribed, that count spans the rest of the run, which has no listener to pace
				// it and no order to keep: only the lines themselves are compared then.
				const unheard = scenario.churn === "removeSelf" && scenario.listeners.length === 1;
				const settled = (lines: string[]) => (unheard ? lines.map((line) => line.replace(/ after \d+/, " after ?")) : lines);
				const expected = settled(normaliseDocumentedFixes(await play("pi", scenario)));
				const actual = settled(normaliseDocumentedFixes(await play("agentchart", scenario)));
				// pi delivers the events of parallel tool calls that finish together concurrently,
				// so with several listeners they interleave (listener 0 sees B before listener 1
				// sees A); agentchart delivers one event to every listener before the next
				// (docs/from-pi.md, Differences). Each listener's own sequence is the same. A listener added
				// during the run (churn "add") makes two. One listener is enough when it is still handling
				// a call's tool_execution_end as the next call ends: pi enters it again at once, agentchart
				// once it is done, so the next call's hooks come before that event in one log and after it
				// in the other.
				if (scenario.toolExecution === "parallel" && (scenario.listeners.length + (scenario.churn === "add" ? 1 : 0) + (scenario.watchFromTool ? 1 : 0) > 1 || reentersOnToolEnd(scenario))) {
					expect(byListener(actual)).toEqual(byListener(expected));
				} else {
					expect(actual).toEqual(expected);
				}
			}),
			// PROPERTY_SEED (set by the mutation run) replays one seed; otherwise fast-check draws one.
			{ numRuns: PROPERTY_RUNS, ...(process.env["PROPERTY_SEED"] ? { seed: Number(process.env["PROPERTY_SEED"]) } : {}) },
		);
	}, Math.max(300_000, PROPERTY_RUNS * 2_000));
});

describe("the chart on agentchart's interpreter and on XState's", () => {
	it("delivers the same JSON and settles at the same microtasks for random runs", async () => {
		await fc.assert(
			fc.asyncProperty(scenarioArb, async (scenario) => {
				// The same chart, actions and actors: nothing may differ, not even the interleaving.
				expect(await play("agentchart", scenario)).toEqual(await play("xstate", scenario));
			}),
			{ numRuns: PROPERTY_RUNS, ...(process.env["PROPERTY_SEED"] ? { seed: Number(process.env["PROPERTY_SEED"]) } : {}) },
		);
	}, Math.max(300_000, PROPERTY_RUNS * 2_000));
});

/**
 * Whether pi could enter a listener again with a parallel call's tool_execution_end while it
 * still handles an earlier call's (it delivers the ends of parallel calls concurrently): a reply
 * with several tool calls, and a listener that takes an event loop turn over tool_execution_end.
 */
function reentersOnToolEnd(scenario: Scenario): boolean {
	const severalCalls = scenario.replies.some((reply) => reply.blocks.filter((block) => block.kind === "tool").length > 1);
	return severalCalls && scenario.listeners.some((listener) => listener.kind === "slow" && listener.slowOn.includes("tool_execution_end"));
}

/** Each listener's lines, and the settle lines, apart. */
function byListener(lines: string[]): Record<string, string[]> {
	const groups: Record<string, string[]> = {};
	for (const line of lines) {
		// What listener 0 reads back from the agent as it handles an event is its own too.
		const key = /^(\d+|late|watcher):/.exec(line)?.[1] ?? (/^(queued|signal aborted after abort|after \w+: queued)/.test(line) ? "0" : "settled");
		(groups[key] ??= []).push(line);
	}
	return groups;
}

/**
 * agentchart's documented fix 1: after an abort during tools, pi calls the model once more
 * with the aborted signal (its reply is an empty aborted message); agentchart does not. The
 * events of that doomed call are dropped from pi's log before comparing.
 */
function normaliseDocumentedFixes(lines: string[]): string[] {
	const parsed = lines.map((line) => {
		const match = /^(\d+):(.*)$/.exec(line);
		return match ? { listener: match[1] ?? "", event: JSON.parse(match[2] ?? "null") as Record<string, unknown> } : undefined;
	});
	const doomed = (event: Record<string, unknown> | undefined) => {
		const m = event?.["message"] as { role?: string; stopReason?: string; content?: unknown[] } | undefined;
		return m?.role === "assistant" && m.stopReason === "aborted" && m.content?.length === 0;
	};
	const drop = new Set<number>();
	for (const listener of new Set(parsed.flatMap((p) => (p ? [p.listener] : [])))) {
		const mine = parsed.flatMap((p, index) => (p?.listener === listener ? [{ index, event: p.event }] : []));
		for (let i = 0; i + 3 < mine.length; i++) {
			const [a, b, c, d] = [mine[i], mine[i + 1], mine[i + 2], mine[i + 3]];
			if (a?.event["type"] === "turn_start" && b?.event["type"] === "message_start" && doomed(b.event) && c?.event["type"] === "message_end" && d?.event["type"] === "turn_end") {
				for (const entry of [a, b, c, d]) drop.add(entry.index);
			}
		}
	}
	return lines.flatMap((line, index) => {
		if (drop.has(index)) return [];
		const p = parsed[index];
		if (p?.event["type"] === "agent_end") {
			const messages = (p.event["messages"] as Record<string, unknown>[]).filter((m) => !doomed({ message: m }));
			return [`${p.listener}:${JSON.stringify({ ...p.event, messages })}`];
		}
		return [p === undefined ? line : `${p.listener}:${JSON.stringify(p.event)}`];
	});
}
