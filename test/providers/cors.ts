/** CORS for the local test servers, so that a page from another origin (test/browser) can call them. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Options of a test server. */
export interface TestServerOptions {
	/**
	 * Answers as a server a web page may call from another origin: CORS preflights are answered
	 * (and not recorded), every response allows any origin.
	 */
	cors?: boolean;
}

/** Answers a CORS preflight; otherwise adds the allow-origin header to the response to come. */
export function answeredPreflight(req: IncomingMessage, res: ServerResponse): boolean {
	res.setHeader("access-control-allow-origin", "*");
	res.setHeader("access-control-expose-headers", "*");
	if (req.method !== "OPTIONS") return false;
	res.writeHead(204, { "access-control-allow-methods": "POST, GET", "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "*", "access-control-max-age": "600" });
	res.end();
	return true;
}
