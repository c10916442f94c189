// What a connected chat model threw, as the engine's outcome. This moves bytes only: the status
// and hint headers the client saw, or the network code under the error; the engine decides what
// they mean. Errors arrive wrapped by n8n (NodeApiError: `httpCode` a string, the client's error
// under a non-enumerable `cause`), or raw from a plain LangChain client.
//
// CLIENT_ERROR: where the wrapper keeps the client's error when n8n's own error lost it (n8n 1).
// A Symbol, not `cause`: n8n serializes its errors with `cause` (toJSON), into run data, logs and
// the saved execution, and a vendor's error body may hold whatever it was sent, the key included.
import type { HintHeaders, Outcome } from '../engine';
import { HINT_HEADERS } from '../engineConstants';
import { BODY_EXCERPT_CHARS, bodyExcerpt } from '../transport';

export const CLIENT_ERROR = Symbol("resilient-chat-model: the client error under n8n's");

interface ErrorLike {
	name?: unknown;
	code?: unknown;
	status?: unknown;
	httpCode?: unknown;
	headers?: unknown;
	cause?: unknown;
	[CLIENT_ERROR]?: unknown;
}

/** The errors from the outermost one inwards (n8n's wrapper, the SDK's, fetch's, the socket's). */
function chain(error: unknown): ErrorLike[] {
	const out: ErrorLike[] = [];
	let e = error as ErrorLike | undefined;
	while (e && typeof e === 'object' && out.length < 6 && !out.includes(e)) {
		out.push(e);
		e = (e[CLIENT_ERROR] ?? e.cause) as ErrorLike | undefined;
	}
	return out;
}

function statusOf(e: ErrorLike): number | undefined {
	for (const v of [e.status, e.httpCode]) {
		const n =
			typeof v === 'number' ? v : typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : NaN;
		if (Number.isInteger(n) && n >= 100 && n <= 599) return n;
	}
	return undefined;
}

/** Hint headers from a fetch `Headers` (the SDKs') or a plain object (lower-cased names). */
function hintsOf(chainOfErrors: ErrorLike[]): HintHeaders {
	const headers: HintHeaders = {};
	for (const e of chainOfErrors) {
		const h = e.headers as { get?: (n: string) => string | null } | Record<string, unknown>;
		if (!h || typeof h !== 'object') continue;
		for (const name of HINT_HEADERS) {
			if (headers[name] !== undefined) continue;
			const v =
				typeof h.get === 'function'
					? (h.get as (n: string) => string | null)(name)
					: (h as Record<string, unknown>)[name];
			if (v !== undefined && v !== null) headers[name] = String(v);
		}
	}
	return headers;
}

/** The engine's outcome for an error thrown by a model call. */
export function outcomeOfModelError(error: unknown): Outcome {
	const errors = chain(error);
	for (const e of errors) {
		const status = statusOf(e);
		if (status !== undefined) return { kind: 'status', status, headers: hintsOf(errors) };
	}
	if (errors.some((e) => e.name === 'TimeoutError')) return { kind: 'error', code: 'TIMEOUT' };
	for (const e of errors) {
		if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code))
			return { kind: 'error', code: e.code };
	}
	return { kind: 'error', code: 'EUNKNOWN' };
}

/** What a failed model call said, as the text a vendor's error body would be: each error's
 * message and the vendor's parsed error body (the SDKs' `error`), outermost first. The engine
 * reads it (at most 4 KB) only for its rules on the body, e.g. "context length exceeded". */
export function errorText(error: unknown): string {
	const parts: string[] = [];
	for (const e of chain(error) as Array<ErrorLike & { message?: unknown; error?: unknown }>) {
		if (typeof e.message === 'string' && e.message) parts.push(e.message);
		if (e.error !== undefined && e.error !== null) parts.push(bodyExcerpt(e.error));
	}
	return parts.join('\n').slice(0, BODY_EXCERPT_CHARS);
}

/** A model call that answered: a success, as an HTTP 200 would be. */
export const ANSWERED: Outcome = { kind: 'status', status: 200, headers: {} };
