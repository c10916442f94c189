// The tokens an answer reports, as its vendor counted them, in one shape for the engine: OpenAI's
// `usage` (and every vendor of its dialect), Anthropic's `usage`, Gemini's `usageMetadata`,
// Ollama's eval counts and LangChain's `usage_metadata` on a chat model's message. Only reads:
// what a call used, what it costs (a cache write above plain input) and what it settles are the
// engine's.
import type { UsageFacts } from '../engine';

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | undefined =>
	v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const count = (v: unknown): number | undefined =>
	typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;

/** The usage in `source` (a vendor's answer body, a usage object itself, or a LangChain message),
 * or undefined when it reports none. `output` includes reasoning tokens; `cached_input` is part
 * of `input`. */
export function usageOf(source: unknown): UsageFacts | undefined {
	const o = obj(source);
	if (!o) return undefined;
	return (
		langChain(obj(o.usage_metadata)) ??
		gemini(obj(o.usageMetadata) ?? o) ??
		openAi(obj(o.usage) ?? o) ??
		anthropic(obj(o.usage) ?? o) ??
		ollama(o) ??
		langChainResponse(obj(obj(o.response_metadata)?.tokenUsage))
	);
}

/** Usage whose input and output counts are `u[input]` and `u[output]`, with the paths to their
 * cached and reasoning parts where the shape has them. */
function counted(
	u: Obj | undefined,
	input: string,
	output: string,
	parts?: { cached: [string, string]; reasoning: [string, string] },
): UsageFacts | undefined {
	const i = count(u?.[input]);
	const o = count(u?.[output]);
	if (!u || i === undefined || o === undefined) return undefined;
	if (!parts) return { input: i, output: o };
	const at = ([a, b]: [string, string]) => count(obj(u[a])?.[b]) ?? 0;
	return { input: i, output: o, cached_input: at(parts.cached), reasoning: at(parts.reasoning) };
}

/** LangChain's usage_metadata (input counts its cache reads and writes, output its reasoning). */
function langChain(u: Obj | undefined): UsageFacts | undefined {
	const usage = counted(u, 'input_tokens', 'output_tokens', {
		cached: ['input_token_details', 'cache_read'],
		reasoning: ['output_token_details', 'reasoning'],
	});
	const written = count(obj(u?.input_token_details)?.cache_creation);
	return usage && written ? { ...usage, cache_write: written } : usage;
}

/** OpenAI: prompt_tokens with its cached part, completion_tokens with its reasoning. */
const openAi = (u: Obj) =>
	counted(u, 'prompt_tokens', 'completion_tokens', {
		cached: ['prompt_tokens_details', 'cached_tokens'],
		reasoning: ['completion_tokens_details', 'reasoning_tokens'],
	});

/** Anthropic: input_tokens leaves out what was read from and written to the cache. */
function anthropic(u: Obj): UsageFacts | undefined {
	const plain = count(u.input_tokens);
	const output = count(u.output_tokens);
	if (plain === undefined || output === undefined) return undefined;
	const read = count(u.cache_read_input_tokens) ?? 0;
	const written = count(u.cache_creation_input_tokens) ?? 0;
	return {
		input: plain + read + written,
		output,
		cached_input: read,
		...(written ? { cache_write: written } : {}),
	};
}

/** Gemini: the thoughts are counted apart from the candidates; both are output. */
function gemini(u: Obj): UsageFacts | undefined {
	const input = count(u.promptTokenCount);
	if (input === undefined) return undefined;
	const thoughts = count(u.thoughtsTokenCount) ?? 0;
	return {
		input,
		output: (count(u.candidatesTokenCount) ?? 0) + thoughts,
		cached_input: count(u.cachedContentTokenCount) ?? 0,
		reasoning: thoughts,
	};
}

/** Ollama's own API: the prompt's and the answer's eval counts. */
const ollama = (o: Obj) => counted(o, 'prompt_eval_count', 'eval_count');

/** An older LangChain message: response_metadata.tokenUsage. */
const langChainResponse = (u: Obj | undefined) => counted(u, 'promptTokens', 'completionTokens');

/** A streamed answer's usage so far plus a chunk's (vendors report it in parts: Anthropic's
 * input at the start, its output at the end; OpenAI's all in the last chunk). */
export function addUsage(
	sum: UsageFacts | undefined,
	more: UsageFacts | undefined,
): UsageFacts | undefined {
	if (!more) return sum;
	if (!sum) return { ...more };
	return {
		input: sum.input + more.input,
		output: sum.output + more.output,
		cached_input: (sum.cached_input ?? 0) + (more.cached_input ?? 0),
		reasoning: (sum.reasoning ?? 0) + (more.reasoning ?? 0),
		...(sum.cache_write || more.cache_write
			? { cache_write: (sum.cache_write ?? 0) + (more.cache_write ?? 0) }
			: {}),
	};
}
