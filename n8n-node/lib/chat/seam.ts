// Where a continued answer meets the part the caller already has: the continuing model may repeat
// the last words of that part, or start the answer over, before it goes on. Its first chunks are
// held until the engine reads the seam (`Engine.seam`, src/facts/seam.rs: how many of their characters
// repeat what the caller has), then passed on with those cut, so the caller's stream reads as one
// answer. Text only; the chunks' other parts (usage, ids) pass as they came.
import { AIMessageChunk } from '@langchain/core/messages';

/** The engine's reading of the seam: how many of `next`'s first characters repeat `had`
 * (`undefined`: read on). */
export type ReadSeam = (had: string, next: string, ended: boolean) => number | undefined;

type Part = { type?: string; text?: unknown };

/** The text of a chunk's content: a string, or its text parts. */
export function chunkText(chunk: AIMessageChunk): string {
	const c = chunk.content as unknown;
	if (typeof c === 'string') return c;
	if (!Array.isArray(c)) return '';
	return (c as Array<Part | string>)
		.map((p) => (typeof p === 'string' ? p : isText(p) ? String(p.text ?? '') : ''))
		.join('');
}

const isText = (p: Part) => p?.type === 'text' || p?.type === 'text_delta';

/** `chunk` with the first `n` characters of its text dropped. */
function dropText(chunk: AIMessageChunk, n: number): AIMessageChunk {
	if (n <= 0) return chunk;
	const c = chunk.content as unknown;
	let left = n;
	const cut = (t: string) => {
		const k = Math.min(left, t.length);
		left -= k;
		return t.slice(k);
	};
	const content =
		typeof c === 'string'
			? cut(c)
			: (c as Array<Part | string>).map((p) =>
					typeof p === 'string'
						? cut(p)
						: isText(p)
							? { ...p, text: cut(String(p.text ?? '')) }
							: p,
				);
	return new AIMessageChunk({
		content: content as AIMessageChunk['content'],
		additional_kwargs: chunk.additional_kwargs,
		response_metadata: chunk.response_metadata,
		tool_call_chunks: chunk.tool_call_chunks,
		usage_metadata: chunk.usage_metadata,
		id: chunk.id,
	});
}

export class Seam {
	private held: AIMessageChunk[] = [];
	private text = '';
	private decided = false;

	/** `had`: the answer the caller has, which the chunks pushed here continue. */
	constructor(
		private readonly had: string,
		private readonly read: ReadSeam,
	) {}

	/** The chunks to hand over now for `chunk` (none while the seam is read). */
	push(chunk: AIMessageChunk): AIMessageChunk[] {
		if (this.decided) return [chunk];
		this.held.push(chunk);
		this.text += chunkText(chunk);
		const cut = this.read(this.had, this.text, false);
		return cut === undefined ? [] : this.release(cut);
	}

	/** At the stream's end: what is still held, its repeat cut. */
	end(): AIMessageChunk[] {
		return this.decided ? [] : this.release(this.read(this.had, this.text, true) ?? 0);
	}

	private release(repeat: number): AIMessageChunk[] {
		this.decided = true;
		let cut = repeat;
		const out: AIMessageChunk[] = [];
		for (const chunk of this.held) {
			const n = Math.min(cut, chunkText(chunk).length);
			cut -= n;
			out.push(dropText(chunk, n));
		}
		this.held = [];
		return out;
	}
}
