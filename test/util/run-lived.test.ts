/**
 * util/run-lived.ts: what a run holds from its start to its end is built where V8 cannot
 * pretenure it. A pretenured object dies with its run all the same, but in the old generation,
 * where the scavenger takes it for alive and keeps every young object it points to; the
 * decision then spread along the run's references (after some hundreds of short runs, 4.1 KiB
 * promoted per run instead of 1.0, and a run 1.5 times as slow). Whether V8 allocated an object
 * in the old generation only V8 can tell: its natives syntax (`%InYoungGeneration`) is turned
 * on at run time, as keep-shape.test.ts does, and each of a run's objects is looked at the first
 * time the run's actors show it, right after it was made.
 */
import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { LeanActor } from "../../src/machines/lean-actor.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { echoTool } from "../agent/helpers.js";

setFlagsFromString("--allow-natives-syntax");
// Made at run time, after the flag: a TypeScript transform cannot parse natives syntax.
const inYoungGeneration = new Function("o", "return %InYoungGeneration(o)") as (o: object) => boolean;

/** For each kind of object: how many were seen, and how many of those were already old. */
class Census {
	readonly seen = new Map<string, number>();
	readonly old = new Map<string, number>();
	readonly #looked = new WeakSet<object>();

	look(name: string, value: unknown): void {
		if (typeof value !== "object" || value === null || this.#looked.has(value)) return;
		this.#looked.add(value);
		this.seen.set(name, (this.seen.get(name) ?? 0) + 1);
		if (!inYoungGeneration(value)) this.old.set(name, (this.old.get(name) ?? 0) + 1);
	}

	/** The share of each kind that was old when first seen. */
	shares(): Record<string, number> {
		return Object.fromEntries([...this.seen].map(([name, seen]) => [name, (this.old.get(name) ?? 0) / seen]));
	}
}

/** Where the looks go: a census per window of runs. */
interface Looker {
	census: Census;
}

interface Watched {
	_parent?: unknown;
	mailbox: object;
	_deferred: object;
}
interface RunLike {
	stream: object;
	toolResults: object;
	newMessages: object;
}

/** Looks at what the run's lean actors hold as they take their steps. */
function watchLeanActors(looker: Looker): () => void {
	const prototype = LeanActor.prototype as unknown as { update(this: Watched, snapshot: unknown, event: unknown): void };
	const update = prototype.update;
	prototype.update = function (this: Watched, snapshot: unknown, event: unknown) {
		const census = looker.census;
		census.look("an actor's mailbox", this.mailbox);
		census.look("an actor's effect list", this._deferred);
		const { context, input } = snapshot as { context?: { config?: { streamOptions?: object }; run?: RunLike }; input?: { context?: object } };
		if (this._parent) {
			census.look("a child actor's input", input);
			census.look("a tool batch's hook context", input?.context);
		}
		census.look("the run's configuration", context?.config);
		census.look("the run's stream options", context?.config?.streamOptions);
		const run = context?.run;
		if (run) {
			census.look("a model call's progress", run.stream);
			census.look("a turn's tool result list", run.toolResults);
			census.look("the run's new message list", run.newMessages);
		}
		update.call(this, snapshot, event);
	};
	return () => {
		prototype.update = update;
	};
}

/** A run of two model calls: three tool calls, then a reply. */
async function oneRun(census: Census): Promise<void> {
	const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "a" }), toolCall("echo", { value: "b" }), toolCall("echo", { value: "c" })] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn });
	census.look("an agent's tool list", agent.state.tools);
	agent.subscribe((event: AgentEvent) => {
		// The control: a user's message lives as long as the transcript, and V8 is right to
		// pretenure it (it does pi's too). It shows that V8 made its decisions in this process.
		if (event.type === "message_start" && event.message.role === "user") census.look("a prompt's message (control)", event.message);
	});
	await agent.prompt("go");
}

const WINDOW = 500;
const MOST_RUNS = 20_000;
/** Runs before the window judged, at least: V8 decides the run-lived sites at 250–2,800 runs. */
const FEWEST_RUNS = 4_000;
/** Runs after the control was first pretenured, at least, before the window judged. */
const RUNS_AFTER_CONTROL = 2_000;

describe("run-lived objects", () => {
	it("are allocated young, while V8 pretenures a user's message", async (context) => {
		// V8 decides after some hundreds of runs in a fresh process (the control at about a
		// thousand here), once its young generation has grown to its largest, and decided sites
		// stay decided; in a process that ran much else first (StrykerJS runs every test file in
		// one) it may take longer. So prompts run in windows until well after the control was
		// pretenured, and the last window is judged.
		const looker: Looker = { census: new Census() };
		const unwatch = watchLeanActors(looker);
		let shares: Record<string, number> | undefined;
		try {
			let judgeAt = FEWEST_RUNS;
			let controlSince: number | undefined;
			for (let runs = WINDOW; runs <= MOST_RUNS; runs += WINDOW) {
				looker.census = new Census();
				for (let index = 0; index < WINDOW; index++) await oneRun(looker.census);
				const window = looker.census.shares();
				const controlOld = (window["a prompt's message (control)"] ?? 0) > 0.5;
				if (controlOld && controlSince === undefined) {
					controlSince = runs;
					judgeAt = Math.max(FEWEST_RUNS, runs + RUNS_AFTER_CONTROL);
				}
				if (controlOld && runs >= judgeAt) {
					shares = window;
					break;
				}
			}
		} finally {
			unwatch();
		}
		if (!shares) {
			// V8 made no pretenuring decision in this process: nothing to judge by.
			context.skip();
			return;
		}
		const { "a prompt's message (control)": _control, ...runLived } = shares;
		expect(Object.keys(runLived)).toHaveLength(10);
		// A scavenge between an object's making and the look promotes nothing yet: a share above
		// zero is a pretenured site. A little room for a full collection's compaction.
		expect(Object.entries(runLived).filter(([, share]) => share > 0.02)).toEqual([]);
	}, 120_000);
});
