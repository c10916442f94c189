// One HTTP attempt through n8n's own request helper. The deadline is an abort signal because
// n8n's `timeout` is a socket-idle timeout: a response that trickles a byte a second would
// never hit it. Status codes are returned, never thrown; the engine classifies them.
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
} from 'n8n-workflow';
import type { HintHeaders, Outcome } from './engine';
import { HINT_HEADERS } from './engineConstants';
import type { ProviderRequest } from './params';
import { sendWithCredential, type LoadedCredentials } from './auth';
import { AttemptAbort, Cancelled } from './attemptAbort';

export interface CallResult {
	outcome: Outcome;
	body?: unknown;
	ms: number;
}

export { Cancelled } from './attemptAbort';

export async function callProvider(
	ctx: IExecuteFunctions,
	req: ProviderRequest,
	extraHeaders: IDataObject,
	deadlineMs: number,
	cancel: AbortSignal | undefined,
	credentials: LoadedCredentials = {},
): Promise<CallResult> {
	const abort = new AttemptAbort(cancel);
	abort.after(deadlineMs, 'deadline');
	const started = Date.now();
	try {
		const options: IHttpRequestOptions = {
			method: req.method as IHttpRequestMethods,
			url: req.url,
			qs: req.qs,
			headers: { ...req.headers, ...extraHeaders },
			body: req.body as IDataObject | undefined,
			json: req.body !== undefined,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			timeout: deadlineMs,
			maxRedirects: 5,
			abortSignal: abort.signal,
		};
		const res = (await (req.credentialType
			? sendWithCredential(ctx, req.credentialType, credentials, options)
			: ctx.helpers.httpRequest(options))) as {
			statusCode: number;
			headers: Record<string, unknown>;
			body: unknown;
		};
		const headers: HintHeaders = {};
		for (const h of HINT_HEADERS) {
			const v = res.headers?.[h];
			if (v !== undefined) headers[h] = String(Array.isArray(v) ? v[0] : v);
		}
		return {
			outcome: { kind: 'status', status: res.statusCode, headers },
			body: parseBody(res.body),
			ms: Date.now() - started,
		};
	} catch (error) {
		if (abort.cancelled) throw new Cancelled();
		const code = abort.fired ? 'TIMEOUT' : errorCode(error);
		return { outcome: { kind: 'error', code }, ms: Date.now() - started };
	} finally {
		abort.dispose();
	}
}

function parseBody(body: unknown): unknown {
	if (Buffer.isBuffer(body)) body = body.toString('utf8');
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body);
	} catch {
		return body;
	}
}

/** Node's error code (ECONNRESET, …) wherever n8n's helper or axios put it. A Node socket code
 * anywhere in the cause chain wins over a wrapper's (axios' ERR_*); a body cut off mid-way is
 * reported by axios as ERR_BAD_RESPONSE "stream has been aborted" with no cause: that is the
 * peer resetting the connection, ECONNRESET, which is worth a retry. */
function errorCode(error: unknown): string {
	let e = error as { code?: unknown; cause?: unknown; message?: unknown } | undefined;
	let first: string | undefined;
	let aborted = false;
	for (let depth = 0; e && depth < 5; depth++) {
		if (typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code)) {
			if (/^E[A-Z]+$/.test(e.code)) return e.code; // a socket/DNS code: ECONNRESET, ETIMEDOUT, …
			first ??= e.code;
		}
		if (
			typeof e.message === 'string' &&
			/\b(stream has been aborted|aborted|premature close)\b/i.test(e.message)
		)
			aborted = true;
		e = e.cause as typeof e;
	}
	if (
		aborted &&
		(first === undefined || first === 'ERR_BAD_RESPONSE' || first === 'ERR_STREAM_PREMATURE_CLOSE')
	)
		return 'ECONNRESET';
	return first ?? 'EUNKNOWN';
}

/** The engine reads at most this much of an answer's body (its context-too-long rule). */
export const BODY_EXCERPT_CHARS = 4096;

/** The start of a response body as text: what a vendor's error message is matched in. */
export function bodyExcerpt(body: unknown): string {
	if (body === undefined || body === null) return '';
	if (typeof body === 'string') return body.slice(0, BODY_EXCERPT_CHARS);
	if (Buffer.isBuffer(body)) return body.toString('utf8', 0, BODY_EXCERPT_CHARS);
	try {
		return (JSON.stringify(body) ?? '').slice(0, BODY_EXCERPT_CHARS);
	} catch {
		return ''; // a cyclic or otherwise unprintable value says nothing
	}
}

/** Gives the outcome a `body` the engine reads only for the statuses its rules need: a getter,
 * so a success body is never serialised (this file compares no statuses). */
export function offerBody(outcome: Outcome, body: unknown): void {
	if (outcome.kind !== 'status') return;
	Object.defineProperty(outcome, 'body', {
		get: () => bodyExcerpt(body),
		enumerable: false,
		configurable: true,
	});
}

/** `a.b.0.c` must hold a non-empty value. */
export function missingPath(body: unknown, path: string): boolean {
	let v: unknown = body;
	for (const part of path.split('.')) {
		if (v === null || typeof v !== 'object') return true;
		v = (v as Record<string, unknown>)[part];
	}
	return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}
