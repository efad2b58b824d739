/**
 * The visualizer server against what a real machine throws at it: requests and frames that
 * ended the process serving the agent (a web page can send one of them), a page that stops
 * reading, a page that connects while records wait for the flush, a port already taken.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { type Server, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { MAX_PAGE_BACKLOG_BYTES, attachVisualizer, startVisualizerServer } from "../../src/inspect/visualizer-server.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { withCleanup } from "./browser.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Sends `text` on a fresh connection and resolves with the reply's status line ("" if it closed without one). */
function rawRequest(port: number, text: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const socket = connect(port, "127.0.0.1", () => socket.write(text));
		let reply = "";
		socket.setEncoding("utf8");
		socket.on("data", (chunk: string) => {
			reply += chunk;
			if (reply.includes("\r\n")) {
				socket.destroy();
				resolve(reply.slice(0, reply.indexOf("\r\n")));
			}
		});
		socket.on("close", () => resolve(""));
		socket.on("error", reject);
	});
}

/** A TCP port something else listens on. */
async function takenPort(): Promise<{ port: number; blocker: Server }> {
	const blocker = createServer();
	await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", () => resolve()));
	return { port: (blocker.address() as { port: number }).port, blocker };
}

describe("the visualizer server, hardened", { timeout: 60_000 }, () => {
	it("outlives what any client may send: a target no URL parser takes, a reset after a refusal, a frame no page sends", async () => {
		await withCleanup(async (defer) => {
			// In a process of its own: what this guards against ended the process, and would end the test run's.
			const child = spawn(process.execPath, ["--import", "tsx", "test/visualizer/visualizer-process.ts"], { cwd: ROOT });
			defer(() => child.kill("SIGKILL"));
			let stderr = "";
			child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
			const [first] = (await once(child.stdout, "data")) as [Buffer];
			const port = Number(/port (\d+)/.exec(String(first))?.[1]);
			const host = `Host: 127.0.0.1:${port}\r\n`;
			const upgrade = (path: string) => `GET ${path} HTTP/1.1\r\n${host}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
			const serving = async () => expect(await rawRequest(port, `GET /api/chart HTTP/1.1\r\n${host}Connection: close\r\n\r\n`), stderr).toBe("HTTP/1.1 200 OK");

			// `//`, as a page's `new WebSocket("ws://127.0.0.1:<port>//")` sends it: refused, not thrown on.
			expect(await rawRequest(port, upgrade("//"))).toBe("HTTP/1.1 403 Forbidden");
			expect(await rawRequest(port, `GET /// HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)).toBe("HTTP/1.1 404 Not Found");
			await serving();

			// Refused (403), then reset: the server's socket reads the reset.
			for (let attempt = 0; attempt < 5; attempt++) {
				const socket = connect(port, "127.0.0.1", () => socket.write(upgrade("/elsewhere")));
				socket.on("error", () => {});
				const [reply] = (await once(socket, "data")) as [Buffer];
				expect(String(reply)).toMatch(/^HTTP\/1\.1 403/);
				socket.resetAndDestroy();
				await once(socket, "close");
			}
			await serving();

			// Accepted, then an unmasked frame (a client must mask its frames): that connection is closed.
			const socket = connect(port, "127.0.0.1", () => socket.write(upgrade("/api/live")));
			socket.on("error", () => {});
			const [handshake] = (await once(socket, "data")) as [Buffer];
			expect(String(handshake)).toMatch(/^HTTP\/1\.1 101/);
			socket.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));
			socket.resume();
			await once(socket, "close");
			await serving();
			expect(child.exitCode).toBeNull();
		});
	});

	it("closes a connection that sends more than the page ever sends, instead of taking up to 100 MB a message", async () => {
		await withCleanup(async (defer) => {
			const server = await startVisualizerServer({ inspector: createAgentInspector() });
			defer(() => server.close());
			const client = new WebSocket(`${server.url.replace("http", "ws")}api/live`);
			defer(() => client.terminate());
			await once(client, "message");
			const closed = once(client, "close").then(([code]) => `closed ${String(code)}`);
			const ponged = once(client, "pong").then(() => "still open");
			client.send(Buffer.alloc(64 * 1024));
			client.ping();
			expect(await Promise.race([closed, ponged])).toBe("closed 1009");
		});
	});

	it("disconnects a page that stops reading once it is far behind, and keeps a page that keeps up", async () => {
		await withCleanup(async (defer) => {
			// Replies of 1 MB, kept whole in the records (a user who raised the payload limits to read long
			// results): each run queues a few MB for every page.
			const reply = "x".repeat(1_000_000);
			const scripted = createScriptedModel([], { whenExhausted: { content: reply }, chunkSize: 250_000 });
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			defer(() => agent.dispose());
			const inspector = createAgentInspector({ payload: { stringLength: reply.length, characters: 4 * reply.length } });
			const visualizer = await attachVisualizer(agent.actor, { inspector });
			defer(() => visualizer.close());
			const live = `${visualizer.url.replace("http", "ws")}api/live`;

			const stuck = new WebSocket(live);
			defer(() => stuck.terminate());
			await once(stuck, "message");
			stuck.pause();
			let stuckClosed = false;
			stuck.on("close", () => (stuckClosed = true));

			const reader = new WebSocket(live);
			defer(() => reader.terminate());
			let readerClosed = false;
			reader.on("close", () => (readerClosed = true));
			let runsSeen = 0;
			let runSeen = () => {};
			reader.on("message", (data) => {
				const batch = JSON.parse(String(data)) as InspectionRecord[];
				for (const record of batch) {
					if (record.type === "@agentchart.emitted" && record.event.type === "agent_end") {
						runsSeen++;
						runSeen();
					}
				}
			});
			await once(reader, "message");

			// Enough runs to queue twice the backlog a page is allowed, whatever the kernel holds.
			const runs = Math.ceil((3 * MAX_PAGE_BACKLOG_BYTES) / 3_000_000) + 10;
			for (let run = 1; run <= runs; run++) {
				const seen = new Promise<void>((resolve) => (runSeen = resolve));
				await agent.prompt(`run ${run}`);
				while (runsSeen < run) await seen;
			}

			// The stuck page, reading again, finds its connection closed before the last run reached it.
			let lastRunReached = false;
			stuck.on("message", (data) => {
				if (String(data).includes(`run ${runs}`)) lastRunReached = true;
			});
			const ended = once(stuck, "close");
			stuck.resume();
			await Promise.race([ended, new Promise<void>((resolve) => stuck.on("message", () => lastRunReached && resolve()))]);
			expect(lastRunReached).toBe(false);
			expect(stuckClosed).toBe(true);
			expect(readerClosed).toBe(false);
			expect(runsSeen).toBe(runs);
		});
	});

	it("sends a page that connects while records wait for the flush the history first, each record once", async () => {
		await withCleanup(async (defer) => {
			const scripted = createScriptedModel([{ content: "hello" }, { content: "hello again" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			defer(() => agent.dispose());
			// Flushed by hand only: the run's records are all still waiting when the page connects.
			const inspector = createAgentInspector({ schedule: () => {} });
			const visualizer = await attachVisualizer(agent.actor, { inspector });
			defer(() => visualizer.close());
			await agent.prompt("hi");

			const page = new WebSocket(`${visualizer.url.replace("http", "ws")}api/live`);
			defer(() => page.terminate());
			const batches: InspectionRecord[][] = [];
			page.on("message", (data) => batches.push(JSON.parse(String(data)) as InspectionRecord[]));
			await once(page, "message");
			await agent.prompt("again");
			inspector.flush();
			const closed = once(page, "close");
			// The page has every batch sent before the server's close.
			await visualizer.close();
			await closed;
			const seqs = batches.flat().map((record) => record.seq);
			expect(batches[0]?.some((record) => record.type === "@agentchart.emitted" && record.event.type === "agent_end")).toBe(true);
			expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
		});
	});

	it("leaves nothing attached and no recording behind when its port is taken", async () => {
		await withCleanup(async (defer) => {
			const { port, blocker } = await takenPort();
			defer(() => blocker.close());
			const directory = mkdtempSync(join(tmpdir(), "agentchart-viz-"));
			defer(() => rmSync(directory, { recursive: true, force: true }));
			const scripted = createScriptedModel([{ content: "hello" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			defer(() => agent.dispose());
			const inspector = createAgentInspector();
			const file = join(directory, "run.ndjson");
			await expect(attachVisualizer(agent.actor, { port, inspector, record: file })).rejects.toThrow(/EADDRINUSE/);
			inspector.flush();
			const recordsBefore = inspector.stats.records;
			await agent.prompt("hi");
			inspector.flush();
			expect(inspector.stats.records).toBe(recordsBefore);
			expect(existsSync(file)).toBe(false);
		});
	});
});
