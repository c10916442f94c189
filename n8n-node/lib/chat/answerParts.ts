// What a connected model's answer (an AIMessage, or a stream's merged chunks) says of itself, as
// each LangChain vendor package puts it: its text, its tool calls, its finish word and a refusal.
// Read as they came; the engine decides what a cut, filtered, refused or empty answer means.
import type { BaseMessage, BaseMessageLike } from '@langchain/core/messages';
import {
	answerJson,
	FINAL_ANSWER_TOOL,
	finalAnswerArgs,
	type Parsed,
} from '../answerCheck/answerJson';
import type { AnswerParts } from '../answerCheck/facts';
import { parseAsParser, parserInput, type ParserReading } from '../answerCheck/parserReading';
import { repairPrompt, type Miss } from '../answerCheck/repair';

type Bag = Record<string, unknown>;
const bag = (v: unknown): Bag => (v !== null && typeof v === 'object' ? (v as Bag) : {});
const word = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The finish word where each package leaves it: OpenAI, Groq (`finish_reason`), Anthropic
 * (`stop_reason`, in additional_kwargs when streamed), Gemini and Mistral (`finishReason`),
 * Ollama (`done_reason`), Bedrock (`stopReason`, `messageStop.stopReason` streamed), OpenAI's
 * Responses API (`incomplete_details.reason`). */
function finishOf(m: BaseMessage): string | null {
	const meta = bag((m as { response_metadata?: unknown }).response_metadata);
	const extra = bag(m.additional_kwargs);
	return (
		word(meta.finish_reason) ??
		word(meta.stop_reason) ??
		word(meta.finishReason) ??
		word(meta.done_reason) ??
		word(meta.stopReason) ??
		word(bag(meta.messageStop).stopReason) ??
		word(bag(meta.incomplete_details).reason) ??
		word(extra.stop_reason) ??
		null
	);
}

/** A message's text: its content, or its text parts joined (tool calls and reasoning left out). */
export function textOf(m: BaseMessage): string {
	if (typeof m.content === 'string') return m.content;
	return (m.content ?? [])
		.map((p) => (typeof p === 'string' ? p : p.type === 'text' ? String(p.text ?? '') : ''))
		.join('');
}

/** `parser`: how the root node's output parser will read the answer, where one was found. */
export function chatAnswerParts(m: BaseMessage, parser?: ParserReading): AnswerParts {
	const calls = (
		(m as { tool_calls?: { name?: string; args?: unknown }[] }).tool_calls ?? []
	).filter(Boolean);
	const final = calls.find((c) => c.name === FINAL_ANSWER_TOOL);
	const refusal = word(bag(m.additional_kwargs).refusal);
	return {
		text: textOf(m),
		toolCalls: calls.length,
		finish: finishOf(m),
		refusal: refusal !== undefined && refusal.trim() !== '',
		// Under an AI Agent with structured output the answer is its final-answer tool call; under
		// a chain with n8n's Structured Output Parser, its text. Read as that parser will read it
		// (its fence, its wrapper required), so a pass is an answer it takes; with no parser found,
		// the wrapper (`output`) is taken off where there is one. The schema is the user's.
		json: (): Parsed => {
			if (parser)
				return parseAsParser(
					final ? JSON.stringify(final.args) : parserInput(textOf(m), parser),
					parser,
				);
			if (final) return { ok: true, value: finalAnswerArgs(final.args) };
			const parsed = answerJson(textOf(m));
			return parsed.ok ? { ok: true, value: finalAnswerArgs(parsed.value) } : parsed;
		},
	};
}

/** What a model's answer off the schema said, as its repair round quotes it back: its text, or
 * the JSON of its final-answer tool call. */
export function missText(p: AnswerParts): string {
	if (p.text.trim() !== '') return p.text;
	const json = p.json?.();
	return json?.ok ? JSON.stringify(json.value) : '';
}

/** The repair round's two turns, as message-likes LangChain coerces (no import of its classes:
 * the connected models bring n8n's own copy). */
export function repairTurn(miss: Miss): BaseMessageLike[] {
	return [
		{ role: 'assistant', content: miss.text },
		{ role: 'user', content: repairPrompt(miss.errors) },
	];
}
