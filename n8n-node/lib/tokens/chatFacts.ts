// A chat model call's facts for the engine's token estimate, one per connected model: the
// conversation's text and that model's own output maximum.
import type { BaseMessage } from '@langchain/core/messages';
import { textFacts, type TokenFacts } from './requestFacts';

const whole = (v: unknown): number | undefined =>
	typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;

export function chatTokenFacts(messages: BaseMessage[], models: object[]): TokenFacts[] {
	const text = messages
		.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
		.join('\n');
	// OpenAI's and Anthropic's clients call it maxTokens, Gemini's maxOutputTokens.
	const size = textFacts(text);
	return models
		.map(
			(m) => m as { maxTokens?: unknown; maxOutputTokens?: unknown; maxCompletionTokens?: unknown },
		)
		.map((m) => ({
			...size,
			maxOutput: whole(m.maxTokens) ?? whole(m.maxCompletionTokens) ?? whole(m.maxOutputTokens),
		}));
}
