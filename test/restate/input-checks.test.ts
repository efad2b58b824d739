// What the Restate integration refuses before anything goes out, checked without a server. A
// decision with a misspelt field must be refused, not taken without it: an approval whose `args`
// went unread ran the model's arguments, the ones the person meant to change (the session object's
// input check, and the client, which must not send it). A client made with an ingress it cannot
// call is refused when it is made, where every call used to fail with fetch's bare "fetch failed".
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionClient } from "../../src/restate/client.js";
import { SessionRefusal } from "../../src/restate/sdk.js";
import { checkDecisionInput, firstPoll } from "../../src/restate/session-input.js";
import type { QueuedMessage } from "../../src/restate/session-types.js";

const received: string[] = [];
const server = createServer((request: IncomingMessage, response) => {
	let body = "";
	request.on("data", (chunk) => (body += chunk));
	request.on("end", () => {
		received.push(`${request.url} ${body}`);
		response.writeHead(200, { "content-type": "application/json" });
		response.end(JSON.stringify({ status: "idle", messages: [], pendingApprovals: [] }));
	});
});
let ingressUrl = "";

beforeAll(async () => {
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	ingressUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

function refusalOf(check: () => unknown): SessionRefusal | undefined {
	try {
		check();
	} catch (error) {
		return error as SessionRefusal;
	}
	return undefined;
}

describe("decisions with a field the session does not know", () => {
	it("the session object refuses them with a 400 naming the field", () => {
		const cases: ["approve" | "reject", unknown, string][] = [
			["approve", { toolCallId: "t1", args: { to: "alice" } }, 'unknown field "args"'],
			["approve", { toolCallId: "t1", arguments: {}, reason: "x" }, 'unknown field "reason"'],
			["reject", { toolCallId: "t1", reson: "no" }, 'unknown field "reson"'],
			["reject", { toolCallId: "t1", arguments: {} }, 'unknown field "arguments"'],
		];
		for (const [handler, input, message] of cases) {
			const refusal = refusalOf(() => checkDecisionInput(handler as "approve", input));
			expect(refusal).toBeInstanceOf(SessionRefusal);
			expect(refusal?.errorCode).toBe(400);
			expect(refusal?.message).toContain(`${handler} refused its input: ${message}`);
		}
		expect(checkDecisionInput("approve", { toolCallId: "t1", arguments: { to: "alice" } })).toEqual({ toolCallId: "t1", arguments: { to: "alice" } });
		expect(checkDecisionInput("reject", { toolCallId: "t1", reason: "no" })).toEqual({ toolCallId: "t1", reason: "no" });
	});

	it("the client refuses an approve option it does not know and sends nothing; the known ones go out", async () => {
		const session = createSessionClient({ ingressUrl }).session("s1");
		await expect(session.approve("t1", { args: { to: "alice" } } as never)).rejects.toThrow(/approve\("t1", options\): unknown option "args"/);
		await expect(session.send.approve("t1", { argument: {} } as never)).rejects.toBeInstanceOf(TypeError);
		expect(received).toEqual([]);
		await session.approve("t1", { arguments: { to: "alice" }, idempotencyKey: "k1" });
		expect(received).toEqual(['/AgentSession/s1/approve {"toolCallId":"t1","arguments":{"to":"alice"}}']);
	});
});

describe("call options the client does not know", () => {
	it("reject refuses a misspelt option and sends nothing, as approve does; the known ones go out", async () => {
		const session = createSessionClient({ ingressUrl }).session("s2");
		const before = received.length;
		await expect(session.reject("t1", "not today", { idempotencyKye: "k1" } as never)).rejects.toThrow(/^agentchart\/restate: reject\("t1", reason, options\): unknown option "idempotencyKye" \(the options are "idempotencyKey", "signal"\); nothing was sent$/);
		await expect(session.send.reject("t1", undefined, { signl: AbortSignal.timeout(1000) } as never)).rejects.toBeInstanceOf(TypeError);
		// Every other call too: a misspelt idempotencyKey would make a retry run the call twice.
		await expect(session.prompt("hello", { idempotencyKye: "k2" } as never)).rejects.toThrow(/prompt\(input, options\): unknown option "idempotencyKye"/);
		await expect(session.send.prompt("hello", { idempotency_key: "k2" } as never)).rejects.toThrow(/send\.prompt\(input, options\): unknown option "idempotency_key"/);
		await expect(session.state({ timeout: 5 } as never)).rejects.toThrow(/state\(options\): unknown option "timeout"/);
		expect(received.length).toBe(before);
		await session.reject("t1", "not today", { idempotencyKey: "k1" });
		expect(received.slice(before)).toEqual(['/AgentSession/s2/reject {"toolCallId":"t1","reason":"not today"}']);
	});
});

describe("a session id that is not a key", () => {
	it("is refused by client.session with a TypeError naming the argument, before any call could address a session keyed \"undefined\"", () => {
		const client = createSessionClient({ ingressUrl });
		const refusals: [unknown, string][] = [
			[undefined, "got undefined"],
			[123, "got 123"],
			["", 'got ""'],
			[null, "got null"],
			[{ id: "s1" }, 'got {"id":"s1"}'],
		];
		for (const [sessionId, got] of refusals) {
			expect(() => client.session(sessionId as string)).toThrow(TypeError);
			expect(() => client.session(sessionId as string)).toThrow(`agentchart/restate: client.session(sessionId): sessionId must be the session's key, a non-empty string, ${got}`);
		}
		// A URL takes these as steps in its path: every call went to another path ("bad path").
		for (const dots of [".", ".."]) expect(() => client.session(dots)).toThrow(`cannot be a session's key: a URL takes it as a step in its path`);
		expect(client.session("...").sessionId).toBe("...");
		expect(client.session("user-42").sessionId).toBe("user-42");
	});
});

describe("a client made with options no call could go out with", () => {
	it("is refused when it is made, naming the field", () => {
		const refusals: [unknown, RegExp][] = [
			[undefined, /options must be \{ ingressUrl, name\?, headers\?, fetch\? \}, got undefined/],
			[{}, /ingressUrl must be the http\(s\) URL of Restate's ingress, .*got undefined/],
			[{ ingressUrl: "localhost:8080" }, /ingressUrl must be .*got "localhost:8080"/],
			[{ ingressUrl: "127.0.0.1:8080" }, /ingressUrl must be .*got "127.0.0.1:8080"/],
			[{ ingressUrl: 8080 }, /ingressUrl must be .*got 8080/],
			[{ ingressUrl, name: "" }, /name must be the session object's name/],
			[{ ingressUrl, headers: "x-key: 1" }, /headers must be an object/],
			[{ ingressUrl, fetch: "fetch" }, /fetch must be a function/],
		];
		for (const [options, message] of refusals) expect(() => createSessionClient(options as never)).toThrow(message);
		expect(() => createSessionClient({ ingressUrl: "https://restate.example.com:8080/" })).not.toThrow();
	});
});

describe("messages that reach an idle session together", () => {
	const item = (mode: QueuedMessage["mode"], text: string): QueuedMessage => ({ mode, message: { role: "user", content: [{ type: "text", text }], timestamp: 1 } });
	const texts = (items: QueuedMessage[]) => items.map((queued) => (queued.message.content as { text: string }[])[0]?.text);
	const one = { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" } as const;
	const all = { steeringMode: "all", followUpMode: "all" } as const;

	it("start the run as one poll of the queues takes them: steering first, one at a time or all of its kind", () => {
		// A follow-up that arrived first still waits behind a steer, as in a run going on (the first
		// version started with whichever arrived first).
		expect(texts(firstPoll([item("followUp", "F1"), item("steer", "S1"), item("steer", "S2")], one))).toEqual(["S1"]);
		expect(texts(firstPoll([item("followUp", "F1"), item("steer", "S1"), item("followUp", "F2"), item("steer", "S2")], all))).toEqual(["S1", "S2"]);
		expect(texts(firstPoll([item("followUp", "F1"), item("followUp", "F2")], one))).toEqual(["F1"]);
		expect(texts(firstPoll([item("followUp", "F1"), item("followUp", "F2")], all))).toEqual(["F1", "F2"]);
		expect(texts(firstPoll([item("followUp", "F1"), item("steer", "S1"), item("followUp", "F2")], { steeringMode: "one-at-a-time", followUpMode: "all" }))).toEqual(["S1"]);
	});
});
