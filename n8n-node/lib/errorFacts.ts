// What a thrown error left behind, as the engine's `facts` outcome: the status as it came, and
// the codes, messages and class names down its cause chain, outermost first, unread. Which of
// them decides (a socket code under a wrapper's, n8n's message texts, a class-only "5XX") is the
// engine's call (src/facts/error_facts.rs); nothing here filters or maps them.
//
// CLIENT_ERROR: where the chat model's wrapper keeps the client's error when n8n's own error lost
// it (n8n 1). A Symbol, not `cause`: n8n serializes its errors with `cause` (toJSON), into run
// data, logs and the saved execution, and a vendor's error body may hold whatever it was sent.
import type { HintHeaders, OutcomeFacts } from './engine';
import { ROW_SEPARATOR } from './engineConstants';
import { hintHeaders } from './hintHeaders';

export const CLIENT_ERROR = Symbol("resilient-chat-model: the client error under n8n's");

export interface ErrorLike {
	name?: unknown;
	code?: unknown;
	message?: unknown;
	status?: unknown;
	statusCode?: unknown;
	/** ollama-js's ResponseError keeps its status here, and only here. */
	status_code?: unknown;
	/** An AWS SDK v3 error (Bedrock's): the status in its response metadata. */
	$metadata?: { httpStatusCode?: unknown };
	httpCode?: unknown;
	headers?: unknown;
	response?: unknown;
	cause?: unknown;
	[CLIENT_ERROR]?: unknown;
}

/** The errors from the outermost one inwards (n8n's wrapper, the SDK's, fetch's, the socket's). */
export function errorChain(error: unknown): ErrorLike[] {
	const out: ErrorLike[] = [];
	let e = error as ErrorLike | undefined;
	while (e && typeof e === 'object' && out.length < 6 && !out.includes(e)) {
		out.push(e);
		e = (e[CLIENT_ERROR] ?? e.cause) as ErrorLike | undefined;
	}
	return out;
}

/** Hint headers left on the errors or their responses, outermost first. */
const hintsOf = (errors: ErrorLike[]): HintHeaders =>
	hintHeaders(...errors.flatMap((e) => [e.headers, ((e.response ?? {}) as ErrorLike).headers]));

const texts = (values: unknown[]) =>
	values.filter((v): v is string => typeof v === 'string' && v !== '');

/** Joined as the engine reads them: one text, ROW_SEPARATOR between entries; none when empty. */
const joined = (values: string[]) => (values.length ? values.join(ROW_SEPARATOR) : undefined);

/** The engine's outcome for a thrown error (and, for n8n's error items, its extra `details`). */
export function factsOfError(error: unknown, extra: ErrorLike[] = []): OutcomeFacts {
	const errors = [...errorChain(error), ...extra];
	const response = (e: ErrorLike) => (e.response ?? {}) as ErrorLike;
	return {
		kind: 'facts',
		// Every status field as text: the engine takes the first that reads as a status.
		status: joined(
			errors
				.flatMap((e) => [
					e.status,
					e.httpCode,
					e.statusCode,
					e.status_code,
					e.$metadata?.httpStatusCode,
					response(e).status,
				])
				.filter((v) => typeof v === 'number' || typeof v === 'string')
				.map(String),
		),
		codes: joined(texts(errors.map((e) => e.code))),
		messages: joined(texts(errors.map((e) => (typeof e === 'string' ? e : e.message)))),
		names: joined(texts(errors.map((e) => e.name))),
		headers: hintsOf(errors),
	};
}
