/**
 * `streamProxy` with `proxyUrl` or `authToken` missing, as when they come from an environment
 * variable that is not set. The types say string; JavaScript passes undefined. The URL was read
 * before the call's error handling began: the call rejected unhandled (which ends a Node
 * process) and `result()` never settled. A missing token went out as "Bearer undefined".
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getModel } from "../../src/providers/models.js";
import { streamProxy, type ProxyStreamOptions } from "../../src/providers/proxy.js";

let requests = 0;
const server = createServer((_request, response) => {
	requests++;
	response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "Invalid token" }));
});
let url = "";

beforeAll(async () => {
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	server.closeAllConnections();
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

const model = getModel("anthropic", "claude-haiku-4-5");
const context = { messages: [{ role: "user" as const, content: "hi", timestamp: 1 }] };

/** Settles the call, or fails the test when `result()` does not settle. */
async function settle(options: Partial<Record<keyof ProxyStreamOptions, unknown>>) {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const unsettled = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error("result() did not settle within 5 s")), 5_000);
	});
	try {
		return await Promise.race([streamProxy(model, context, options as unknown as ProxyStreamOptions).result(), unsettled]);
	} finally {
		clearTimeout(timer);
	}
}

describe("streamProxy without its connection settings", () => {
	it("ends the reply with an error naming proxyUrl when it is undefined, instead of rejecting unhandled", async () => {
		const reply = await settle({ proxyUrl: undefined, authToken: "token" });
		expect(reply.stopReason).toBe("error");
		expect(reply.errorMessage).toBe('options.proxyUrl must be the proxy server\'s URL (e.g. "https://genai.example.com"), got undefined');
	});

	it("ends the reply with an error naming authToken when it is undefined, before any request", async () => {
		const before = requests;
		const reply = await settle({ proxyUrl: url, authToken: undefined });
		expect(reply.stopReason).toBe("error");
		expect(reply.errorMessage).toBe('options.authToken must be a string (sent as "Authorization: Bearer <authToken>"), got undefined');
		expect(requests).toBe(before);
	});

	it("still sends an empty token, which a proxy without authentication may take", async () => {
		const before = requests;
		const reply = await settle({ proxyUrl: url, authToken: "" });
		expect(requests).toBe(before + 1);
		expect(reply.errorMessage).toBe("Proxy error: 401 Unauthorized: Invalid token");
	});
});
