/**
 * A snapshot damaged anywhere (up to three fields set to other JSON values, or removed) is either
 * refused by `Agent.restore` with an error that says what is wrong, or restores an agent whose own
 * snapshot restores again; never a TypeError from deep in the engine. Snapshots travel through
 * files, databases and hand edits. It found: a state value with a null inside, a child entry that
 * was no object or had no logic's name (restored, the agent's next snapshot threw), a version that
 * could not be made text, and a run whose state's actor (a model call, a batch of tool calls) was
 * missing or not running (restored, it waited for ever). The restored agent is then run to its
 * end (what waits for a person rejected), which found a counter set back (`run.attempt` 0: the
 * journal replayed the first reply and asked the same approval again, for ever), a state value
 * in no state (`{}`: the run took no event), a running call in a batch not marked as started, and
 * an actor in flight stored without the chart's marker (it started as a new one). The restored
 * tools count their runs: a tool that had started before the snapshot and is not replay-safe must
 * not run again while the journal is intact (a journal edited to lose an intent cannot be told
 * from one written before the intent was). Numbers in fields and ids are also nudged by small
 * steps, as counters edited by hand; that found a turn set forward and a call's key edited (the
 * restore looked the running call up under an id the journal did not have, and ran it again),
 * a later entry of another run (the restored agent's own snapshot was refused), and a counter set
 * back with the entry that showed it moved past `journalSeq`. Names every object has
 * ("constructor", "__proto__") are among the values, and a field may be moved or copied to another
 * key, one of those names too: a name read from a snapshot and looked up as a property finds them.
 * That found a state value "constructor" (on XState's interpreter the run restored and waited for
 * ever) and a child copied to "__proto__" (our interpreter's restore threw a TypeError). Each
 * seed explores other damage,
 * and one may find a kind no check covers yet: CI runs a fixed seed, `PROPERTY_SEED=<n>` explores.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { deferred, makeTool, ok, throughJson } from "../agent/helpers.js";

/** What JavaScript says when code reads what is not there: the engine met the damage unchecked. */
const ENGINE_TRIPPED = /Cannot read properties|Cannot set properties|is not a function|is not iterable|Cannot convert|is not an object|Maximum call stack|Invalid array length/;

// A fixed seed unless PROPERTY_SEED gives one (see the header).
const SEED = Number(process.env["PROPERTY_SEED"] ?? 20261205);

const send = makeTool("send", async () => ok("sent"), { needsApproval: true });
const look = makeTool("look", async () => ok("seen"));

/** A stored place in a run, and the tool calls its journal says had started there (none of the tools is replay-safe). */
interface Place {
	snapshot: AgentSnapshot;
	started: string[];
}

function place(snapshot: AgentSnapshot): Place {
	const started = snapshot.journal.flatMap((entry) => (entry.kind === "tool" && entry.phase === "intent" ? [entry.toolCallId] : []));
	return { snapshot, started };
}

/** Snapshots of a few places a run stops at: idle after a run, waiting for approval beside a settled call, a tool running, a reply streaming. */
async function snapshots(): Promise<Place[]> {
	const idle = createScriptedModel([{ content: "hello" }]);
	const first = new Agent({ initialState: { model: idle.model, tools: [send, look] }, streamFn: idle.streamFn });
	await first.prompt("hi");
	const waiting = createScriptedModel([{ content: [toolCall("look", {}, "l1"), toolCall("send", { to: "bob" }, "s1")] }, { content: "done" }]);
	const second = new Agent({ initialState: { model: waiting.model, tools: [send, look] }, streamFn: waiting.streamFn, store: createMemoryStore(), sessionId: "s" });
	const asked = deferred<void>();
	second.subscribe((event) => void (event.type === "approval_requested" && asked.resolve()));
	const run = second.prompt("go");
	await asked.promise;
	const result = [place(throughJson(first.snapshot())), place(throughJson(second.snapshot()))];
	second.dispose();
	await run;
	// A tool running, its intent journaled: the machine has a child (the batch of calls).
	const started = deferred<void>();
	const release = deferred<void>();
	const slow = makeTool("look", async () => {
		started.resolve();
		await release.promise;
		return ok("seen");
	});
	const running = createScriptedModel([{ content: [toolCall("look", {}, "l1")] }, { content: "done" }]);
	const third = new Agent({ initialState: { model: running.model, tools: [send, slow] }, streamFn: running.streamFn, store: createMemoryStore(), sessionId: "s" });
	const ran = third.prompt("go");
	await started.promise;
	result.push(place(throughJson(third.snapshot())));
	third.dispose();
	release.resolve();
	await ran;
	// A reply streaming, its request journaled: the machine has the model call's stream as a child.
	const streaming = createScriptedModel([{ content: [{ type: "text", text: "let me look it up" }, toolCall("look", {}, "l1")] }], { chunkSize: 4, delayMs: 20 });
	const fourth = new Agent({ initialState: { model: streaming.model, tools: [send, look] }, streamFn: streaming.streamFn, store: createMemoryStore(), sessionId: "s" });
	const streamed = deferred<void>();
	fourth.subscribe((event) => void (event.type === "message_update" && streamed.resolve()));
	const replying = fourth.prompt("go");
	await streamed.promise;
	result.push(place(throughJson(fourth.snapshot())));
	fourth.dispose();
	await replying;
	return result;
}

/** Every path in a JSON value, as lists of keys. */
function pathsOf(value: unknown, at: (string | number)[] = [], into: (string | number)[][] = []): (string | number)[][] {
	if (at.length > 0) into.push(at);
	if (Array.isArray(value)) value.forEach((item, index) => pathsOf(item, [...at, index], into));
	else if (value !== null && typeof value === "object") for (const [key, field] of Object.entries(value)) pathsOf(field, [...at, key], into);
	return into;
}

function damaged(snapshot: AgentSnapshot, path: (string | number)[], wrong: unknown | undefined, renamed?: { to: string; keep: boolean }): AgentSnapshot {
	const copy = throughJson(snapshot) as unknown as Record<string | number, unknown>;
	const parent = path.slice(0, -1).reduce<Record<string | number, unknown>>((node, key) => node[key] as Record<string | number, unknown>, copy);
	const last = path.at(-1) as string | number;
	if (renamed !== undefined) {
		// An own key, as parsed JSON has it (an assignment of "__proto__" would set the prototype).
		const value = parent[last];
		if (!renamed.keep) delete parent[last];
		Object.defineProperty(parent, renamed.to, { value: renamed.keep ? structuredClone(value) : value, writable: true, enumerable: true, configurable: true });
	} else if (wrong === undefined) {
		if (Array.isArray(parent)) parent.splice(last as number, 1);
		else delete parent[last];
	} else parent[last] = wrong;
	return copy as unknown as AgentSnapshot;
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
	return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}

/**
 * A field set to another JSON value (or removed: `undefined`), a number in it moved by `nudge`, as
 * a counter edited by hand, or the field moved (or copied, `keep`) to another key, as a name
 * edited or a field added.
 */
type Damage = { set: unknown } | { nudge: number } | { rename: { to: string; keep: boolean } };

const damage: fc.Arbitrary<Damage> = fc.oneof(
	fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }).map((set) => ({ set })),
	// Names every object has: a lookup by name (a child's logic, a table of checks) finds them.
	fc.constantFrom("constructor", "toString", "__proto__", "hasOwnProperty").map((set) => ({ set })),
	// Random values seldom hit a counter, and an id is text with a number in it ("r1", "r1.t1").
	fc.integer({ min: -3, max: 5 }).filter((by) => by !== 0).map((nudge) => ({ nudge })),
	// A key edited or added: another name, or one every object has.
	fc.record({ to: fc.constantFrom("extra", "constructor", "__proto__", "toString"), keep: fc.boolean() }).map((rename) => ({ rename })),
);

/** Whether a nudge can move the value at the end of a path: a number, or text with digits. */
function nudgeable(value: unknown): boolean {
	return typeof value === "number" || (typeof value === "string" && /\d/.test(value));
}

function nudged(value: unknown, by: number): unknown {
	if (typeof value === "number") return Math.max(0, value + by);
	return String(value).replace(/\d+/, (digits) => String(Math.max(0, Number(digits) + by)));
}

describe("a damaged snapshot", () => {
	it("is refused with agentchart's error, or restores an agent whose snapshot is valid again", async () => {
		const valid = await snapshots();
		// The tool running has its intent journaled: the property can see it run again.
		expect(valid.map((stored) => stored.started)).toEqual([[], [], ["l1"], []]);
		await fc.assert(
			fc.asyncProperty(fc.nat(valid.length - 1), fc.array(fc.tuple(fc.nat(), damage), { minLength: 1, maxLength: 3 }), async (index, damages) => {
				const { snapshot, started } = valid[index] as Place;
				let broken = snapshot;
				const done: string[] = [];
				for (const [pick, change] of damages) {
					const nudge = "nudge" in change ? change.nudge : undefined;
					const rename = "rename" in change ? change.rename : undefined;
					const paths = pathsOf(broken).filter((path) => (nudge === undefined || nudgeable(valueAt(broken, path))) && (rename === undefined || typeof path.at(-1) === "string"));
					if (paths.length === 0) continue;
					const path = paths[pick % paths.length] as (string | number)[];
					if (rename !== undefined) {
						broken = damaged(broken, path, undefined, rename);
						done.push(`${path.join(".")} ${rename.keep ? "copied to" : "renamed"} ${JSON.stringify(rename.to)}`);
						continue;
					}
					const wrong = nudge === undefined ? (change as { set: unknown }).set : nudged(valueAt(broken, path), nudge);
					broken = damaged(broken, path, wrong);
					done.push(`${path.join(".")} = ${JSON.stringify(wrong)}`);
				}
				if (done.length === 0) return;
				const what = done.join("; ");
				// The restored tools count their runs by call id.
				const ran: string[] = [];
				const counted = (tool: typeof send): typeof send => ({ ...tool, execute: (...args) => (ran.push(args[0]), tool.execute(...args)) });
				let agent: Agent | undefined;
				try {
					agent = Agent.restore(broken, { initialState: { tools: [counted(send), counted(look)] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
				} catch (error) {
					// A refusal that says what is wrong, not the engine tripping over the damage.
					expect(error, what).toBeInstanceOf(Error);
					expect(String(error), what).not.toMatch(ENGINE_TRIPPED);
					return;
				}
				try {
					const again = throughJson(agent.snapshot());
					expect(() => Agent.restore(again, { initialState: { tools: [send, look] } }).dispose(), what).not.toThrow();
					// And it runs to its end: what waits for a person is rejected, the rest finishes.
					for (const { toolCallId } of agent.pendingApprovals) await agent.reject(toolCallId);
					let timer: ReturnType<typeof setTimeout> | undefined;
					const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("still running after 2 s"), 2000)));
					expect(await Promise.race([agent.waitForIdle().then(() => "idle"), late]), what).toBe("idle");
					clearTimeout(timer);
					// A call that had started is answered from the journal (its result, or "interrupted"), not run again.
					if (!done.some((damage) => damage.startsWith("journal"))) expect(ran.filter((id) => started.includes(id)), what).toEqual([]);
				} finally {
					agent.dispose();
				}
			}),
			{ numRuns: 1000, seed: SEED },
		);
	}, 300_000);
});
