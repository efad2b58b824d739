import type { ImageContent, TextContent } from "../types/content.js";
import type { AgentToolResult } from "../types/agent.js";
import type { McpResourceReference, McpToolResultDetails } from "./types.js";
import { isRecord } from "../util/json-values.js";

/**
 * MCP tool results → agentchart tool results. Models here read text and images only, so
 * every other kind of content becomes a short text note for the model, with the data itself
 * kept in `details` for the application. Input is read defensively: a server may send
 * content kinds newer than this code.
 */

/**
 * A `tools/call` result as the wire carries it, read as plain data.
 *
 * @example
 * const raw: McpCallResult = { content: [{ type: "text", text: "no such file" }], isError: true };
 * const { isError } = mapCallToolResult(raw, "files", "read"); // true
 */
export interface McpCallResult {
	content?: unknown;
	structuredContent?: unknown;
	isError?: unknown;
	_meta?: unknown;
}

/**
 * A mapped result, and whether the server flagged it as an error (`isError`).
 *
 * @example
 * const { result, isError }: MappedMcpResult = mapCallToolResult({ content: [{ type: "text", text: "3" }] }, "calc", "add");
 */
export interface MappedMcpResult {
	result: AgentToolResult<McpToolResultDetails>;
	isError: boolean;
}

function text(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

/** A value as short JSON, for a note about something malformed. */
function excerptJson(value: unknown): string {
	const json = JSON.stringify(value) ?? String(value);
	return json.length > 80 ? `${json.slice(0, 80)}…` : json;
}

/** Bytes encoded by a base64 string, for notes such as "1234 bytes". */
function base64Bytes(data: string): number {
	const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
	return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function describeResource(uri: string, mimeType: string | undefined): string {
	return mimeType ? `${uri} (${mimeType})` : uri;
}

/** Appends the model-facing blocks of one MCP content block; data the model cannot read goes to `details`. */
function mapBlock(block: unknown, out: (TextContent | ImageContent)[], details: McpToolResultDetails): void {
	// A server bug each, but a block the model never sees, or sees as empty, reads as "nothing there".
	if (!isRecord(block)) {
		out.push({ type: "text", text: `[malformed MCP content: ${excerptJson(block)}]` });
		return;
	}
	const type = block["type"];
	if (type === "text") {
		const value = block["text"];
		out.push({ type: "text", text: typeof value === "string" ? value : `[malformed MCP text: ${excerptJson(value)}]` });
		return;
	}
	if (type === "image") {
		const data = text(block["data"]);
		const mimeType = text(block["mimeType"]);
		if (data !== undefined && mimeType !== undefined) out.push({ type: "image", data, mimeType });
		// A server bug, but the model must not read an empty result as "nothing there".
		else out.push({ type: "text", text: `[image without ${data === undefined ? "data" : "a MIME type"}, not shown]` });
		return;
	}
	if (type === "audio") {
		const data = text(block["data"]) ?? "";
		const mimeType = text(block["mimeType"]) ?? "application/octet-stream";
		details.audio.push({ data, mimeType });
		out.push({ type: "text", text: `[audio (${mimeType}), ${base64Bytes(data)} bytes, not shown]` });
		return;
	}
	if (type === "resource_link") {
		const uri = text(block["uri"]) ?? "";
		const name = text(block["name"]);
		const mimeType = text(block["mimeType"]);
		const description = text(block["description"]);
		const reference: McpResourceReference = { kind: "link", uri };
		if (name !== undefined) reference.name = name;
		if (mimeType !== undefined) reference.mimeType = mimeType;
		details.resources.push(reference);
		const label = name ? `${name}: ` : "";
		out.push({ type: "text", text: `[resource link ${label}${describeResource(uri, mimeType)}${description ? ` - ${description}` : ""}]` });
		return;
	}
	if (type === "resource") {
		const resource = isRecord(block["resource"]) ? block["resource"] : {};
		const uri = text(resource["uri"]) ?? "";
		const mimeType = text(resource["mimeType"]);
		const body = text(resource["text"]);
		const blob = text(resource["blob"]);
		const reference: McpResourceReference = { kind: "embedded", uri };
		if (mimeType !== undefined) reference.mimeType = mimeType;
		if (body !== undefined) reference.text = body;
		if (blob !== undefined) reference.blob = blob;
		details.resources.push(reference);
		if (body !== undefined) {
			out.push({ type: "text", text: `[resource ${describeResource(uri, mimeType)}]\n${body}` });
		} else if (blob !== undefined && mimeType?.startsWith("image/")) {
			out.push({ type: "image", data: blob, mimeType });
		} else {
			out.push({ type: "text", text: `[resource ${describeResource(uri, mimeType)}, ${base64Bytes(blob ?? "")} bytes of binary data, not shown]` });
		}
		return;
	}
	out.push({ type: "text", text: `[unsupported MCP content of type ${JSON.stringify(type)}]` });
}

/**
 * Maps a `tools/call` result: text and images as they are; audio, resource links and
 * embedded resources as text notes (an embedded text resource with its text, an embedded
 * image as an image); `structuredContent` into `details`, and as JSON text when the result
 * has no content at all.
 *
 * @example
 * mapCallToolResult({ content: [{ type: "text", text: "3" }], structuredContent: { sum: 3 } }, "calc", "add");
 * // { result: { content: [{ type: "text", text: "3" }], details: { kind: "result", server: "calc", tool: "add",
 * //   structuredContent: { sum: 3 }, resources: [], audio: [] } }, isError: false }
 */
export function mapCallToolResult(raw: McpCallResult, server: string, tool: string): MappedMcpResult {
	const details: McpToolResultDetails = { kind: "result", server, tool, resources: [], audio: [] };
	if (isRecord(raw.structuredContent)) details.structuredContent = raw.structuredContent;
	if (isRecord(raw._meta)) details.meta = raw._meta;
	const content: (TextContent | ImageContent)[] = [];
	if (Array.isArray(raw.content)) for (const block of raw.content) mapBlock(block, content, details);
	// A server bug, read leniently like the rest; but an empty result would read as "nothing there".
	else if (raw.content !== undefined) content.push({ type: "text", text: `[malformed MCP result: its content is not a list (${excerptJson(raw.content)})]` });
	if (content.length === 0 && details.structuredContent !== undefined) {
		content.push({ type: "text", text: JSON.stringify(details.structuredContent) });
	}
	return { result: { content, details }, isError: raw.isError === true };
}

/**
 * The text of a result, for an error message: text blocks as they are, images as a note.
 *
 * @example
 * resultText({ content: [{ type: "text", text: "Not found" }], details }); // "Not found"
 */
export function resultText(result: AgentToolResult<unknown>): string {
	return result.content.map((block) => (block.type === "text" ? block.text : `[image (${block.mimeType})]`)).join("\n");
}
