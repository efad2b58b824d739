/**
 * What real servers send and the SDK's strict schemas refuse: one tool of a listing with a
 * schema the SDK cannot take, a result with a content kind it does not know, a listing of many
 * pages or one that never ends, an HTTP endpoint that answers the handshake with an error
 * status. Each must cost at most the one tool or call, with a message a person can act on,
 * never the whole server or a page of Zod issues.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { connectMcpServers, type McpProblem, type McpStdioServerConfig } from "../../src/mcp/index.js";
import { loadMcpSdk } from "../../src/mcp/sdk.js";
import { ProcessGroupStdioTransport } from "../../src/mcp/stdio-transport.js";
import { invalidAnswerFor } from "../../src/mcp/invalid-response.js";
import { childPids, Cleanup, textOf, toolNamed, waitUntil } from "./helpers.js";

const RAW_SERVER = fileURLToPath(new URL("./fixtures/raw-server.ts", import.meta.url));
const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

function rawServer(env: Record<string, string>, extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
	return { command: process.execPath, args: ["--import", "tsx", RAW_SERVER], env, stderr: "ignore", reconnect: false, ...extra };
}

async function connect(env: Record<string, string>, extra: Partial<McpStdioServerConfig> = {}) {
	const problems: McpProblem[] = [];
	const mcp = await connectMcpServers({ servers: { raw: rawServer(env, extra) }, onProblem: (problem) => problems.push(problem) });
	cleanup.add(() => mcp.close());
	return { mcp, problems };
}

const objectSchema = { type: "object", properties: { text: { type: "string" } } };

describe("a listing with tools the SDK's schemas refuse", () => {
	it("leaves out and reports only the broken tools; the output-schema tool is called and its text kept", async () => {
		const tools = [
			{ name: "echo", inputSchema: objectSchema },
			// The SDK's ListToolsResultSchema wants type "object" at the root.
			{ name: "list", inputSchema: { type: "array" } },
			// Ajv cannot compile this output schema, which made the SDK's listTools throw.
			{ name: "typo", inputSchema: objectSchema, outputSchema: { type: "object", properties: { a: { type: "nonsense" } } } },
			// Declares an output schema and answers with text only, which the SDK's callTool turns into an error.
			{ name: "report", inputSchema: objectSchema, outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
			{ nameless: true },
		];
		const { mcp, problems } = await connect({ RAW_TOOLS: JSON.stringify(tools) });
		expect(mcp.tools().map((tool) => tool.name)).toEqual(["raw__echo", "raw__typo", "raw__report"]);
		expect(problems.map((problem) => [problem.kind, problem.tool])).toEqual([["invalid-schema", "list"]]);
		expect(textOf(await toolNamed(mcp, "raw__typo").execute("c1", { text: "a" }))).toBe("a");
		expect(textOf(await toolNamed(mcp, "raw__report").execute("c2", { text: "three" }))).toBe("three");
		expect(mcp.status()[0]).toMatchObject({ state: "ready", toolCount: 3, listedToolCount: 4 });
	}, 20_000);
});

describe("results the SDK's CallToolResultSchema refuses", () => {
	it("map unknown content kinds, an image without data and content that is not a list to notes, as documented", async () => {
		const results = {
			video: { content: [{ type: "text", text: "before" }, { type: "video", url: "https://example.com/v.mp4" }] },
			half: { content: [{ type: "image", mimeType: "image/png" }] },
			flat: { content: "just a string" },
		};
		const tools = Object.keys(results).map((name) => ({ name, inputSchema: objectSchema }));
		const { mcp } = await connect({ RAW_TOOLS: JSON.stringify(tools), RAW_RESULTS: JSON.stringify(results) });
		expect(textOf(await toolNamed(mcp, "raw__video").execute("c1", {}))).toBe('before\n[unsupported MCP content of type "video"]');
		expect(textOf(await toolNamed(mcp, "raw__half").execute("c2", {}))).toBe("[image without data, not shown]");
		expect(textOf(await toolNamed(mcp, "raw__flat").execute("c3", {}))).toBe('[malformed MCP result: its content is not a list ("just a string")]');
	}, 20_000);
});

describe("answers that are not valid JSON-RPC", () => {
	// The SDK drops such a line on stdio, and with its own time limit off the call waited for
	// ever (through an agent, until the tool's timeout: 180 s by default).
	const cases: Array<[string, string, string]> = [
		["a string result", '{"jsonrpc":"2.0","id":__ID__,"result":"done"}', "its result is a string, not an object"],
		["a null result", '{"jsonrpc":"2.0","id":__ID__,"result":null}', "its result is null, not an object"],
		["an array result", '{"jsonrpc":"2.0","id":__ID__,"result":[{"type":"text","text":"hi"}]}', "its result is an array, not an object"],
		["neither result nor error", '{"jsonrpc":"2.0","id":__ID__}', "it has neither a result nor an error"],
		["an error code that is a string", '{"jsonrpc":"2.0","id":__ID__,"error":{"code":"E_LOCKED","message":"locked"}}', 'its error\'s code is "E_LOCKED", not an integer'],
		["an error without a message", '{"jsonrpc":"2.0","id":__ID__,"error":{"code":-32000}}', "its error's message is missing, not a string"],
		["JSON-RPC 1.0", '{"jsonrpc":"1.0","id":__ID__,"result":{"content":[]}}', 'its "jsonrpc" is "1.0", not "2.0"'],
		["no jsonrpc", '{"id":__ID__,"result":{"content":[]}}', 'its "jsonrpc" is missing, not "2.0"'],
	];
	it.each(cases)("fail the call at once on stdio, saying what is wrong: %s", async (_, answer, problem) => {
		const { mcp } = await connect({ RAW_ANSWERS: JSON.stringify({ echo: answer }) });
		const error = await toolNamed(mcp, "raw__echo")
			.execute("c1", { text: "a" })
			.catch((caught: unknown) => caught);
		expect((error as Error).message).toMatch(/^MCP server "raw": MCP error -32603: the server's answer is not a valid JSON-RPC 2\.0 response: /);
		expect((error as Error).message).toContain(`${problem}: ${answer.replaceAll("__ID__", "2")}`);
		// One bad answer costs the call, not the server.
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 20_000);

	it("fail the call at once on stdio when its answer is not JSON at all (cut short), saying so", async () => {
		// A line that names "jsonrpc" and the call's id but does not parse: it waited for ever before.
		const cut = '{"jsonrpc":"2.0","id":__ID__,"result":{"content":[{"type":"text","text":"cut"}]';
		const { mcp } = await connect({ RAW_ANSWERS: JSON.stringify({ echo: cut }) });
		const error = await toolNamed(mcp, "raw__echo")
			.execute("c1", { text: "a" }, AbortSignal.timeout(10_000))
			.catch((caught: unknown) => caught);
		expect((error as Error).message).toBe(`MCP server "raw": MCP error -32603: the server's answer is not JSON: ${cut.replace("__ID__", "2")}`);
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 20_000);

	it("read an answer sent as a JSON-RPC batch on stdio (MCP 2025-03-26 allows batches)", async () => {
		const batch = '[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},{"jsonrpc":"2.0","id":__ID__,"result":{"content":[{"type":"text","text":"batched"}]}}]';
		const { mcp } = await connect({ RAW_ANSWERS: JSON.stringify({ echo: batch }) });
		expect(textOf(await toolNamed(mcp, "raw__echo").execute("c1", { text: "a" }, AbortSignal.timeout(10_000)))).toBe("batched");
	}, 20_000);

	it("read no id from inside an answer cut short: a result's own ids name other calls", () => {
		// Before: the first "id" anywhere was taken, and a running call numbered 1 was failed.
		expect(invalidAnswerFor('{"result":{"structuredContent":{"rows":[{"id":1}]}},"jsonrpc":"2.0","id":7')).toBeUndefined();
		expect(invalidAnswerFor('{"jsonrpc":"2.0","id":7,"result":{"rows":[{"id":1}')).toMatchObject({ id: 7, error: { code: -32603 } });
		expect(invalidAnswerFor('{"jsonrpc":"2.0","id":"a-1","result":{')).toMatchObject({ id: "a-1" });
	});

	it("skip a line of deeply nested brackets on stdio, and answer the call after it (it overflowed the stack and ended the process)", async () => {
		const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
		const { mcp } = await connect({ RAW_ANSWERS: JSON.stringify({ echo: `${deep}\n[[{"jsonrpc":"2.0","id":__ID__,"result":{}}]]\n{"jsonrpc":"2.0","id":__ID__,"result":{"content":[{"type":"text","text":"after"}]}}` }) });
		expect(textOf(await toolNamed(mcp, "raw__echo").execute("c1", { text: "a" }, AbortSignal.timeout(10_000)))).toBe("after");
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 20_000);

	it("a log line on stdout is still skipped, and the call answered after it", async () => {
		const { mcp } = await connect({ RAW_ANSWERS: JSON.stringify({ echo: 'not json\n{"jsonrpc":"2.0","method":"odd"\n{"jsonrpc":"2.0","id":__ID__,"result":{"content":[{"type":"text","text":"after"}]}}' }) });
		expect(textOf(await toolNamed(mcp, "raw__echo").execute("c1", { text: "a" }))).toBe("after");
	}, 20_000);
});

describe("large messages on stdio", () => {
	it("take a 12 MB result (the SDK's ReadBuffer allows 10 MiB, and ended the connection, blaming the server)", async () => {
		const { mcp } = await connect({});
		const result = await toolNamed(mcp, "raw__echo").execute("c1", { n: 12_000_000 });
		expect(textOf(result)).toHaveLength(12_000_000);
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 30_000);

	it("end the connection above the limit, saying so rather than 'the server process exited'", async () => {
		const sdk = await loadMcpSdk();
		const errors: string[] = [];
		const transport = new ProcessGroupStdioTransport(
			sdk,
			{ command: process.execPath, args: ["-e", `process.stdout.write("x".repeat(3000)); setInterval(() => {}, 1000)`], onStderr: () => undefined },
			1000,
		);
		cleanup.add(() => transport.close());
		transport.onerror = (error) => errors.push(error.message);
		const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
		await transport.start();
		await closed;
		expect(transport.failure).toBe("the server sent a message of more than 1000 bytes (the most one stdio message may bring); the connection was closed");
		expect(errors).toEqual([transport.failure]);
	}, 20_000);
});

describe("a stdio server that closes its output and keeps running", () => {
	it("is ended and reported as lost, where it stayed 'ready' and every call waited for the tool timeout", async () => {
		const sdk = await loadMcpSdk();
		const errors: string[] = [];
		const transport = new ProcessGroupStdioTransport(sdk, { command: process.execPath, args: ["-e", `require("node:fs").closeSync(1); setInterval(() => {}, 1000)`], onStderr: () => undefined });
		cleanup.add(() => transport.close());
		transport.onerror = (error) => errors.push(error.message);
		const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
		await transport.start();
		await closed;
		expect(transport.failure).toBe("the server closed its output (stdout) and had not exited 500 ms later: it could not answer again, so the connection was closed");
		expect(errors).toEqual([transport.failure]);
		expect(transport.pid).toBeNull();
	}, 20_000);

	it("a server that exits is still reported by its exit, not as a closed output", async () => {
		const sdk = await loadMcpSdk();
		const transport = new ProcessGroupStdioTransport(sdk, { command: process.execPath, args: ["-e", `process.stdout.write("bye\\n"); process.exit(3)`], onStderr: () => undefined });
		cleanup.add(() => transport.close());
		const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
		await transport.start();
		await closed;
		// Longer than the moment the exit is given after the output's end.
		await new Promise((resolve) => setTimeout(resolve, 700));
		expect(transport.failure).toBeUndefined();
	}, 20_000);
});

describe("tool listings of several pages", () => {
	it("lists fifteen pages without leaving an abort listener a page on one signal (no MaxListenersExceededWarning)", async () => {
		const warnings: string[] = [];
		const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
		process.on("warning", onWarning);
		cleanup.add(async () => void process.off("warning", onWarning));
		const tools = Array.from({ length: 15 }, (_, index) => ({ name: `t${index}`, inputSchema: objectSchema }));
		const { mcp } = await connect({ RAW_TOOLS: JSON.stringify(tools), RAW_PAGES: "one" });
		expect(mcp.tools()).toHaveLength(15);
		// Warnings are emitted on the next tick.
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(warnings.filter((warning) => warning.startsWith("MaxListenersExceededWarning"))).toEqual([]);
	}, 20_000);

	it("fails at once, saying why, when the server sends a cursor it sent before (rather than 'no answer' after connectTimeoutMs)", async () => {
		const started = Date.now();
		await expect(connect({ RAW_PAGES: "loop" }, { connectTimeoutMs: 20_000 })).rejects.toThrow(/tool listing does not end: it sent the cursor "again" a second time/);
		expect(Date.now() - started).toBeLessThan(15_000);
	}, 30_000);
});

describe("an HTTP endpoint that answers the handshake with an error status", () => {
	let server: Server | undefined;
	afterEach(async () => {
		server?.closeAllConnections();
		await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
		server = undefined;
	});

	async function serve(status: number, contentType: string, body: string): Promise<string> {
		server = createServer((request, response) => {
			request.resume();
			request.on("end", () => response.writeHead(status, { "content-type": contentType }).end(body));
		});
		await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
		return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp?api_key=secret`;
	}

	it("reports a 401 with its status and body, not 'the server closed the connection', and keeps the query's key out", async () => {
		const url = await serve(401, "application/json", JSON.stringify({ error: "invalid_token" }));
		const error = await connectMcpServers({ servers: { web: { url, reconnect: false } } }).catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(Error);
		const message = (error as Error).message;
		expect(message).toContain('"web": 401 Unauthorized from http://127.0.0.1:');
		expect(message).toContain('/mcp: {"error":"invalid_token"}');
		expect(message).not.toContain("secret");
	}, 20_000);

	it("reports a gateway's HTML page by its visible text", async () => {
		const url = await serve(502, "text/html", "<html><head><title>x</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>");
		await expect(connectMcpServers({ servers: { web: { url, reconnect: false } } })).rejects.toThrow(
			/"web": 502 Bad Gateway from http:\/\/127\.0\.0\.1:\d+\/mcp: an HTML page, not MCP's JSON \(a proxy or gateway in front of the server\?\): "502 Bad Gateway nginx"/,
		);
	}, 20_000);
});

describe("an HTTP endpoint whose answer to a call is not MCP's JSON", () => {
	let server: Server | undefined;
	afterEach(async () => {
		server?.closeAllConnections();
		await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
		server = undefined;
	});

	const answer = (response: ServerResponse, id: number, result: unknown) =>
		response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" }).end(JSON.stringify({ jsonrpc: "2.0", id, result }));

	/**
	 * A Streamable HTTP endpoint answering with plain JSON, as the transport allows: the handshake
	 * and a listing of one `echo` tool as a server would, each `tools/call` as `onCall` says.
	 */
	async function serveJson(onCall: (response: ServerResponse, id: number) => void): Promise<string> {
		const listening = createServer((request, response) => {
			let body = "";
			request.on("data", (chunk: Buffer) => (body += chunk.toString()));
			request.on("end", () => {
				if (request.method !== "POST") return void response.writeHead(request.method === "DELETE" ? 200 : 405).end();
				const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
				if (message.id === undefined) return void response.writeHead(202).end();
				if (message.method === "tools/call") return onCall(response, message.id);
				const result =
					message.method === "initialize"
						? { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "gateway", version: "1.0.0" } }
						: message.method === "tools/list"
							? { tools: [{ name: "echo", inputSchema: objectSchema }] }
							: {};
				answer(response, message.id, result);
			});
		});
		server = listening;
		await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
		return `http://127.0.0.1:${(listening.address() as AddressInfo).port}/mcp`;
	}

	it("fails a call the server accepted and never answers (an event stream that ends without the answer, a 202) at once, not when the tool timeout ends it", async () => {
		// Before, each call waited for an answer that could not come: until toolTimeoutMs, or for ever with 0.
		const url = await serveJson((response) => {
			if (calls++ === 0) {
				response.writeHead(200, { "content-type": "text/event-stream" }).write(": working\n\n");
				setTimeout(() => response.end(), 20);
			} else response.writeHead(202).end();
		});
		let calls = 0;
		const mcp = await connectMcpServers({ servers: { web: { url, reconnect: false } } });
		cleanup.add(() => mcp.close());
		for (const why of ["ended its response without answering it", "accepted the request (202) without answering it"]) {
			const error = await toolNamed(mcp, "web__echo")
				.execute("c1", { text: "a" }, AbortSignal.timeout(10_000))
				.catch((caught: unknown) => caught);
			expect((error as Error).message).toBe(`MCP server "web": MCP error -32603: the server ${why}; whether a tool it was asked to call ran is unknown`);
		}
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 20_000);

	it("says an event stream's answer was unreadable, not that the server sent none", async () => {
		const url = await serveJson((response, id) => {
			response.writeHead(200, { "content-type": "text/event-stream" }).end(`event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[\n\n`);
		});
		const mcp = await connectMcpServers({ servers: { web: { url, reconnect: false } } });
		cleanup.add(() => mcp.close());
		const error = await toolNamed(mcp, "web__echo")
			.execute("c1", { text: "a" }, AbortSignal.timeout(10_000))
			.catch((caught: unknown) => caught);
		expect((error as Error).message).toMatch(
			/^MCP server "web": MCP error -32603: the server ended its response without a readable answer \(an event's data is not JSON: \{"jsonrpc":"2\.0","id":\d+,"result":\{"content":\[\); whether a tool it was asked to call ran is unknown$/,
		);
	}, 20_000);

	it("fails the call with the page's status and visible text, not kilobytes of markup for the model", async () => {
		// Streamable HTTP answered with plain JSON, as the transport allows; tools/call meets the gateway.
		const url = await serveJson((response) => {
			const page = `<html><head><title>502</title><style>body { margin: 0 }</style></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.25.3</center>${" ".repeat(4000)}</body></html>`;
			response.writeHead(502, { "content-type": "text/html" }).end(page);
		});
		const mcp = await connectMcpServers({ servers: { web: { url, reconnect: false } } });
		cleanup.add(() => mcp.close());
		const error = await toolNamed(mcp, "web__echo")
			.execute("c1", { text: "a" })
			.catch((caught: unknown) => caught);
		expect((error as Error).message).toBe(
			`MCP server "web": 502 Bad Gateway from ${url}: an HTML page, not MCP's JSON (a proxy or gateway in front of the server?): "502 Bad Gateway nginx/1.25.3"`,
		);
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 20_000);

	it("fails a call whose answer is not valid JSON-RPC in one line, not a page of the SDK's schema issues", async () => {
		const url = await serveJson((response, id) => answer(response, id, "done"));
		const mcp = await connectMcpServers({ servers: { web: { url, reconnect: false } } });
		cleanup.add(() => mcp.close());
		const error = await toolNamed(mcp, "web__echo")
			.execute("c1", { text: "a" })
			.catch((caught: unknown) => caught);
		expect((error as Error).message).toMatch(/^MCP server "web": the server's answer is not a valid JSON-RPC 2\.0 response: [^\n]+$/);
		expect(mcp.status()[0]).toMatchObject({ state: "ready" });
	}, 20_000);
});

describe("toolTimeoutMs", () => {
	it("0 becomes each tool's timeoutMs 0 (the agent's 'no limit'), not the agent's default", async () => {
		const { mcp } = await connect({}, { toolTimeoutMs: 0 });
		expect(toolNamed(mcp, "raw__echo").timeoutMs).toBe(0);
	}, 20_000);

	it.each([[-1], ["300"], [Number.NaN]])("%s is refused before any server starts, naming the server", async (value) => {
		const config = { ...rawServer({}), toolTimeoutMs: value as number };
		await expect(connectMcpServers({ servers: { raw: config } })).rejects.toThrow(/^connectMcpServers: server "raw": toolTimeoutMs must be a number of at least 0, got /);
		expect(childPids()).toEqual([]);
	});
});

describe("configurations read from JSON, unchecked", () => {
	it("refuses args given as one string (it was spread into its letters, one argument each), before any server starts", async () => {
		const config = { ...rawServer({}), args: "--import tsx server.ts" } as unknown as McpStdioServerConfig;
		await expect(connectMcpServers({ servers: { raw: config } })).rejects.toThrow('connectMcpServers: server "raw": args must be a list of strings, got "--import tsx server.ts"');
		expect(childPids()).toEqual([]);
	});

	it.each([
		["localhost:3000/mcp", ': use http://localhost:3000/mcp'],
		["127.0.0.1:3000/mcp", ": use http://127.0.0.1:3000/mcp"],
		["ftp://example.com/mcp", ""],
		// Probe AY (2026-12-07): "not a url" was told to "use http://not a url".
		["not a url", ""],
	])("refuses the url %s, which has no http:// or https:// scheme (it failed as 'fetch failed (unknown scheme)')", async (url, hint) => {
		await expect(connectMcpServers({ servers: { web: { url } } })).rejects.toThrow(`connectMcpServers: server "web": url must be an http:// or https:// URL, got ${JSON.stringify(url)}${hint}`);
	});

	it.each([
		[{ servers: { web: null } }, 'connectMcpServers: server "web" must be a configuration object ({ command, args } or { url }), got null'],
		[{ servers: { web: "npx server" } }, 'connectMcpServers: server "web" must be a configuration object ({ command, args } or { url }), got "npx server"'],
		[{ mcpServers: {} }, 'connectMcpServers: no option "mcpServers" (its options: servers, clientInfo, onProblem, signal); a configuration file\'s "mcpServers" goes in as servers: connectMcpServers({ servers: file.mcpServers })'],
		[{ servers: {}, onProblems: () => undefined }, 'connectMcpServers: no option "onProblems" (its options: servers, clientInfo, onProblem, signal)'],
		[{ servers: [] }, "connectMcpServers: servers must be an object of server configurations by name, got []"],
		[{ servers: {}, onProblem: "warn" }, 'connectMcpServers: onProblem must be a function, got "warn"'],
		[undefined, "connectMcpServers: options must be an object such as { servers: { name: { command, args } } }, got undefined"],
	])("refuses %o, naming what is wrong, before any server starts", async (options, message) => {
		await expect(connectMcpServers(options as never)).rejects.toThrow(new TypeError(message));
		expect(childPids()).toEqual([]);
	});
});

describe("a server that crashes right after it is ready", () => {
	it("is not restarted at the first delay for ever: its attempts count on, and it ends failed after maxAttempts", async () => {
		// Before, each attempt that reached ready started the count over: restarted about every 100 ms, never failed.
		const { mcp } = await connect({ RAW_EXIT_AFTER_LIST_MS: "50" }, { reconnect: { initialDelayMs: 50, maxDelayMs: 400, maxAttempts: 3 } });
		const pids = new Set<number>();
		await waitUntil(
			() => {
				const status = mcp.status()[0];
				if (status?.pid !== undefined) pids.add(status.pid);
				return status?.state === "failed";
			},
			30_000,
			"the crashing server to be given up on",
		);
		expect(mcp.status()[0]).toMatchObject({ state: "failed", attempts: 3 });
		expect(pids.size).toBeLessThanOrEqual(4);
	}, 40_000);
});

