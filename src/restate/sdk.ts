/**
 * The Restate SDK as agentchart/restate uses it: passed in, not imported. The SDK ships two
 * builds, an ES module and a CommonJS one, and each recognises only its own handlers, promises
 * and terminal errors (by classes and symbols of that build): objects made with one build and
 * served by the other fail at the endpoint's start (`prompt is not a restate handler`). So the
 * objects are made with the build the worker serves them with: `agentchart/restate` imported
 * (an ES module worker) passes the SDK's ES module build, and required (a CommonJS worker) its
 * CommonJS build (see `index.cts`).
 */
import type * as Restate from "@restatedev/restate-sdk";

/**
 * The parts of the Restate SDK that the session objects call.
 *
 * @example
 * import * as restate from "@restatedev/restate-sdk";
 * const sdk: RestateSdk = restate;
 */
export type RestateSdk = Pick<typeof Restate, "object" | "handlers" | "TerminalError" | "InvocationIdParser" | "RestatePromise" | "rpc">;

/**
 * A call the session refuses, which retrying cannot help (input the agent cannot take, an
 * approval that is not waiting, a session that would grow over its limit): answered as the SDK's
 * terminal error with `errorCode` (see {@link asTerminalErrorOf}), of whichever build serves it.
 *
 * @example
 * throw new SessionRefusal("agentchart/restate: prompt refused its input: ...", 400);
 */
export class SessionRefusal extends Error {
	constructor(
		message: string,
		readonly errorCode: number,
	) {
		super(message);
		this.name = "SessionRefusal";
	}
}

/**
 * The objects' `asTerminalError` option: a {@link SessionRefusal} becomes the terminal error of
 * the SDK build that serves them (what a handler or a `ctx.run` closure throws passes it).
 *
 * @example
 * sdk.object({ name, handlers, options: { asTerminalError: asTerminalErrorOf(sdk) } });
 */
export function asTerminalErrorOf(sdk: RestateSdk): (error: unknown) => InstanceType<RestateSdk["TerminalError"]> | undefined {
	return (error) => (error instanceof SessionRefusal ? new sdk.TerminalError(error.message, { errorCode: error.errorCode }) : undefined);
}
