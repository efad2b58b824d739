import { request } from "node:http";
import { WebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { type VisualizerServer, attachVisualizer, startVisualizerServer } from "../../src/inspect/visualizer-server.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { Agent } from "../../src/agent.js";
import { parseVisualizeArgs } from "../../visualizer/server.js";

/** GET with an explicit Host (and Origin) header (fetch does not let tests forge one). */
function get(url: string, host?: string, origin?: string): Promise<{ status: number; type: string; body: string }> {
	return new Promise((resolve, reject) => {
		const target = new URL(url);
		const headers = { ...(host ? { host } : {}), ...(origin ? { origin } : {}) };
		const req = request({ host: target.hostname, port: target.port, path: target.pathname, headers }, (res) => {
			let body = "";
			res.setEncoding("utf8");
			res.on("data", (chunk: string) => (body += chunk));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body }));
		});
		req.on("error", reject);
		req.end();
	});
}

let server: VisualizerServer | undefined;
afterEach(async () => {
	await server?.close();
	server = undefined;
});

describe("the visualizer server", () => {
	it("listens on 127.0.0.1 only and serves the page, its script and the chart", async () => {
		server = await startVisualizerServer({ inspector: createAgentInspector() });
		expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
		const page = await get(server.url);
		expect(page.status).toBe(200);
		expect(page.body).toContain('<script type="module" src="/app.js">');
		expect(page.body).not.toMatch(/https?:\/\//);
		const styles = await get(`${server.url}app.css`);
		expect(styles.type).toContain("text/css");
		expect(styles.body).toContain("svg.chart");
		const script = await get(`${server.url}app.js`);
		expect(script.type).toContain("javascript");
		expect(script.body).toContain("ChartView");
		expect(script.body).not.toMatch(/from\s+["']https?:/);
		const chart = JSON.parse((await get(`${server.url}api/chart`)).body) as { graph: { machineId: string }; layout: { states: unknown[] }; mode: string };
		expect(chart.graph.machineId).toBe("agent");
		expect(chart.layout.states.length).toBeGreaterThan(10);
		expect(chart.mode).toBe("live");
	});

	it("refuses other Host headers (DNS rebinding)", async () => {
		server = await startVisualizerServer({ inspector: createAgentInspector() });
		expect((await get(server.url, "evil.example:80")).status).toBe(403);
		expect((await get(`${server.url}api/chart`, `localhost:${server.port}`)).status).toBe(200);
	});

	it("refuses pages of other sites: requests and WebSocket upgrades with a foreign Origin (cross-site WebSocket hijacking)", async () => {
		server = await startVisualizerServer({ inspector: createAgentInspector() });
		expect((await get(`${server.url}api/chart`, undefined, "http://evil.example")).status).toBe(403);
		expect((await get(`${server.url}api/chart`, undefined, `http://127.0.0.1:${server.port}`)).status).toBe(200);
		const live = `${server.url.replace("http", "ws")}api/live`;
		const opened = (origin: string) =>
			new Promise<string>((resolve) => {
				const socket = new WebSocket(live, { origin });
				socket.once("open", () => {
					socket.close();
					resolve("open");
				});
				socket.once("unexpected-response", (_request, response) => resolve(`refused ${response.statusCode}`));
				socket.once("error", (error) => resolve(`error ${error.message}`));
			});
		expect(await opened("http://evil.example")).toBe("refused 403");
		expect(await opened(`http://localhost:${server.port}`)).toBe("open");
	});

	it("on port 80 takes the Host and Origin a browser sends there, without the port (where it may listen on 80)", async (context) => {
		try {
			server = await startVisualizerServer({ inspector: createAgentInspector(), port: 80 });
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code === "EACCES" || code === "EADDRINUSE") return context.skip(`port 80 is not available here (${code})`);
			throw error;
		}
		expect((await get(`${server.url}api/chart`, "127.0.0.1")).status).toBe(200);
		expect((await get(`${server.url}api/chart`, "localhost", "http://localhost")).status).toBe(200);
		expect((await get(`${server.url}api/chart`, "127.0.0.1:80", "http://127.0.0.1")).status).toBe(200);
		expect((await get(`${server.url}api/chart`, "evil.example")).status).toBe(403);
		expect((await get(`${server.url}api/chart`, "127.0.0.1", "http://evil.example")).status).toBe(403);
	});

	it("streams the history and then live records over the WebSocket", async () => {
		const scripted = createScriptedModel([{ content: "hello there" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const visualizer = await attachVisualizer(agent.actor);
		const batches: InspectionRecord[][] = [];
		const socket = new WebSocket(`${visualizer.url.replace("http", "ws")}api/live`);
		let ended = () => {};
		const agentEnd = new Promise<void>((resolve) => (ended = resolve));
		socket.on("message", (data) => {
			const batch = JSON.parse(String(data)) as InspectionRecord[];
			batches.push(batch);
			if (batch.some((record) => record.type === "@agentchart.emitted" && record.event.type === "agent_end")) ended();
		});
		await new Promise((resolve) => socket.once("open", resolve));
		await agent.prompt("hi");
		// Records reach the socket after the inspector's next flush: wait for the run's end to arrive.
		await agentEnd;
		socket.close();
		await visualizer.close();
		expect(batches[0]?.[0]).toMatchObject({ type: "@xstate.actor", name: "agent" });
		const emitted = batches.flat().filter((record) => record.type === "@agentchart.emitted").map((record) => (record as { event: { type: string } }).event.type);
		expect(emitted).toContain("agent_end");
	});

	it("tells when a page has connected (live) or fetched the recording (replay)", async () => {
		server = await startVisualizerServer({ inspector: createAgentInspector() });
		let connected = false;
		void server.waitForPage().then(() => (connected = true));
		await get(`${server.url}api/chart`);
		expect(connected).toBe(false);
		const socket = new WebSocket(`${server.url.replace("http", "ws")}api/live`);
		const history = new Promise((resolve) => socket.once("message", resolve));
		await server.waitForPage();
		await history;
		socket.close();
		await server.close();
		server = await startVisualizerServer({ replay: [] });
		let fetched = false;
		const opened = server.waitForPage().then(() => (fetched = true));
		// The chart alone is not a page that has the recording.
		await get(`${server.url}api/chart`);
		await new Promise((resolve) => setImmediate(resolve));
		expect(fetched).toBe(false);
		await get(`${server.url}api/recording`);
		await opened;
		expect(fetched).toBe(true);
	});

	it("serves a recording in replay mode", async () => {
		const records = [{ type: "@xstate.actor", seq: 1 }] as unknown as InspectionRecord[];
		server = await startVisualizerServer({ replay: records });
		const chart = JSON.parse((await get(`${server.url}api/chart`)).body) as { mode: string };
		expect(chart.mode).toBe("replay");
		expect(JSON.parse((await get(`${server.url}api/recording`)).body)).toEqual(records);
	});
});

describe("waitForPage", () => {
	it("rejects once the server is closed with no page opened (it waited for ever)", async () => {
		const server = await startVisualizerServer({ replay: [] });
		const waiting = server.waitForPage();
		await server.close();
		await expect(waiting).rejects.toThrow(/closed before a page opened/);
		await expect(server.waitForPage()).rejects.toThrow(/closed before a page opened/);
	});
});

describe("npm run visualize arguments", () => {
	it("reads --replay, --record and --port", () => {
		expect(parseVisualizeArgs(["--replay", "run.ndjson", "--port=4777"])).toEqual({ replay: "run.ndjson", port: 4777 });
		expect(parseVisualizeArgs(["--record", "out.ndjson"])).toEqual({ record: "out.ndjson" });
		expect(parseVisualizeArgs(["--record=run=2.ndjson"])).toEqual({ record: "run=2.ndjson" });
		expect(parseVisualizeArgs(["--replay=a=b.ndjson"])).toEqual({ replay: "a=b.ndjson" });
		expect(() => parseVisualizeArgs(["--port", "web"])).toThrow(/port/);
		for (const odd of ["0x10", "1e3", "0b1", " 80", "4777.0", "-1", "65536"]) expect(() => parseVisualizeArgs(["--port", odd]), odd).toThrow(`--port needs a port number, got ${odd}`);
		expect(() => parseVisualizeArgs(["--nope"])).toThrow(/Unknown option/);
	});

	it("refuses a flag without its value, and a replay that would record (a bare --replay started the live demo)", () => {
		expect(() => parseVisualizeArgs(["--replay"])).toThrow("--replay needs a recording's file name");
		expect(() => parseVisualizeArgs(["--replay", "--port", "4777"])).toThrow("--replay needs a recording's file name");
		expect(() => parseVisualizeArgs(["--port="])).toThrow("--port needs a port number");
		expect(() => parseVisualizeArgs(["--record="])).toThrow("--record needs a file name to record to");
		expect(() => parseVisualizeArgs(["--replay", "a.ndjson", "--record", "b.ndjson"])).toThrow(/do not go together/);
	});
});
