/**
 * A command-line argument split into its flag and the value written after its first "=", the
 * one rule both of our command lines (`npm start`, `npm run visualize`) read flags by.
 *
 * Only at the first "=": a value may hold one (`--record=run=2.ndjson`). An argument that is not
 * a `--flag` is left whole, so an error can name it as given.
 *
 * @example
 * splitFlag("--record=run=2.ndjson"); // { flag: "--record", inline: "run=2.ndjson" }
 * splitFlag("--port"); // { flag: "--port", inline: undefined }
 */
export function splitFlag(arg: string): { flag: string; inline: string | undefined } {
	const equals = arg.indexOf("=");
	if (!arg.startsWith("--") || equals < 0) return { flag: arg, inline: undefined };
	return { flag: arg.slice(0, equals), inline: arg.slice(equals + 1) };
}
