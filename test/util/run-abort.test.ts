import { describe, expect, it } from "vitest";
import { RunAbort } from "../../src/util/run-abort.js";

describe("RunAbort", () => {
	it("aborts the run's signal, then every call's, then calls each hook once", () => {
		const abort = new RunAbort();
		const order: string[] = [];
		const first = abort.callController();
		const second = abort.callController();
		abort.signal.addEventListener("abort", () => order.push("run"));
		first.signal.addEventListener("abort", () => order.push("first"));
		second.signal.addEventListener("abort", () => order.push("second"));
		const hook = () => order.push("hook");
		abort.onAbort(hook);
		abort.onAbort(hook);
		abort.abort(new Error("stop"));
		abort.abort(new Error("again"));
		expect(order).toEqual(["run", "first", "second", "hook"]);
		expect(abort.aborted).toBe(true);
		expect((first.signal.reason as Error).message).toBe("stop");
	});

	it("calls a hook added after the abort at once, and a removed hook never", () => {
		const abort = new RunAbort();
		const calls: string[] = [];
		const remove = abort.onAbort(() => calls.push("removed"));
		remove();
		abort.abort();
		abort.onAbort(() => calls.push("late"));
		expect(calls).toEqual(["late"]);
	});

	it("gives every call a controller of its own: cancelling one leaves the run and the others alone", () => {
		const abort = new RunAbort();
		const stalled = abort.callController();
		const other = abort.callController();
		expect(stalled).not.toBe(other);
		abort.cancelCall(stalled, new Error("stream stalled"));
		expect(stalled.signal.aborted).toBe(true);
		expect(other.signal.aborted).toBe(false);
		expect(abort.signal.aborted).toBe(false);
	});

	it("aborts a call that is over with the run, as pi's shared signal is (work a tool left running hears it)", () => {
		const abort = new RunAbort();
		const finished = abort.callController();
		abort.abort();
		expect(finished.signal.aborted).toBe(true);
	});

	it("gives a call started after the run was aborted an aborted signal", () => {
		const abort = new RunAbort();
		abort.abort(new Error("gone"));
		const late = abort.callController();
		expect(late.signal.aborted).toBe(true);
		expect((late.signal.reason as Error).message).toBe("gone");
	});
});
