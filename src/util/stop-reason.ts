import type { StopReason } from "../types/content.js";

/**
 * Whether a model reply that stopped for `stopReason` failed: it ended as an error or was
 * aborted. Its tool calls never run, providers leave it out of later requests, and its last line
 * may be unfinished (the model was cut off).
 *
 * @example
 * if (failedStop(message.stopReason)) console.error(message.errorMessage);
 */
export function failedStop(stopReason: StopReason): stopReason is "error" | "aborted" {
	return stopReason === "error" || stopReason === "aborted";
}
