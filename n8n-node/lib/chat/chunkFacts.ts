// What a streamed chunk carries, as lengths the engine reads to decide whether it commits the
// call (text, a tool-call delta, reasoning): read from the chunk as LangChain's clients build it,
// never judged here.

/** The facts `Item.commits` takes, in its order. */
export interface ChunkFacts {
	text_chars: number;
	tool_call_chunks: number;
	reasoning_chars: number;
}

interface ChunkLike {
	content?: unknown;
	tool_call_chunks?: unknown[];
	additional_kwargs?: { reasoning_content?: unknown; reasoning?: { summary?: unknown } };
}

const REASONING_BLOCKS = ['thinking', 'reasoning', 'redacted_thinking'];

function chars(v: unknown): number {
	return typeof v === 'string' ? v.length : 0;
}

export function chunkFacts(chunk: unknown): ChunkFacts {
	const c = (chunk ?? {}) as ChunkLike;
	let text = 0;
	let reasoning = 0;
	if (typeof c.content === 'string') text = c.content.length;
	else if (Array.isArray(c.content)) {
		for (const b of c.content as Array<Record<string, unknown> | string>) {
			if (typeof b === 'string') text += b.length;
			else if (REASONING_BLOCKS.includes(String(b?.type)))
				reasoning += chars(b.thinking) + chars(b.reasoning) + chars(b.text) + chars(b.data);
			else text += chars(b?.text);
		}
	}
	const kw = c.additional_kwargs ?? {};
	reasoning += chars(kw.reasoning_content);
	const summary = kw.reasoning?.summary;
	if (Array.isArray(summary))
		for (const s of summary as Array<{ text?: unknown }>) reasoning += chars(s?.text);
	return {
		text_chars: text,
		tool_call_chunks: Array.isArray(c.tool_call_chunks) ? c.tool_call_chunks.length : 0,
		reasoning_chars: reasoning,
	};
}
