/** A tool for the hostile-server tests: it takes any object and counts its runs. */
import { Type } from "typebox";
import type { AgentTool } from "../../src/types/agent.js";

export const anyArguments = Type.Object({}, { additionalProperties: true });

/** A tool named "store" that takes any object and records each run's arguments. */
export function countingTool(): AgentTool<typeof anyArguments> & { runs: unknown[] } {
	const runs: unknown[] = [];
	return {
		name: "store",
		label: "Store",
		description: "Stores whatever it is given",
		parameters: anyArguments,
		runs,
		execute: async (_id, params) => {
			runs.push(params);
			return { content: [{ type: "text", text: "stored" }], details: {} };
		},
	};
}
