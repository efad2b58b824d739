// A client call that never got a session's answer: nothing listening at the ingress (Restate not
// started yet, or restarting), or something in front of it answering with a page. Each used to
// surface as what fetch or JSON.parse threw ("fetch failed", "Unexpected token '<'"), naming
// neither the call nor the URL, and not telling a retry loop that the call may be sent again.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionClient, SessionCallError, SessionUnreachableError, watchSession } from "../../src/restate/client.js";

/** A port nobody listens on: taken from the system, then let go. */
async function deadPort(): Promise<number> {
	const probe = createServer();
	await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
	const { port } = probe.address() as AddressInfo;
	await new Promise<void>((resolve) => probe.close(() => resolve()));
	return port;
}

let deadUrl = "";
let pageUrl = "";
let page: Server;

beforeAll(async () => {
	deadUrl = `http://127.0.0.1:${await deadPort()}`;
	// A login page in front of the ingress: 200, and HTML.
	page = createServer((request, response) => {
		request.resume();
		request.on("end", () => {
			response.writeHead(200, { "content-type": "text/html" });
			response.end("<html><body>Please sign in</body></html>");
		});
	});
	await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
	pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
});
afterAll(async () => {
	await new Promise<void>((resolve) => page.close(() => resolve()));
});

async function rejection(call: () => Promise<unknown>): Promise<unknown> {
	try {
		await call();
	} catch (error) {
		return error;
	}
	throw new Error("the call resolved");
}

describe("a client whose ingress does not answer", () => {
	it("says which call could not reach which URL, and why, for every kind of call", async () => {
		const client = createSessionClient({ ingressUrl: deadUrl });
		const session = client.session("user-42");
		const calls: [string, () => Promise<unknown>][] = [
			["prompt on session \"user-42\"", () => session.prompt("hello")],
			["approve (send) on session \"user-42\"", () => session.send.approve("toolu_1")],
			["state on session \"user-42\"", () => session.state()],
			['result of invocation "inv_1"', () => client.result({ invocationId: "inv_1" })],
		];
		for (const [what, call] of calls) {
			const error = await rejection(call);
			expect(error).toBeInstanceOf(SessionUnreachableError);
			const unreachable = error as SessionUnreachableError;
			expect(unreachable.message).toContain(what);
			expect(unreachable.message).toContain("ECONNREFUSED");
			expect(unreachable.message).toContain("idempotencyKey");
			expect(unreachable.url.startsWith(deadUrl)).toBe(true);
			expect(unreachable.cause).toBeInstanceOf(TypeError);
		}
	});

	it("leaves the caller's own abort an AbortError", async () => {
		const session = createSessionClient({ ingressUrl: deadUrl }).session("s");
		const error = await rejection(() => session.prompt("hello", { signal: AbortSignal.abort() }));
		expect(error).not.toBeInstanceOf(SessionUnreachableError);
		expect((error as Error).name).toBe("AbortError");
	});

	it("says a 200 that is not JSON did not come from Restate, showing the start of the page", async () => {
		const error = await rejection(() => createSessionClient({ ingressUrl: pageUrl }).session("s").state());
		expect(error).toBeInstanceOf(SessionUnreachableError);
		expect(error).not.toBeInstanceOf(SessionCallError);
		expect((error as Error).message).toContain("state on session \"s\"");
		expect((error as Error).message).toContain("not JSON");
		expect((error as Error).message).toContain("Please sign in");
	});

	it("watchSession says the event hub could not be reached, and ends quietly when its signal aborts", async () => {
		const error = await rejection(async () => {
			for await (const _ of watchSession(deadUrl, "s")) break;
		});
		expect(error).toBeInstanceOf(SessionUnreachableError);
		expect((error as Error).message).toContain("ECONNREFUSED");
		// A listener sent nothing: the advice for a call ("whether it ran is unknown") does not fit it.
		expect((error as Error).message).not.toContain("idempotencyKey");
		expect((error as Error).message).not.toContain("whether it ran");
		expect((error as Error).message).toMatch(/^agentchart\/restate: watchSession\("http:\/\/127\.0\.0\.1:\d+"\): could not reach http:\/\/127\.0\.0\.1:\d+\/events \(connect ECONNREFUSED [^)]+\); is the event hub running there\? Watch again once it is \(events sent meanwhile are lost: a session's state has its transcript\)$/);
		const seen: unknown[] = [];
		for await (const envelope of watchSession(deadUrl, "s", AbortSignal.abort())) seen.push(envelope);
		expect(seen).toEqual([]);
	});
});
