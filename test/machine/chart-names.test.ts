/**
 * Every name the chart refers to (actions, guards, actors, delays) is implemented in its
 * setup, and every implementation is used. XState v5 skips an action whose name it cannot
 * find without a word, so a misspelt or emptied name in the chart silently drops that step
 * of a transition; no behaviour test can be relied on to watch every step of every
 * transition, so this check covers the whole class at once. A guard an action's body asks by
 * name (`check("savesCheckpoints")`) counts as named.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

type Names = { actions: Set<string>; guards: Set<string>; actors: Set<string>; delays: Set<string> };

/** A guard as XState v5 keeps it: a name, `{ type }`, or a higher-order `and`/`or`/`not` function with `.guards`. */
function collectGuard(guard: unknown, into: Set<string>): void {
	if (typeof guard === "string") into.add(guard);
	else if (typeof guard === "function" && "guards" in guard && Array.isArray(guard.guards)) {
		for (const inner of guard.guards) collectGuard(inner, into);
	} else if (guard && typeof guard === "object" && "type" in guard && typeof guard.type === "string") into.add(guard.type);
}

function collectActions(actions: unknown, into: Set<string>): void {
	for (const action of Array.isArray(actions) ? actions : [actions]) {
		if (typeof action === "string") into.add(action);
		else if (action && typeof action === "object" && "type" in action && typeof action.type === "string") into.add(action.type);
	}
}

function collectTransitions(transitions: unknown, names: Names): void {
	for (const transition of Array.isArray(transitions) ? transitions : [transitions]) {
		if (!transition || typeof transition !== "object") continue;
		const t = transition as { actions?: unknown; guard?: unknown };
		if (t.actions !== undefined) collectActions(t.actions, names.actions);
		if (t.guard !== undefined) collectGuard(t.guard, names.guards);
	}
}

/** Walks a state node's config: entry/exit, `on`, `always`, `after` and `invoke`, then its children. */
function collect(node: Record<string, unknown>, names: Names): void {
	if (node["entry"] !== undefined) collectActions(node["entry"], names.actions);
	if (node["exit"] !== undefined) collectActions(node["exit"], names.actions);
	for (const transitions of Object.values((node["on"] ?? {}) as Record<string, unknown>)) collectTransitions(transitions, names);
	if (node["always"] !== undefined) collectTransitions(node["always"], names);
	for (const [delay, transitions] of Object.entries((node["after"] ?? {}) as Record<string, unknown>)) {
		if (!/^\d+$/.test(delay)) names.delays.add(delay);
		collectTransitions(transitions, names);
	}
	const invokes = node["invoke"] === undefined ? [] : Array.isArray(node["invoke"]) ? node["invoke"] : [node["invoke"]];
	for (const invoke of invokes as Array<Record<string, unknown>>) {
		if (typeof invoke["src"] === "string") names.actors.add(invoke["src"]);
		for (const key of ["onDone", "onError", "onSnapshot"]) if (invoke[key] !== undefined) collectTransitions(invoke[key], names);
	}
	for (const child of Object.values((node["states"] ?? {}) as Record<string, Record<string, unknown>>)) collect(child, names);
}

describe("the agent chart's names", () => {
	it("every action, guard, actor and delay the chart names is implemented, and every implementation is named", async () => {
		// Imported inside the test: a chart that fails to load fails here, not at collection.
		const { agentMachine } = await import("../../src/machine.js");
		const names: Names = { actions: new Set(), guards: new Set(), actors: new Set(), delays: new Set() };
		collect(agentMachine.config as unknown as Record<string, unknown>, names);
		// The tool batch is spawned by an action (startToolBatch), not invoked by a state.
		names.actors.add("toolBatchActor");
		// An entry action that acts only sometimes asks a named guard in its body (`check("name")`).
		const setupSource = await readFile(new URL("../../src/machines/agent-setup.ts", import.meta.url), "utf8");
		const checked = [...setupSource.matchAll(/\bcheck\("(\w+)"\)/g)].map((match) => match[1] as string);
		expect(checked.length, "guards checked in action bodies").toBeGreaterThanOrEqual(3);
		for (const name of checked) names.guards.add(name);
		const implemented = agentMachine.implementations;
		for (const kind of ["actions", "guards", "actors", "delays"] as const) {
			const defined = new Set(Object.keys(implemented[kind] ?? {}));
			const used = [...names[kind]].sort();
			expect(
				used.filter((name) => !defined.has(name)),
				`${kind} the chart names but setup() does not implement`,
			).toEqual([]);
			expect(
				[...defined].filter((name) => !names[kind].has(name)).sort(),
				`${kind} setup() implements but the chart never names`,
			).toEqual([]);
		}
		// The walk itself found the chart's vocabulary (a walk that finds nothing passes vacuously).
		expect(names.actions.size).toBeGreaterThan(20);
		expect(names.guards.size).toBeGreaterThan(5);
		expect(names.actors.has("streamActor")).toBe(true);
	});
});
