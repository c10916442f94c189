// OpenAI's refusal over Chat Completions, kept where LangChain's Responses API path puts it
// (`additional_kwargs.refusal`), so the engine hears it on every path: @langchain/openai's Chat
// Completions converters (1.1.3 in n8n 1, 1.4.4 in n8n 2) drop `message.refusal` and
// `delta.refusal`, and a model that refused would read as an empty answer (counted against it).
// Every ChatOpenAI-based model goes through them: n8n's OpenAI Chat Model with the Responses API
// off, Azure OpenAI, DeepSeek, OpenRouter, xAI Grok and the other OpenAI-compatible ones. The
// vendor's words are passed on as they came; streamed, LangChain joins the deltas' parts.

const KEPT = Symbol('resilient-chat-model keeps refusals');

type Convert = (source: unknown, ...rest: unknown[]) => unknown;

/** The converters a ChatOpenAICompletions client calls for each answer and each delta. */
const CONVERTERS = [
	'_convertCompletionsMessageToBaseMessage',
	'_convertCompletionsDeltaToBaseMessageChunk',
] as const;

type Client = { [K in (typeof CONVERTERS)[number]]?: Convert } & { [KEPT]?: true };

function refusalOf(source: unknown): string | undefined {
	const refusal = (source as { refusal?: unknown } | null)?.refusal;
	return typeof refusal === 'string' && refusal !== '' ? refusal : undefined;
}

/** `client`'s Chat Completions converters (where it has them) also keep the refusal. Once per
 * client; anything else is left alone. */
export function keepRefusal(client: unknown): void {
	if (!client || typeof client !== 'object') return;
	const c = client as Client;
	if (c[KEPT]) return;
	let kept = false;
	for (const name of CONVERTERS) {
		const original = c[name];
		if (typeof original !== 'function') continue;
		c[name] = function (this: unknown, source: unknown, ...rest: unknown[]) {
			const message = original.call(this, source, ...rest) as {
				additional_kwargs?: Record<string, unknown>;
			};
			const refusal = refusalOf(source);
			if (refusal !== undefined && message?.additional_kwargs)
				message.additional_kwargs.refusal = refusal;
			return message;
		};
		kept = true;
	}
	if (kept) Object.defineProperty(c, KEPT, { value: true });
}
