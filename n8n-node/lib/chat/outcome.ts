// What a connected chat model threw, as the engine's outcome: the error's facts, unread
// (errorFacts.ts); the engine decides what they mean. Errors arrive wrapped by n8n
// (NodeApiError: `httpCode` a string, the client's error under a non-enumerable `cause`), or raw
// from a plain LangChain client.
import type { AnswerFacts, Outcome, OutcomeFacts, UsageFacts } from '../engine';
import { BODY_LIMIT } from '../engineConstants';
import { CLIENT_ERROR, errorChain, factsOfError } from '../errorFacts';
import { bodyExcerpt } from '../transport';

export { CLIENT_ERROR };

/** The engine's outcome for an error thrown by a model call. */
export function outcomeOfModelError(error: unknown): OutcomeFacts {
	return factsOfError(error);
}

/** What a failed model call said, as the text a vendor's error body would be: each error's
 * message and the vendor's parsed error body (the SDKs' `error`), outermost first. The engine
 * reads it (at most BODY_LIMIT) only for its rules on the body, e.g. "context length exceeded". */
export function errorText(error: unknown): string {
	const parts: string[] = [];
	for (const e of errorChain(error) as Array<{ message?: unknown; error?: unknown }>) {
		if (typeof e.message === 'string' && e.message) parts.push(e.message);
		if (e.error !== undefined && e.error !== null) parts.push(bodyExcerpt(e.error));
	}
	return parts.join('\n').slice(0, BODY_LIMIT);
}

/** A model call that answered (the engine reads an answer without a status as a success), with
 * what the Answer Check read of it (none: it checks nothing) and the usage it reported. */
export const answered = (
	answer: AnswerFacts | undefined,
	usage?: UsageFacts,
	longestGapMs?: number,
): Outcome => {
	const outcome: OutcomeFacts = { kind: 'facts', answered: true };
	if (answer) outcome.answer = answer;
	if (usage) outcome.usage = usage;
	if (longestGapMs !== undefined) outcome.longest_gap_ms = longestGapMs;
	return outcome;
};
