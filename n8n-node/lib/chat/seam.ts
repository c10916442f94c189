// Where a continued answer meets the part the caller already has: the continuing model may repeat
// the last words of that part, or start the answer over, before it goes on. Its first characters
// are held until the seam can be read, then what it repeats is cut, so the caller's stream reads
// as one answer. Text only; the chunks' other parts (usage, ids) pass as they came.
import { AIMessageChunk } from '@langchain/core/messages';

/** Characters of the continuation read before the seam is decided (unless it ends first). */
const WINDOW = 48;
/** The shortest repeat cut that is not whitespace: shorter ones may be the answer's own text. */
const MIN_REPEAT = 4;

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

/** How many of `next`'s first characters repeat what `had` ends with (or the whole of `had`,
 * when `next` starts the answer over). */
export function repeated(had: string, next: string, ended: boolean): number {
	if (had === '') return 0;
	if (next.startsWith(had)) return had.length; // started over
	if (ended && had.startsWith(next)) return next.length; // only repeated its beginning
	for (let k = Math.min(had.length, next.length); k > 0; k--) {
		const overlap = next.slice(0, k);
		if ((k >= MIN_REPEAT || overlap.trim() === '') && had.endsWith(overlap)) return k;
	}
	return 0;
}

export class Seam {
	private held: AIMessageChunk[] = [];
	private text = '';
	private decided = false;

	/** `had`: the answer the caller has, which the chunks pushed here continue. */
	constructor(private readonly had: string) {}

	/** The chunks to hand over now for `chunk` (none while the seam is read). */
	push(chunk: AIMessageChunk): AIMessageChunk[] {
		if (this.decided) return [chunk];
		this.held.push(chunk);
		this.text += chunkText(chunk);
		// Still the answer's own beginning (a restart, or a continuation that happens to begin
		// alike): read on until it goes past it or differs.
		const restarting = this.had.startsWith(this.text);
		return !restarting && this.text.length >= WINDOW ? this.release(false) : [];
	}

	/** At the stream's end: what is still held, its repeat cut. */
	end(): AIMessageChunk[] {
		return this.decided ? [] : this.release(true);
	}

	private release(ended: boolean): AIMessageChunk[] {
		this.decided = true;
		let cut = repeated(this.had, this.text, ended);
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
