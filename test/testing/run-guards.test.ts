/**
 * The kit's run guards: XState's own warnings are violations; a warning of your code is printed
 * as usual and is not (a word such as "factor" holds "actor", which once made it one).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createActor, createMachine } from "xstate";
import { installRunGuards, type RunGuards } from "../../src/testing/run-guards.js";

describe("installRunGuards", () => {
	let guards: RunGuards | undefined;
	afterEach(() => {
		guards?.uninstall();
		guards = undefined;
		vi.restoreAllMocks();
	});

	it("prints your own warnings through and does not report them, whatever words they hold", () => {
		const printed = vi.spyOn(console, "warn").mockImplementation(() => undefined);
		guards = installRunGuards({ walk: "exploreAgent", strictWarnings: false });
		const yours = ["slow backend, retrying with backoff factor 2", "refactor pending", "the contractor's reactor is down", "xstate-like event was sent twice", "Actor type"];
		for (const text of yours) console.warn(text);
		expect(guards.take()).toEqual([]);
		expect(printed.mock.calls.map((args) => args[0])).toEqual(yours);
	});

	it("reports XState's warning about an event sent to a stopped actor, and does not print it", () => {
		const printed = vi.spyOn(console, "warn").mockImplementation(() => undefined);
		guards = installRunGuards({ walk: "exploreAgent", strictWarnings: false });
		const actor = createActor(createMachine({ id: "probe", initial: "a", states: { a: {} } }));
		actor.start();
		actor.stop();
		actor.send({ type: "ping" });
		const caught = guards.take();
		expect(caught).toHaveLength(1);
		expect(caught[0]?.rule).toBe("console-warning");
		expect(caught[0]?.message).toMatch(/^console\.warn: Event "ping" was sent to stopped actor "/);
		expect(printed).not.toHaveBeenCalled();
	});

	it("reports every warning with strictWarnings (agentchart's own walk)", () => {
		vi.spyOn(console, "warn").mockImplementation(() => undefined);
		guards = installRunGuards({ walk: "exploreAgent", strictWarnings: true });
		console.warn("backoff factor 2");
		expect(guards.take().map((each) => each.rule)).toEqual(["console-warning"]);
	});

	it("refuses a second walk's guards while the first's are installed, and gives back the process's own once", () => {
		const mine = () => undefined;
		process.on("unhandledRejection", mine);
		const before = process.listeners("unhandledRejection");
		const warn = console.warn;
		guards = installRunGuards({ walk: "exploreAgent", strictWarnings: false });
		expect(() => installRunGuards({ walk: "fuzzAgent", strictWarnings: false })).toThrow(/fuzzAgent: another walk \(exploreAgent or fuzzAgent: exploreAgent\) is running in this process; await it first/);
		guards.uninstall();
		guards.uninstall();
		expect(process.listeners("unhandledRejection")).toEqual(before);
		expect(console.warn).toBe(warn);
		process.off("unhandledRejection", mine);
		guards = installRunGuards({ walk: "fuzzAgent", strictWarnings: false });
	});
});
