/**
 * A run's cancellation (src/util/run-abort.ts): the run's signal aborts once, then its calls',
 * then the run's parts hear it through their hooks; the run's calls (model and tool calls) take
 * in turn the controllers earlier calls left clean; a call cancelled alone (a stalled stream, a
 * tool's timeout) leaves the run alone and its controller serves no later call, nor does one
 * something still listens on.
 */
import { describe, expect, it } from "vitest";
import { RunAbort } from "../../src/util/run-abort.js";

describe("RunAbort", () => {
	it("aborts the run's signal, then the model call's, then calls each hook once", () => {
		const abort = new RunAbort();
		const call = abort.callController();
		const seen: string[] = [];
		abort.signal.addEventListener("abort", () => seen.push(`signal (call aborted: ${call.signal.aborted})`));
		abort.onAbort(() => seen.push(`hook (run: ${abort.signal.aborted}, call: ${call.signal.aborted})`));
		const removed = abort.onAbort(() => seen.push("removed hook"));
		removed();
		const reason = new Error("stop");
		abort.abort(reason);
		abort.abort(new Error("again"));
		expect(seen).toEqual(["signal (call aborted: false)", "hook (run: true, call: true)"]);
		expect(abort.signal.reason).toBe(reason);
		expect(call.signal.reason).toBe(reason);
	});

	it("calls a hook added after the abort at once", () => {
		const abort = new RunAbort();
		abort.abort();
		let called = 0;
		abort.onAbort(() => called++)();
		expect(called).toBe(1);
	});

	it("hands the next call the controller of a call that ended, and a fresh one after a call was cancelled alone", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		abort.endCall(first);
		const again = abort.callController();
		expect(again).toBe(first);
		abort.cancelCall(again, new Error("stream stalled"));
		expect(again.signal.aborted).toBe(true);
		expect(abort.signal.aborted).toBe(false);
		abort.endCall(again);
		const second = abort.callController();
		expect(second).not.toBe(first);
		expect(second.signal.aborted).toBe(false);
		abort.endCall(second);
		// The run's controller for its calls is aborted with the run, also between calls.
		abort.abort();
		expect(second.signal.aborted).toBe(true);
	});

	it("gives a call made while another holds the shared controller one of its own", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		const second = abort.callController();
		expect(second).not.toBe(first);
		abort.endCall(first);
		// The first call's end does not free the second's controller for a third call.
		expect(abort.callController()).not.toBe(second);
	});

	it("cancels only the call it is given, and hands its controller to no later call", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		const second = abort.callController();
		abort.cancelCall(second, new Error("stream stalled"));
		expect(second.signal.aborted).toBe(true);
		expect(first.signal.aborted).toBe(false);
		abort.endCall(second);
		abort.endCall(first);
		const third = abort.callController();
		expect(third).not.toBe(second);
		expect(third.signal.aborted).toBe(false);
	});

	it("aborts every call in flight with the run, also one made while another held the shared controller", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		const second = abort.callController();
		abort.abort(new Error("stop"));
		expect(first.signal.aborted).toBe(true);
		expect(second.signal.aborted).toBe(true);
		expect((second.signal.reason as Error).message).toBe("stop");
	});

	it("still aborts the shared controller's call with the run after another call was cancelled, and forgets the cancelled one", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		const second = abort.callController();
		abort.cancelCall(second, new Error("stream stalled"));
		abort.abort(new Error("stop"));
		expect(first.signal.aborted).toBe(true);
		expect((second.signal.reason as Error).message).toBe("stream stalled");
	});

	it("forgets only the call that ended: a later call is still aborted with the run", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		const second = abort.callController();
		abort.endCall(first);
		abort.abort();
		expect(second.signal.aborted).toBe(true);
	});

	it("gives a call started after the run was aborted an aborted signal", () => {
		const abort = new RunAbort();
		const reason = new Error("aborted before the call");
		abort.abort(reason);
		const call = abort.callController();
		expect(call.signal.aborted).toBe(true);
		expect(call.signal.reason).toBe(reason);
	});

	it("hands a later call no controller that work a tool call left running still listens on", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		// Work the call left running (a child process, a request) would be stopped by a later call's cancel.
		const stopLeftover = () => {};
		first.signal.addEventListener("abort", stopLeftover);
		abort.endCall(first, true);
		const second = abort.callController();
		expect(second).not.toBe(first);
		// An `onabort` handler is a listener too.
		second.signal.onabort = () => {};
		abort.endCall(second, true);
		const third = abort.callController();
		expect(third).not.toBe(second);
		// A listener removed before the end leaves the signal clean.
		third.signal.addEventListener("abort", stopLeftover);
		third.signal.removeEventListener("abort", stopLeftover);
		abort.endCall(third, true);
		expect(abort.callController()).toBe(third);
	});

	it("does not look for listeners on a model call's signal (its request's listener ends with the call)", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		first.signal.addEventListener("abort", () => {});
		abort.endCall(first);
		expect(abort.callController()).toBe(first);
	});

	it("keeps a controller for the next call once per end: ending a call twice frees it once", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		abort.endCall(first);
		abort.endCall(first);
		expect(abort.callController()).toBe(first);
		expect(abort.callController()).not.toBe(first);
	});

	it("hands several calls in flight a controller each, and as many back to later calls", () => {
		const abort = new RunAbort();
		const calls = [abort.callController(), abort.callController(), abort.callController()];
		expect(new Set(calls).size).toBe(3);
		for (const call of calls) abort.endCall(call);
		const again = [abort.callController(), abort.callController(), abort.callController()];
		expect(new Set(again)).toEqual(new Set(calls));
	});

	it("gives a call after the run's abort an aborted controller, not a clean one an earlier call left", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		abort.endCall(first);
		abort.abort(new Error("stop"));
		expect(first.signal.aborted).toBe(true);
		const later = abort.callController();
		expect(later.signal.aborted).toBe(true);
		expect((later.signal.reason as Error).message).toBe("stop");
		// A call that ends after the abort frees nothing.
		abort.endCall(later);
		expect(abort.callController()).not.toBe(later);
	});

	it("looks at a tool call's signal when a later call wants it: work that stopped listening meanwhile no longer holds it back", () => {
		const abort = new RunAbort();
		const first = abort.callController();
		const stopLeftover = () => {};
		first.signal.addEventListener("abort", stopLeftover);
		abort.endCall(first, true);
		// The leftover work finished and removed its listener before the next call.
		first.signal.removeEventListener("abort", stopLeftover);
		expect(abort.callController()).toBe(first);
	});

	it("hands no later call a controller that was cancelled after its call ended", () => {
		for (const workMayOutlive of [false, true]) {
			const abort = new RunAbort();
			const first = abort.callController();
			abort.endCall(first, workMayOutlive);
			abort.cancelCall(first, new Error("late cancel"));
			const next = abort.callController();
			expect(next).not.toBe(first);
			expect(next.signal.aborted).toBe(false);
		}
	});
});
