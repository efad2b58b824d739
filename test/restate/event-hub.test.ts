/**
 * The event hub with a listener that stops reading (a frozen tab, a paused consumer): the hub
 * holds a bounded amount for it and then disconnects it, instead of buffering every frame until
 * it runs out of memory. The hub alone, in this process (no restate-server or worker is needed:
 * it is fed as workers feed it, through `publish`).
 */
import { connect, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { watchSession } from "../../src/restate/client.js";
import { createEventHub, type EventHub } from "../../src/restate/event-hub.js";
import { createHttpEventSink, type SessionEventEnvelope } from "../../src/restate/session-events.js";

let hub: EventHub | undefined;
let socket: Socket | undefined;

afterEach(async () => {
	socket?.destroy();
	await hub?.close();
});

const delta = "d".repeat(200);
const envelope = (seq: number): SessionEventEnvelope => ({
	sessionId: `s${seq % 10}`,
	invocationId: "inv",
	worker: "w",
	attempt: "a",
	seq,
	event: { type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta } },
});

it("disconnects a listener that stopped reading once a bounded amount is buffered for it", { timeout: 60_000 }, async () => {
	hub = createEventHub({ maxBufferedBytes: 1024 * 1024 });
	const port = Number(new URL(await hub.listen(0)).port);
	const listener = connect(port, "127.0.0.1");
	socket = listener;
	let received = 0;
	let firstChunk: () => void = () => undefined;
	const connected = new Promise<void>((resolve) => (firstChunk = resolve));
	listener.on("data", (chunk: Buffer) => {
		received += chunk.length;
		firstChunk();
	});
	const closed = new Promise<void>((resolve) => listener.once("close", () => resolve()));
	listener.write("GET /events HTTP/1.1\r\nHost: hub\r\n\r\n");
	await connected;
	listener.pause(); // never reads again (until the end of the test)

	// About 40 MB of frames, in bursts (the hub's socket gets to flush what the kernel takes).
	let published = 0;
	for (let seq = 0; seq < 120_000; seq++) {
		const frame = envelope(seq);
		hub.publish(frame);
		published += JSON.stringify(frame).length + 8;
		if (seq % 10_000 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
	}
	// Read what reached the listener's side: the frames up to the bound, then the end.
	listener.resume();
	const ended = await Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000))]);
	expect(ended).toBe(true);
	expect(received).toBeLessThan(published / 3);

	// The hub goes on serving: a new listener gets what is published from then on.
	const again = connect(port, "127.0.0.1");
	socket = again;
	let text = "";
	const seen = new Promise<void>((resolve) =>
		again.on("data", (chunk: Buffer) => {
			text += chunk.toString("utf8");
			if (text.includes('"seq":7')) resolve();
		}),
	);
	again.write("GET /events?session=s7 HTTP/1.1\r\nHost: hub\r\n\r\n");
	await new Promise((resolve) => setTimeout(resolve, 200));
	hub.publish(envelope(7));
	await seen;
});

it("refuses a hub URL no event could be sent to when the sink is made, instead of dropping every event", async () => {
	for (const url of ["127.0.0.1:9900", "localhost:9900", "", "ftp://127.0.0.1:9900"]) {
		expect(() => createHttpEventSink(url), url).toThrow(/createHttpEventSink\(hubUrl\): hubUrl must be the http\(s\) URL of an event hub/);
	}
	hub = createEventHub();
	const url = await hub.listen(0);
	const sink = createHttpEventSink(`${url}/`);
	sink.publish(envelope(1));
	await sink.flush();
	expect(sink.dropped).toBe(0);
});

it("refuses options it could not work with when the hub is made", () => {
	const cases: [unknown, string][] = [
		[null, "options must be an object, got null"],
		[{ onEvents: () => undefined }, 'no option "onEvents" (its options: onEvent, maxBufferedBytes)'],
		[{ onEvent: "log" }, "onEvent must be a function, got string"],
		// NaN from an unset `Number(process.env.HUB_BYTES)`: no listener that stopped reading would ever be cut off.
		[{ maxBufferedBytes: Number.NaN }, "maxBufferedBytes must be a number of bytes, at least 1, got NaN"],
		[{ maxBufferedBytes: 0 }, "maxBufferedBytes must be a number of bytes, at least 1, got 0"],
	];
	for (const [options, message] of cases) expect(() => createEventHub(options as never)).toThrow(new TypeError(`agentchart/restate: createEventHub(options): ${message}`));
});

it("watchSession hands out nothing once its signal aborted, not even the frames that came with the one it was aborted at", async () => {
	hub = createEventHub();
	const hubUrl = await hub.listen(0);
	const controller = new AbortController();
	const seen: number[] = [];
	const watching = (async () => {
		for await (const { seq } of watchSession(hubUrl, "s1", controller.signal)) {
			seen.push(seq);
			// The docs' loop: stop at the first agent_end.
			if (seq === 11) controller.abort();
		}
	})();
	// Published in one go: the frames reach the watcher in one chunk.
	await new Promise((resolve) => setTimeout(resolve, 100));
	for (const seq of [1, 11, 21, 31, 41]) hub.publish(envelope(seq));
	await watching;
	expect(seen).toEqual([1, 11]);
});
