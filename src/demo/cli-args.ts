/**
 * The demo's command line (`npm start -- <flags>`): parsed strictly, so a typo is an error
 * with the usage instead of a flag silently ignored.
 */

import { splitFlag } from "../util/cli-flag.js";

/** The providers the demo can run on. */
export type DemoProvider = "scripted" | "anthropic" | "openai-compatible";

/** What `npm start -- ...` was asked to do. */
export interface DemoArgs {
	help: boolean;
	/** Unset: Anthropic when ANTHROPIC_API_KEY is set, the scripted model otherwise. */
	provider?: DemoProvider | undefined;
	model?: string | undefined;
	baseUrl?: string | undefined;
	apiKey?: string | undefined;
	prompt?: string | undefined;
	inspect: boolean;
	/** With `inspect`: start the run only once the visualizer page has connected (set only by its flag). */
	waitForPage?: boolean | undefined;
}

/** Printed by `--help` and after a usage error. */
export const DEMO_USAGE = `Usage: npm start -- [options]

Runs one agent turn loop in the terminal: the model answers a question with two tools.

Options:
  --provider <name>   scripted | anthropic | openai-compatible
                      (default: anthropic when ANTHROPIC_API_KEY is set, else scripted)
  --model <id>        the model: a Claude id for anthropic (default claude-haiku-4-5),
                      the server's model name for openai-compatible (required)
  --base-url <url>    openai-compatible: the server's API root,
                      e.g. http://127.0.0.1:11434/v1 (Ollama)
  --api-key <key>     openai-compatible: a key for hosted servers (local ones need none)
  --prompt <text>     the question to ask (default: weather and time in Paris)
  --inspect           serve the live visualizer on 127.0.0.1 and keep it open until Ctrl-C
  --wait-for-page     with --inspect: start the run once the visualizer page has connected
  --help              show this help

Examples:
  npm start
  ANTHROPIC_API_KEY=... npm start -- --model claude-sonnet-4-6
  npm start -- --provider openai-compatible --base-url http://127.0.0.1:11434/v1 --model qwen3:8b
  npm start -- --inspect`;

/** A command line the demo cannot run: the message says why; print it with the usage. */
export class DemoUsageError extends Error {
	override readonly name = "DemoUsageError";
}

const PROVIDERS: readonly string[] = ["scripted", "anthropic", "openai-compatible"] satisfies DemoProvider[];
const VALUE_FLAGS = { "--model": "model", "--base-url": "baseUrl", "--api-key": "apiKey", "--prompt": "prompt" } as const;
type ValueFlag = keyof typeof VALUE_FLAGS;

function isProvider(value: string): value is DemoProvider {
	return PROVIDERS.includes(value);
}

function isValueFlag(flag: string): flag is ValueFlag {
	// Own keys only: `in` also finds "constructor" and "toString", which then went through as flags.
	return Object.hasOwn(VALUE_FLAGS, flag);
}

/**
 * Parses the demo's flags (`--flag value` or `--flag=value`). Throws a {@link DemoUsageError}
 * for an unknown flag, a missing value or an unknown provider.
 *
 * @example
 * parseDemoArgs(["--provider", "openai-compatible", "--base-url=http://127.0.0.1:11434/v1", "--model", "qwen3:8b"]);
 */
export function parseDemoArgs(argv: readonly string[]): DemoArgs {
	const args: DemoArgs = { help: false, inspect: false };
	for (let index = 0; index < argv.length; index++) {
		const arg = argv[index] ?? "";
		const { flag, inline } = splitFlag(arg);
		// A switch takes no value: "--inspect=false" turned the visualizer on.
		if ((flag === "--help" || flag === "--inspect" || flag === "--wait-for-page") && inline !== undefined) throw new DemoUsageError(`${flag} takes no value (got ${arg})`);
		if (flag === "--help" || flag === "-h") args.help = true;
		else if (flag === "--inspect") args.inspect = true;
		else if (flag === "--wait-for-page") args.inspect = args.waitForPage = true;
		else if (flag === "--provider" || isValueFlag(flag)) {
			const value = inline ?? argv[++index];
			if (value === undefined || (inline === undefined && value.startsWith("--"))) throw new DemoUsageError(`${flag} needs a value`);
			// An empty value is none (an empty prompt was sent to the model as an empty message).
			if (value.trim() === "") throw new DemoUsageError(`${flag} needs a value, got an empty one`);
			if (flag !== "--provider") args[VALUE_FLAGS[flag]] = value;
			else if (isProvider(value)) args.provider = value;
			else throw new DemoUsageError(`Unknown provider "${value}": use ${PROVIDERS.join(", ")}`);
		} else throw new DemoUsageError(`Unknown option: ${arg}`);
	}
	return args;
}
