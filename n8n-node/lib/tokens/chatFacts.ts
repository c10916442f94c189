// A chat model call's facts for the engine's token estimate: the conversation's text and the
// largest output maximum among the connected models (the call may go to any of them).
import type { BaseMessage } from '@langchain/core/messages';
import { textFacts, type TokenFacts } from './requestFacts';

const whole = (v: unknown): number | undefined =>
	typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;

export function chatTokenFacts(messages: BaseMessage[], models: object[]): TokenFacts {
	const text = messages
		.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
		.join('\n');
	// OpenAI's and Anthropic's clients call it maxTokens, Gemini's maxOutputTokens.
	const maxima = models
		.map(
			(m) => m as { maxTokens?: unknown; maxOutputTokens?: unknown; maxCompletionTokens?: unknown },
		)
		.map((m) => whole(m.maxTokens) ?? whole(m.maxCompletionTokens) ?? whole(m.maxOutputTokens))
		.filter((n): n is number => n !== undefined);
	return { ...textFacts(text), maxOutput: maxima.length ? Math.max(...maxima) : undefined };
}
