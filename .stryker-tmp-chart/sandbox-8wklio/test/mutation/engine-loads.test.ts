/**
 * The engine's modules load. Every other test imports them at the top of its file, so a
 * mutant that breaks loading (a chart target that does not exist, an empty machine id) fails
 * those files before any test runs; StrykerJS 9's vitest runner reports such a mutant as
 * survived (no test failed). Importing inside a test turns it into a failing test.
 */
// @ts-nocheck

import { expect, it } from "vitest";

it("the engine's modules load and the agent machine is created", async () => {
	const engine = await import("../../src/index.js");
	const machine = await import("../../src/machine.js");
	expect(typeof engine.Agent).toBe("function");
	expect(machine.agentMachine.id).toBe("agent");
});
