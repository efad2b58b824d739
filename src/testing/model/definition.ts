import type { AnyStateMachine, AnyStateNode } from "xstate";

/** One transition of the machine definition: a guarded candidate of one event (or `always`) on one state node. */
export interface DefinedTransition {
	/** `source --event#candidate--> targets`, stable across runs. */
	key: string;
	source: string;
	eventType: string;
	/** Position among the candidates for this event on this node (guard order). */
	candidate: number;
	guard: string;
	targets: string;
}

function guardName(guard: unknown): string {
	if (guard === undefined) return "";
	if (typeof guard === "string") return guard;
	const g = guard as { type?: string; guards?: unknown[]; guard?: unknown; name?: string; check?: unknown };
	if (typeof g === "function") {
		const fn = guard as { check?: unknown; guards?: unknown[]; guard?: unknown; name?: string };
		if (Array.isArray(fn.guards)) return `${fn.name || "combo"}(${fn.guards.map(guardName).join(",")})`;
		if (fn.guard !== undefined) return `not(${guardName(fn.guard)})`;
		return fn.name || "fn";
	}
	return g.type ?? "guard";
}

function stateNodesOf(root: AnyStateNode): AnyStateNode[] {
	const nodes: AnyStateNode[] = [root];
	for (const child of Object.values(root.states) as AnyStateNode[]) nodes.push(...stateNodesOf(child));
	return nodes;
}

/**
 * Every transition the machine definition declares, keyed by the TransitionDefinition object
 * itself (inspection's `_transitions` hands out the same objects, so identity maps a taken
 * transition back to its definition).
 */
export function definedTransitions(machine: AnyStateMachine): Map<object, DefinedTransition> {
	const result = new Map<object, DefinedTransition>();
	for (const node of stateNodesOf(machine.root)) {
		const groups: [string, readonly object[]][] = [...(node.transitions as Map<string, object[]>).entries()];
		if (node.always) groups.push(["always", node.always as object[]]);
		for (const [eventType, candidates] of groups) {
			candidates.forEach((definition, candidate) => {
				const t = definition as { target?: AnyStateNode[]; guard?: unknown; reenter?: boolean };
				const targets = t.target?.map((target) => target.id).join(",") ?? "(self)";
				const guard = guardName(t.guard);
				const key = `${node.id} --${eventType}#${candidate}${guard ? `[${guard}]` : ""}--> ${targets}`;
				result.set(definition, { key, source: node.id, eventType, candidate, guard, targets });
			});
		}
	}
	return result;
}

/**
 * The states whose entry runs `action` (by name), as paths relative to the root
 * (`running.before-call`): the decision states are those whose entry emits a barrier.
 *
 * @example
 * statesEntering(agentMachine, "emitBarrier"); // ["running.run-starting", "running.before-call", ...]
 */
export function statesEntering(machine: AnyStateMachine, action: string): string[] {
	const named = (entry: unknown) => (typeof entry === "string" ? entry : (entry as { type?: unknown }).type) === action;
	return stateNodesOf(machine.root)
		.filter((node) => (node.entry as readonly unknown[]).some(named))
		.map((node) => node.path.join("."));
}
