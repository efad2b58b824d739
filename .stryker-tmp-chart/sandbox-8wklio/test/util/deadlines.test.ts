/**
 * The shared deadline timer (src/util/deadlines.ts): deadlines fire once, in order, and not
 * when cleared; setting a later deadline or clearing one touches no timer; a delay beyond
 * Node's longest timer is reached without a TimeoutOverflowWarning; and with nothing pending
 * the timer does not hold the process open.
 */
// @ts-nocheck

import { afterEach, describe, expect, it, vi } from "vitest";

type Deadlines = typeof import("../../src/util/deadlines.js");

/** A fresh copy of the module (its timer is module state), with setTimeout watched. */
async function freshDeadlines(): Promise<{ deadlines: Deadlines; armed: number[]; timers: NodeJS.Timeout[] }> {
	vi.resetModules();
	const armed: number[] = [];
	const timers: NodeJS.Timeout[] = [];
	const realSetTimeout = globalThis.setTimeout;
	vi.spyOn(globalThis, "setTimeout").mockImplementation(((callback: () => void, delay?: number) => {
		const timer = realSetTimeout(callback, delay);
		if (callback.name === "expire") {
			armed.push(delay ?? 0);
			timers.push(timer);
		}
		return timer;
	}) as typeof setTimeout);
	return { deadlines: await import("../../src/util/deadlines.js"), armed, timers };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the shared deadline timer", () => {
	afterEach(() => {
		vi.restoreAllMocks();
	});

	it("fires each deadline once, in order of time, and not one that was cleared", async () => {
		const { deadlines } = await freshDeadlines();
		const fired: string[] = [];
		deadlines.setDeadline(30, () => fired.push("c"));
		deadlines.setDeadline(10, () => fired.push("a"));
		const cleared = deadlines.setDeadline(20, () => fired.push("never"));
		deadlines.setDeadline(20, () => fired.push("b"));
		deadlines.clearDeadline(cleared);
		await wait(80);
		expect(fired).toEqual(["a", "b", "c"]);
		deadlines.clearDeadline(cleared); // twice, and after the others fired: nothing happens
	});

	it("arms one timer for the nearest deadline: later ones and clearing touch no timer", async () => {
		const { deadlines, armed } = await freshDeadlines();
		const first = deadlines.setDeadline(60_000, () => {});
		for (let i = 0; i < 20; i++) deadlines.clearDeadline(deadlines.setDeadline(120_000, () => {}));
		expect(armed).toHaveLength(1);
		// An earlier deadline re-arms.
		const earlier = deadlines.setDeadline(5_000, () => {});
		expect(armed).toHaveLength(2);
		expect(armed[1]).toBeLessThanOrEqual(5_000);
		deadlines.clearDeadline(earlier);
		deadlines.clearDeadline(first);
	});

	it("after one fires, arms for the nearest of the rest, not the last one set", async () => {
		const { deadlines, armed } = await freshDeadlines();
		const fired: string[] = [];
		deadlines.setDeadline(5, () => fired.push("first"));
		deadlines.setDeadline(30, () => fired.push("second"));
		const far = deadlines.setDeadline(60_000, () => fired.push("far"));
		await wait(80);
		expect(fired).toEqual(["first", "second"]);
		// Armed for the first, then for the second: never for the far one while the second was pending.
		expect(armed[1]).toBeLessThanOrEqual(30);
		deadlines.clearDeadline(far);
	});

	it("re-arms for the next deadline after the one it was armed for was cleared", async () => {
		const { deadlines } = await freshDeadlines();
		const fired: string[] = [];
		const early = deadlines.setDeadline(10, () => fired.push("early"));
		deadlines.setDeadline(40, () => fired.push("late"));
		deadlines.clearDeadline(early);
		await wait(25);
		expect(fired).toEqual([]);
		await wait(50);
		expect(fired).toEqual(["late"]);
	});

	it("does not hold the process open once nothing is pending, and does again when something is", async () => {
		const { deadlines, timers } = await freshDeadlines();
		const deadline = deadlines.setDeadline(60_000, () => {});
		const timer = timers[0];
		expect(timer?.hasRef()).toBe(true);
		deadlines.clearDeadline(deadline);
		expect(timer?.hasRef()).toBe(false);
		const again = deadlines.setDeadline(90_000, () => {});
		expect(timer?.hasRef()).toBe(true);
		deadlines.clearDeadline(again);
	});

	it("holds the process open while any deadline is pending, and lets it go once the last one fired", async () => {
		const { deadlines, timers } = await freshDeadlines();
		const first = deadlines.setDeadline(60_000, () => {});
		deadlines.setDeadline(5, () => {});
		deadlines.clearDeadline(first);
		expect(timers.at(-1)?.hasRef()).toBe(true);
		await wait(30);
		// Fired, nothing pending: no timer of the module's is left holding the process.
		expect(timers.filter((timer) => timer.hasRef() && (timer as unknown as { _destroyed?: boolean })._destroyed !== true)).toEqual([]);
	});

	it("keeps firing after a test's fake timers were put away while its timer was armed on them", async () => {
		const { deadlines } = await freshDeadlines();
		// A fake clock at the epoch: the deadline armed on it is, in real time, long past.
		vi.useFakeTimers({ now: 0 });
		const fired: string[] = [];
		deadlines.setDeadline(10, () => fired.push("set on the fake clock"));
		vi.useRealTimers();
		// Later than the one armed on the fake clock: without re-arming, nothing would ever fire.
		deadlines.setDeadline(20, () => fired.push("set on the real clock"));
		await wait(60);
		expect(fired).toEqual(["set on the fake clock", "set on the real clock"]);
	});

	it("reaches a deadline beyond Node's longest timer without a TimeoutOverflowWarning", async () => {
		const { deadlines, armed } = await freshDeadlines();
		const warnings: string[] = [];
		const onWarning = (warning: Error) => warnings.push(warning.name);
		process.on("warning", onWarning);
		const far = deadlines.setDeadline(30 * 24 * 3600 * 1000, () => {});
		await wait(5);
		process.off("warning", onWarning);
		deadlines.clearDeadline(far);
		expect(warnings).not.toContain("TimeoutOverflowWarning");
		expect(armed[0]).toBe(2 ** 31 - 1);
	});

	it("keeps firing the others when one deadline's callback throws, and reports the throw", async () => {
		const { deadlines } = await freshDeadlines();
		const fired: string[] = [];
		const errors: unknown[] = [];
		const onError = (error: unknown) => errors.push(error);
		// The throw is reported as uncaught, on a later task; the test runner's own handler would
		// count it as a failure, so it is set aside meanwhile.
		const runners = process.rawListeners("uncaughtException") as ((error: unknown) => void)[];
		process.removeAllListeners("uncaughtException");
		process.on("uncaughtException", onError);
		deadlines.setDeadline(5, () => {
			throw new Error("boom");
		});
		deadlines.setDeadline(5, () => fired.push("sibling"));
		deadlines.setDeadline(30, () => fired.push("later"));
		await wait(70);
		process.off("uncaughtException", onError);
		for (const runner of runners) process.on("uncaughtException", runner);
		expect(fired).toEqual(["sibling", "later"]);
		expect(String(errors[0])).toContain("boom");
	});
});
