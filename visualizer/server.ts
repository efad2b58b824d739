/**
 * `npm run visualize`: the visualizer on 127.0.0.1.
 *
 *   npm run visualize                          live: a scripted demo agent runs a prompt every few seconds
 *   npm run visualize -- --replay run.ndjson   replay a recording (play / pause / step in the page)
 *   npm run visualize -- --record run.ndjson   live, and record to NDJSON for replay
 *   npm run visualize -- --port 4777           a fixed port (default: a free one)
 */
import { Agent } from "../src/agent.js";
import { clockTool, weatherTool } from "../src/demo/tools.js";
import { type ScriptedReplyFactory, createScriptedModel, text, thinking, toolCall } from "../src/providers/scripted.js";
import { readRecording } from "../src/inspect/sinks.js";
import { attachVisualizer, startVisualizerServer } from "../src/inspect/visualizer-server.js";
import { splitFlag } from "../src/util/cli-flag.js";

/** Command-line options of `npm run visualize`. */
export interface VisualizeArgs {
	replay?: string | undefined;
	record?: string | undefined;
	port?: number | undefined;
}

/**
 * Parses `--replay <file>`, `--record <file>` and `--port <n>` (also `--flag=value`).
 *
 * @example
 * parseVisualizeArgs(["--replay", "run.ndjson"]); // { replay: "run.ndjson" }
 */
export function parseVisualizeArgs(argv: readonly string[]): VisualizeArgs {
	const args: VisualizeArgs = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] ?? "";
		const { flag, inline } = splitFlag(arg);
		// A flag without its value (at the end, before another flag, or `--port=`) is refused: taken as
		// nothing, `--replay` started the live demo instead and `--port=` a random port.
		const value = (what: string): string => {
			const given = inline ?? (argv[i + 1]?.startsWith("--") ? undefined : argv[++i]);
			if (given === undefined || given.trim() === "") throw new Error(`${flag} needs ${what}`);
			return given;
		};
		if (flag === "--replay") args.replay = value("a recording's file name");
		else if (flag === "--record") args.record = value("a file name to record to");
		else if (flag === "--port") {
			const given = value("a port number");
			// Digits only: Number() also reads "0x10", "1e3" and " 80", which nobody means as a port.
			const port = /^\d{1,5}$/.test(given) ? Number(given) : Number.NaN;
			if (!Number.isInteger(port) || port > 65535) throw new Error(`--port needs a port number, got ${given}`);
			args.port = port;
		} else throw new Error(`Unknown option ${arg}. Use --replay <file>, --record <file>, --port <n>.`);
	}
	if (args.replay !== undefined && args.record !== undefined) throw new Error("--replay and --record do not go together: a replay records nothing");
	return args;
}

/**
 * The demo agent `npm run visualize` shows: a scripted model that thinks, calls two tools in
 * parallel and answers, paced slowly enough to watch.
 *
 * @example
 * const agent = createDemoAgent();
 * await agent.prompt("Weather and time in Paris?");
 */
export function createDemoAgent(): Agent {
	// Each call decides from the transcript: after tool results it answers, otherwise it
	// calls the tools for the city in the last user message. Enough entries for a long demo.
	const reply: ScriptedReplyFactory = (context) => {
		const last = context.messages[context.messages.length - 1];
		if (last?.role === "toolResult") return { content: "Both lookups finished: it is mild and it is noon-ish. Anything else?" };
		const question = JSON.stringify(last?.content ?? "");
		const city = question.includes("Tokyo") ? "Tokyo" : "Paris";
		return {
			content: [
				thinking(`Weather and local time for ${city}: two independent lookups, run them in parallel.`),
				text("Checking both."),
				toolCall("get_weather", { city }),
				toolCall("get_time", { city }),
			],
		};
	};
	const scripted = createScriptedModel(Array.from({ length: 10_000 }, () => reply), { chunkSize: 5, delayMs: 40 });
	return new Agent({
		initialState: { model: scripted.model, systemPrompt: "You are a concise assistant.", tools: [weatherTool, clockTool] },
		streamFn: scripted.streamFn,
	});
}

async function main(): Promise<void> {
	const args = parseVisualizeArgs(process.argv.slice(2));
	if (args.replay) {
		const records = await readRecording(args.replay);
		const server = await startVisualizerServer({ replay: records, ...(args.port !== undefined ? { port: args.port } : {}) });
		console.log(`agentchart visualizer (replay of ${records.length} records): ${server.url}`);
		return;
	}
	const agent = createDemoAgent();
	const visualizer = await attachVisualizer(agent.actor, {
		...(args.port !== undefined ? { port: args.port } : {}),
		...(args.record ? { record: args.record } : {}),
	});
	console.log(`agentchart visualizer (live demo): ${visualizer.url}`);
	if (args.record) console.log(`recording to ${args.record}`);
	const close = async () => {
		await visualizer.close();
		agent.dispose();
		process.exit(0);
	};
	process.once("SIGINT", () => void close());
	process.once("SIGTERM", () => void close());
	const cities = ["Paris", "Tokyo"];
	for (let round = 0; ; round++) {
		await new Promise((resolve) => setTimeout(resolve, 2500));
		await agent.prompt(`What's the weather and the time in ${cities[round % cities.length]}?`);
	}
}

if (import.meta.url === `file://${process.argv[1]}`) {
	main().catch((error: unknown) => {
		console.error(error instanceof Error ? error.message : error);
		process.exit(1);
	});
}
